package vfetchtest

import (
	"bytes"
	"context"
	"errors"
	"io"
	"testing"
	"testing/synctest"
	"time"

	"go.uber.org/goleak"

	"github.com/ronhq/ron/store"
	"github.com/ronhq/ron/store/storetest"
	"github.com/ronhq/ron/store/verified"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// read verifies o's body against o's list: the bytes released and the
// reader's final error.
func read(t *testing.T, o Object) ([]byte, error) {
	l, err := verified.ParseList(o.List, o.ID)
	if err != nil {
		t.Fatal(err)
	}
	var got bytes.Buffer
	_, err = verified.NewReader(bytes.NewReader(o.Data), l, 0, l.Count()-1, true).WriteTo(&got)
	return got.Bytes(), err
}

func TestObjects(t *testing.T) {
	data := storetest.Pattern(2*store.ChunkSize + 3)
	if got, err := read(t, Honest(data)); err != nil || !bytes.Equal(got, data) || Honest(data).ID != store.Sum(data) {
		t.Fatalf("honest: %v, %d bytes", err, len(got))
	}
	if got, err := read(t, Corrupt(data, store.ChunkSize+1)); !errors.Is(err, verified.ErrMismatch) || len(got) != store.ChunkSize {
		t.Fatalf("corrupt: %v after %d bytes", err, len(got))
	}
	if got, err := read(t, SelfConsistent(data, 5)); !errors.Is(err, verified.ErrMismatch) || len(got) != 2*store.ChunkSize {
		t.Fatalf("self-consistent: %v after %d bytes", err, len(got))
	}
}

func TestPaced(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		data := storetest.Pattern(3 * store.ChunkSize)
		t0 := time.Now()
		got, err := io.ReadAll(&Paced{Ctx: t.Context(), Data: data, Pause: time.Second, StallAfter: len(data)})
		if err != nil || !bytes.Equal(got, data) || time.Since(t0) != 3*time.Second {
			t.Fatalf("%v, %d bytes after %v", err, len(got), time.Since(t0))
		}
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
		defer cancel()
		got, err = io.ReadAll(&Paced{Ctx: ctx, Data: data, StallAfter: 100})
		if !errors.Is(err, context.DeadlineExceeded) || len(got) != 100 || time.Since(t0) != 8*time.Second {
			t.Fatalf("stall: %v, %d bytes after %v", err, len(got), time.Since(t0))
		}
	})
}
