// Package vfetchtest holds fakes for tests of verified reads (package
// vfetch and its users): objects as honest and dishonest sources serve them,
// and a response body paced by the clock, for testing/synctest bubbles.
package vfetchtest

import (
	"bytes"
	"context"
	"io"
	"time"

	"github.com/ronhq/ron/store"
	"github.com/ronhq/ron/store/verified"
)

// Object is what a source serves for one id: the body and the chunk-list
// document (GET /o/{b3}/chunks).
type Object struct {
	ID   store.ID
	Data []byte
	List []byte
}

// Honest serves data truthfully.
func Honest(data []byte) Object {
	l := verified.ListOf(data)
	return Object{ID: l.ID, Data: data, List: l.AppendJSON(nil)}
}

// Corrupt serves data's true list with the byte at off flipped in the body:
// the chunk holding it fails verification.
func Corrupt(data []byte, off int) Object {
	o := Honest(data)
	o.Data = bytes.Clone(data)
	o.Data[off] ^= 0xff
	return o
}

// SelfConsistent serves a body with the byte at off flipped and a chunk
// list matching those bytes, under the true id: every chunk verifies, only
// the whole hash can tell.
func SelfConsistent(data []byte, off int) Object {
	o := Corrupt(data, off)
	l := verified.ListOf(o.Data)
	l.ID = o.ID
	o.List = l.AppendJSON(nil)
	return o
}

// Paced is a response body that yields Data chunk by chunk (64 KiB),
// waiting Pause before each chunk (none when 0), and stalls after
// StallAfter bytes until Ctx ends (the request's context: a cancelled
// request unblocks it). Under testing/synctest the waits take fake time.
type Paced struct {
	Ctx        context.Context
	Data       []byte
	Pause      time.Duration
	StallAfter int
	off        int
}

// Read implements io.Reader; at most one chunk's remainder per call.
func (b *Paced) Read(p []byte) (int, error) {
	if b.off == len(b.Data) {
		return 0, io.EOF
	}
	if b.off >= b.StallAfter {
		<-b.Ctx.Done()
		return 0, b.Ctx.Err()
	}
	if b.off%store.ChunkSize == 0 && b.Pause > 0 {
		select {
		case <-time.After(b.Pause):
		case <-b.Ctx.Done():
			return 0, b.Ctx.Err()
		}
	}
	end := min(len(b.Data), b.StallAfter, (b.off/store.ChunkSize+1)*store.ChunkSize, b.off+len(p))
	n := copy(p, b.Data[b.off:end])
	b.off += n
	return n, nil
}

// Close implements io.Closer; it does nothing.
func (b *Paced) Close() error { return nil }
