package edgecache

import (
	"os"
	"sync"

	"github.com/zeebo/blake3"

	"github.com/ronhq/ron/store"
)

type fillState uint8

const (
	writing  fillState = iota
	complete           // all bytes written and checked; followers see the end
	aborted
)

// Fill is one body being written into the cache. One goroutine writes
// (Write, then CommitObject, CommitAsset or Abort); any number of Followers
// read it while it grows.
type Fill struct {
	c    *Cache
	hint int64
	h    *blake3.Hasher // writer-owned; nil for a proven fill

	mu       sync.Mutex
	n        int64 // published length
	state    fillState
	err      error         // why it was aborted
	wake     chan struct{} // closed and replaced when n or state change
	waiters  int
	mem      *chunkedData // memory mode
	file     *os.File     // disk mode: the temp file (shared by followers)
	tmp      string       // its path while it is still a temp file
	fileRefs int          // writer + followers holding file
	final    string       // disk: the blob path after a commit
}

// NewFill starts a fill. sizeHint is the body length when known (−1 when
// not); a fill whose length differs from a known hint is refused (ErrSize).
// On disk the bytes go to a temp file under blobs/tmp, in memory to a
// growing chunk list. The cache hashes the bytes as they are written to
// name the blob (CommitAsset) or check the id (CommitObject). ErrClosed
// after Close.
func (c *Cache) NewFill(sizeHint int64) (*Fill, error) {
	return c.newFill(sizeHint, blake3.New())
}

// NewProvenFill is NewFill for an /o object whose writer proves every byte
// it writes against the id it will commit under (the verified transfer of
// docs/storage.md §4.1: each 64 KiB group before it is written): the cache
// does not hash the bytes again, and CommitObject takes the id as proven.
// Such a fill can only be committed as an object (CommitAsset fails with
// ErrUnhashed).
func (c *Cache) NewProvenFill(sizeHint int64) (*Fill, error) {
	return c.newFill(sizeHint, nil)
}

func (c *Cache) newFill(sizeHint int64, h *blake3.Hasher) (*Fill, error) {
	c.mu.Lock()
	closed := c.closed
	c.mu.Unlock()
	if closed {
		return nil, ErrClosed
	}
	if sizeHint < 0 {
		sizeHint = -1
	}
	f := &Fill{c: c, hint: sizeHint, h: h, wake: make(chan struct{})}
	if c.Memory() {
		f.mem = &chunkedData{}
		return f, nil
	}
	file, err := os.CreateTemp(c.tmpDir(), "fill-*")
	if err != nil {
		return nil, err
	}
	f.file, f.tmp, f.fileRefs = file, file.Name(), 1
	return f, nil
}

// Write appends p. It fails with the abort error once the fill was
// aborted, ErrFinished after a commit, and ErrSize (aborting the fill) when
// the body grows past a known size hint.
func (f *Fill) Write(p []byte) (int, error) {
	f.mu.Lock()
	if err := f.writableLocked(); err != nil {
		f.mu.Unlock()
		return 0, err
	}
	if f.hint >= 0 && f.n+int64(len(p)) > f.hint {
		f.mu.Unlock()
		f.Abort(ErrSize)
		return 0, ErrSize
	}
	f.mu.Unlock()
	if f.mem != nil {
		return f.writeMem(p)
	}
	return f.writeFile(p)
}

func (f *Fill) writableLocked() error {
	switch f.state {
	case aborted:
		return f.err
	case complete:
		return ErrFinished
	}
	return nil
}

// writeMem copies p into the chunk list; bytes beyond the published length
// are the writer's alone, so the copy happens outside the lock.
func (f *Fill) writeMem(p []byte) (int, error) {
	done := 0
	for done < len(p) {
		f.mu.Lock()
		if f.state != writing {
			err := f.writableLocked()
			f.mu.Unlock()
			return done, err
		}
		dst := f.mem.room(f.n, f.hint)
		f.mu.Unlock()
		k := copy(dst, p[done:])
		f.hash(p[done : done+k])
		done += k
		f.publish(int64(k))
	}
	return done, nil
}

func (f *Fill) writeFile(p []byte) (int, error) {
	n, err := f.file.Write(p)
	f.hash(p[:n])
	f.publish(int64(n))
	if err != nil {
		f.Abort(err)
	}
	return n, err
}

// hash adds written bytes to the hash, unless the fill is proven.
func (f *Fill) hash(p []byte) {
	if f.h != nil {
		_, _ = f.h.Write(p)
	}
}

// publish makes k more bytes visible to followers.
func (f *Fill) publish(k int64) {
	if k == 0 {
		return
	}
	f.mu.Lock()
	f.n += k
	f.wakeLocked()
	f.mu.Unlock()
}

func (f *Fill) wakeLocked() {
	if f.waiters > 0 {
		close(f.wake)
		f.wake = make(chan struct{})
		f.waiters = 0
	}
}

// Written returns the number of bytes written so far.
func (f *Fill) Written() int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.n
}

// Abort ends the fill without storing it: the temp data is removed and
// every follower's next (or pending) ReadAt and Size return err (ErrAborted
// when nil). It is a no-op after a commit began or a previous Abort.
func (f *Fill) Abort(err error) {
	if err == nil {
		err = ErrAborted
	}
	f.mu.Lock()
	if f.state != writing {
		f.mu.Unlock()
		return
	}
	f.state, f.err = aborted, err
	f.mem = nil
	f.wakeLocked()
	f.mu.Unlock()
	f.dropTemp()
}

// dropTemp removes the temp file and releases the writer's handle.
func (f *Fill) dropTemp() {
	if f.file == nil {
		return
	}
	if err := os.Remove(f.tmp); err != nil {
		f.c.log.Debug().Err(err).Msg("edgecache: removing fill temp file")
	}
	f.releaseFile()
}

// finishTemp ends the writer's use of the temp file after a commit: the
// file was renamed to final (tmp == "") or the blob existed already and
// the temp file is removed. Later followers open final.
func (f *Fill) finishTemp(final string) {
	if f.tmp != "" {
		if err := os.Remove(f.tmp); err != nil {
			f.c.log.Debug().Err(err).Msg("edgecache: removing fill temp file")
		}
	}
	f.mu.Lock()
	f.final = final
	f.mu.Unlock()
	f.releaseFile()
}

// releaseFile drops one reference to the shared file; the last closes it.
func (f *Fill) releaseFile() {
	f.mu.Lock()
	f.fileRefs--
	last := f.fileRefs == 0
	f.mu.Unlock()
	if last {
		f.file.Close()
	}
}

// sum is the id of the written bytes: their hash, or for a proven fill the
// id its writer proved them against (want; ErrUnhashed without one).
func (f *Fill) sum(want *store.ID) (store.ID, error) {
	var id store.ID
	switch {
	case f.h != nil:
		copy(id[:], f.h.Sum(nil))
	case want == nil:
		return id, ErrUnhashed
	default:
		id = *want
	}
	return id, nil
}

// seal checks the fill's length and hash and, when they are right, marks it
// complete so followers see its end. want (if not nil) is the id the bytes
// must hash to. Failures abort the fill.
func (f *Fill) seal(want *store.ID) (store.ID, int64, error) {
	f.mu.Lock()
	err, n := f.writableLocked(), f.n
	f.mu.Unlock()
	if err != nil {
		return store.ID{}, 0, err
	}
	if f.hint >= 0 && n != f.hint {
		f.Abort(ErrSize)
		return store.ID{}, 0, ErrSize
	}
	id, err := f.sum(want)
	if err != nil {
		f.Abort(err)
		return store.ID{}, 0, err
	}
	if want != nil && id != *want {
		f.Abort(ErrMismatch)
		return store.ID{}, 0, ErrMismatch
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.writableLocked(); err != nil {
		return store.ID{}, 0, err
	}
	f.state = complete
	if f.mem != nil {
		f.mem = f.mem.final(n)
	}
	f.wakeLocked()
	return id, n, nil
}
