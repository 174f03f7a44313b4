package edgecache

import (
	"context"
	"io"
	"os"
)

// Follower reads a Fill while it grows. One goroutine uses a Follower (its
// ReadAt, Size and Close are not safe for concurrent use); each reader gets
// its own from Fill.Follow.
type Follower struct {
	f       *Fill
	shared  bool     // holds a reference to f.file
	own     *os.File // disk: opened after the fill's temp file was closed
	openErr error
	closed  bool
}

// Follow returns a reader of the fill's bytes, valid until its Close (also
// after the fill is committed, or evicted again).
func (f *Fill) Follow() *Follower {
	r := &Follower{f: f}
	f.mu.Lock()
	if f.fileRefs > 0 {
		f.fileRefs++
		r.shared = true
	}
	final := f.final
	f.mu.Unlock()
	if !f.c.Memory() && !r.shared && final != "" {
		r.own, r.openErr = os.Open(final)
	}
	return r
}

// ReadAt reads bytes at off into p. It waits until at least one byte at off
// exists and returns what is available then (n > 0, nil error), like
// io.Reader's Read; at the end of a committed fill it returns io.EOF (with
// n ≥ 0); when the fill is aborted, the abort error (ErrMismatch, ErrSize,
// ErrAborted, …); when ctx ends first, ctx's error.
func (r *Follower) ReadAt(ctx context.Context, p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, errNegativeOffset
	}
	for {
		v := r.f.observe()
		switch {
		case v.state == aborted:
			return 0, v.err
		case len(p) == 0:
			return 0, nil
		case off < v.n:
			return r.read(p, off, v.n, v.state == complete, v.data)
		case v.state == complete:
			return 0, io.EOF
		}
		select {
		case <-v.wake:
		case <-ctx.Done():
			return 0, ctx.Err()
		}
	}
}

// read copies available bytes [off, n) into p.
func (r *Follower) read(p []byte, off, n int64, done bool, view *chunkedData) (int, error) {
	p = p[:min(int64(len(p)), n-off)]
	var k int
	var err error
	switch {
	case view != nil:
		k = view.readAt(p, off, n)
	case r.openErr != nil:
		return 0, r.openErr
	case r.own != nil:
		k, err = r.own.ReadAt(p, off)
	case r.shared:
		k, err = r.f.file.ReadAt(p, off)
	default:
		return 0, ErrAborted
	}
	if err == nil && done && off+int64(k) == n {
		err = io.EOF
	}
	return k, err
}

// fillView is a fill's published state.
type fillView struct {
	n     int64
	state fillState
	err   error           // the abort error
	wake  <-chan struct{} // while writing: closed at the next change
	data  *chunkedData    // memory mode: the first n bytes
}

// observe returns the fill's published state.
func (f *Fill) observe() fillView {
	f.mu.Lock()
	defer f.mu.Unlock()
	v := fillView{n: f.n, state: f.state, err: f.err}
	if f.mem != nil {
		v.data = f.mem.snapshot(f.n)
	}
	if f.state == writing {
		f.waiters++
		v.wake = f.wake
	}
	return v
}

// Size returns the body length: the size hint when one was given, else it
// waits for the commit (or the abort error, or ctx's error).
func (r *Follower) Size(ctx context.Context) (int64, error) {
	if r.f.hint >= 0 {
		return r.f.hint, nil
	}
	for {
		v := r.f.observe()
		switch v.state {
		case complete:
			return v.n, nil
		case aborted:
			return 0, v.err
		}
		select {
		case <-v.wake:
		case <-ctx.Done():
			return 0, ctx.Err()
		}
	}
}

// Close releases the follower's handle on the fill's bytes. Idempotent.
func (r *Follower) Close() {
	if r.closed {
		return
	}
	r.closed = true
	if r.shared {
		r.f.releaseFile()
	}
	if r.own != nil {
		r.own.Close()
	}
}
