package storage

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/roles/storage/repair"
	"github.com/ronhq/ron/runtime/cluster"
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
	b := newReplicaBody(g, func() { released.Add(1) })
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
	b := newReplicaBody(io.LimitReader(nil, 0), func() { released.Add(1) })
	_ = b.Close()
	_ = b.Close()
	if n := released.Load(); n != 1 {
		t.Fatalf("released %d times, want 1", n)
	}
}

// TestReplicaEarlyAnswer: a target that answers 507 after a part of a large
// body makes net/http read the body after PutReplica returned. The local
// object (its pooled chunk buffer, its file) must outlive that late read:
// under -race, both the synchronous copy and a repair push used to release
// it under the transport's reader.
func TestReplicaEarlyAnswer(t *testing.T) {
	keys := newKeys(t)
	s, ms := startRepairRole(t, keys, "fs")
	early := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.CopyN(io.Discard, r.Body, 100<<10)
		httpx.WriteError(w, "", httpx.NewError(http.StatusInsufficientStorage, httpx.CodeInsufficientStorage, "full"))
	}))
	defer early.Close()
	ms.Set(cluster.NewView("s", []cluster.Member{repairMember("s", s.base), repairMember("t", early.URL)}, repairT0))
	body := make([]byte, 16<<20)
	for i := range body {
		body[i] = byte(i * 7)
	}
	id := putLocal(t, s, body)
	for range 8 {
		_, err := repairExec{s.Role}.Push(context.Background(), id, early.URL, repair.NewMeter(repair.NewPacer(1<<30, nil), nil))
		if err == nil {
			t.Fatal("push to a full target succeeded")
		}
		if _, err := s.copyTo(context.Background(), early.URL, id); err == nil {
			t.Fatal("copy to a full target succeeded")
		}
	}
	if !engineHolds(t, s.Role, id) {
		t.Fatal("the local copy is gone")
	}
}
