package edgecache

import (
	"bytes"
	"errors"
	"io"
	"os"
	"testing"

	"github.com/ronhq/ron/store"
)

// diskBlob returns the *fileBlob of a hit on id.
func (e *env) diskBlob(id store.ID) *fileBlob {
	e.t.Helper()
	b, _, ok := e.c.Object(id)
	if !ok {
		e.t.Fatal("miss")
	}
	fb, ok := b.(*fileBlob)
	if !ok {
		e.t.Fatalf("a %T on disk", b)
	}
	return fb
}

// TestIdleHandles: a closed Blob's handle serves the next hit of the blob;
// concurrent Blobs get their own handles; the idle handles stay within
// maxIdlePerBlob and are closed when the blob goes and at Close.
func TestIdleHandles(t *testing.T) {
	e := newEnv(t, diskMode, 1<<20)
	data := body(300, 5000)
	id := e.putObject(data, "")
	first := e.diskBlob(id)
	f := first.f
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	if err := first.Close(); !errors.Is(err, os.ErrClosed) {
		t.Fatalf("second Close = %v", err)
	}
	again := e.diskBlob(id)
	if again.f != f {
		t.Fatal("the idle handle was not reused")
	}
	other := e.diskBlob(id)
	if other.f == again.f {
		t.Fatal("two open Blobs share a handle")
	}
	var open []*fileBlob
	for range maxIdlePerBlob + 3 {
		open = append(open, e.diskBlob(id))
	}
	for _, b := range append(open, again, other) {
		_ = b.Close()
	}
	e.c.mu.Lock()
	idle := append([]*os.File(nil), e.c.blobs[id].idle...)
	n := e.c.idleFiles
	e.c.mu.Unlock()
	if len(idle) != maxIdlePerBlob || n != maxIdlePerBlob {
		t.Fatalf("%d idle handles (%d counted), want %d", len(idle), n, maxIdlePerBlob)
	}

	e.c.SetLimits(1, 0) // evicts the object
	for _, f := range idle {
		if _, err := f.Stat(); !errors.Is(err, os.ErrClosed) {
			t.Fatalf("idle handle of an evicted blob still open: %v", err)
		}
	}
	if e.c.idleFiles != 0 {
		t.Fatalf("%d idle handles counted after the eviction", e.c.idleFiles)
	}
}

// TestIdleHandlesClosedAtClose: Close closes the idle handles; a Blob
// closed after Close closes its own.
func TestIdleHandlesClosedAtClose(t *testing.T) {
	e := newEnv(t, diskMode, 1<<20)
	id := e.putObject(body(301, 100), "")
	b := e.diskBlob(id)
	held := e.diskBlob(id)
	_ = b.Close()
	if err := e.c.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := b.f.Stat(); !errors.Is(err, os.ErrClosed) {
		t.Fatal("idle handle open after Close")
	}
	if _, err := held.ReadAt(make([]byte, 10), 0); err != nil {
		t.Fatalf("a Blob open across Close: %v", err)
	}
	_ = held.Close()
	if _, err := held.f.Stat(); !errors.Is(err, os.ErrClosed) {
		t.Fatal("a Blob closed after Close kept its handle")
	}
}

// TestSection: a disk Blob gives sections as *io.LimitedReader over its
// own file, positioned, with bad bounds refused.
func TestSection(t *testing.T) {
	e := newEnv(t, diskMode, 1<<20)
	data := body(302, 10_000)
	id := e.putObject(data, "")
	b := e.diskBlob(id)
	defer b.Close()
	rows := []struct {
		off, n int64
		bad    bool
	}{
		{0, 10_000, false}, {9_000, 1_000, false}, {123, 4567, false}, {0, 0, false},
		{-1, 10, true}, {9_999, 2, true}, {0, 10_001, true}, {5, -1, true},
	}
	for _, row := range rows {
		r, err := b.Section(row.off, row.n)
		if row.bad {
			if err == nil {
				t.Errorf("Section(%d, %d) accepted", row.off, row.n)
			}
			continue
		}
		lr, ok := r.(*io.LimitedReader)
		if err != nil || !ok || lr.R != b.f {
			t.Fatalf("Section(%d, %d) = %T, %v", row.off, row.n, r, err)
		}
		got, _ := io.ReadAll(r)
		if !bytes.Equal(got, data[row.off:row.off+row.n]) {
			t.Errorf("Section(%d, %d): wrong bytes", row.off, row.n)
		}
	}
}

// TestSlices: a memory Blob gives its stored slices, across chunk
// boundaries, without copying.
func TestSlices(t *testing.T) {
	var d chunkedData
	data := body(303, 3*minChunk+100)
	for n := int64(0); n < int64(len(data)); {
		room := d.room(n, -1)
		n += int64(copy(room, data[n:]))
	}
	b := &memBlob{d: d.final(int64(len(data))), size: int64(len(data))}
	rows := []struct{ off, n int64 }{
		{0, int64(len(data))}, {minChunk - 10, 20}, {minChunk, minChunk}, {5, 0}, {int64(len(data)) - 1, 10},
	}
	for _, row := range rows {
		var got []byte
		for _, s := range b.Slices(row.off, row.n) {
			got = append(got, s...)
		}
		want := data[row.off:min(row.off+row.n, int64(len(data)))]
		if !bytes.Equal(got, want) {
			t.Errorf("Slices(%d, %d): %d bytes, want %d", row.off, row.n, len(got), len(want))
		}
	}
}
