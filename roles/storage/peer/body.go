package peer

import (
	"errors"
	"io"
	"sync"
)

// errBodyClosed fails a read of a replica body after its PUT returned.
var errBodyClosed = errors.New("storage: replica body closed")

// ReplicaBody is the body of a PutReplica read from a local object (a
// write's synchronous copy, a repair push).
// net/http may go on reading a request body after Client.Do returned (the
// target answered early, e.g. 507 or 409, while the body was still being
// sent), so the object must not be released under that late reader: Close
// marks the body closed and runs release at once when no Read is running,
// else when that Read returns; every Read after Close fails. release runs
// exactly once. Reads come from one goroutine at a time (the transport's).
type ReplicaBody struct {
	r       io.Reader
	release func()

	mu       sync.Mutex
	reading  bool
	closed   bool
	released bool
}

// NewReplicaBody wraps r; release frees what r reads from.
func NewReplicaBody(r io.Reader, release func()) *ReplicaBody {
	return &ReplicaBody{r: r, release: release}
}

// Read reads from the wrapped reader unless the body was closed.
func (b *ReplicaBody) Read(p []byte) (int, error) {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return 0, errBodyClosed
	}
	b.reading = true
	b.mu.Unlock()
	n, err := b.r.Read(p)
	b.mu.Lock()
	b.reading = false
	late := b.closed
	b.mu.Unlock()
	if late {
		b.releaseOnce()
	}
	return n, err
}

// Close ends the body; it is idempotent and never blocks on a Read.
func (b *ReplicaBody) Close() error {
	b.mu.Lock()
	b.closed = true
	now := !b.reading
	b.mu.Unlock()
	if now {
		b.releaseOnce()
	}
	return nil
}

func (b *ReplicaBody) releaseOnce() {
	b.mu.Lock()
	first := !b.released
	b.released = true
	b.mu.Unlock()
	if first {
		b.release()
	}
}
