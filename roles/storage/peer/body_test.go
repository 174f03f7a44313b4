package peer

import (
	"errors"
	"io"
	"sync/atomic"
	"testing"
)

// gateReader blocks each Read until release is closed.
type gateReader struct {
	entered chan struct{}
	release chan struct{}
}

func (g *gateReader) Read(p []byte) (int, error) {
	close(g.entered)
	<-g.release
	return copy(p, "x"), nil
}

// TestReplicaBodyLateRead: a Close while the transport is inside Read
// releases the object only once that Read returned; a Read after Close
// fails; release runs once.
func TestReplicaBodyLateRead(t *testing.T) {
	g := &gateReader{entered: make(chan struct{}), release: make(chan struct{})}
	var released atomic.Int32
	b := NewReplicaBody(g, func() { released.Add(1) })
	done := make(chan error, 1)
	go func() {
		_, err := b.Read(make([]byte, 4))
		done <- err
	}()
	<-g.entered
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if n := released.Load(); n != 0 {
		t.Fatalf("released %d times while a Read was running", n)
	}
	close(g.release)
	if err := <-done; err != nil {
		t.Fatalf("the running Read failed: %v", err)
	}
	if n := released.Load(); n != 1 {
		t.Fatalf("released %d times after the Read, want 1", n)
	}
	if _, err := b.Read(make([]byte, 4)); !errors.Is(err, errBodyClosed) {
		t.Fatalf("Read after Close: %v", err)
	}
	_ = b.Close()
	if n := released.Load(); n != 1 {
		t.Fatalf("released %d times after a second Close, want 1", n)
	}
}

// TestReplicaBodyCloseIdle: Close with no Read running releases at once.
func TestReplicaBodyCloseIdle(t *testing.T) {
	var released atomic.Int32
	b := NewReplicaBody(io.LimitReader(nil, 0), func() { released.Add(1) })
	_ = b.Close()
	_ = b.Close()
	if n := released.Load(); n != 1 {
		t.Fatalf("released %d times, want 1", n)
	}
}
