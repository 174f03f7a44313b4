package objects

import (
	"sync"

	"github.com/ronhq/ron/store"
)

// copyBuf is the buffer of one copy to a client: one chunk.
type copyBuf = [store.ChunkSize]byte

var copyBufs = sync.Pool{New: func() any { return new(copyBuf) }}

func getBuf() *copyBuf  { return copyBufs.Get().(*copyBuf) }
func putBuf(b *copyBuf) { copyBufs.Put(b) }
