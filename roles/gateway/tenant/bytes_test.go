package tenant

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ronhq/ron/httpx"
)

const mib = 1 << 20

// acquire returns id's state, released at the end of the test.
func acquire(t *testing.T, s *States, id ID) *State {
	t.Helper()
	st, err := s.Acquire(id)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Release(st) })
	return st
}

// charge calls WaitBytes and returns its error and the fake time it took.
func charge(s *States, st *State, n int, maxWait time.Duration) (time.Duration, error) {
	start := time.Now()
	err := s.WaitBytes(context.Background(), st, n, maxWait)
	return time.Since(start), err
}

// near reports whether d is within a millisecond of want.
func near(d, want time.Duration) bool {
	return d >= want-time.Millisecond && d <= want+time.Millisecond
}

func TestPacedReaderRate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newStates(t, 4, fixed(Params{RPS: 1, Weight: 1, MaxBytesPerS: mib}))
		st := acquire(t, s, "acme")
		src := bytes.Repeat([]byte("x"), 3*mib+12345)
		start := time.Now()
		r := s.PacedReader(context.Background(), st, bytes.NewReader(src), 5*time.Second)
		got, err := io.ReadAll(r)
		if err != nil || !bytes.Equal(got, src) {
			t.Fatalf("read %d bytes, err %v", len(got), err)
		}
		// The first MiB is the burst; the rest is paced at 1 MiB/s.
		want := time.Duration(float64(len(src)-mib) / mib * float64(time.Second))
		if el := time.Since(start); !near(el, want) {
			t.Fatalf("3 MiB upload took %v, want %v", el, want)
		}
		if r.(*Paced).Err() != nil {
			t.Fatalf("Err = %v", r.(*Paced).Err())
		}
	})
}

func TestPacedReaderChunks(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newStates(t, 4, fixed(Params{RPS: 1, Weight: 1, MaxBytesPerS: mib}))
		st := acquire(t, s, "acme")
		r := s.PacedReader(context.Background(), st, bytes.NewReader(make([]byte, 200<<10)), time.Second)
		buf := make([]byte, 1<<20)
		if n, err := r.Read(buf); n != ByteChunk || err != nil {
			t.Fatalf("Read = %d, %v; want one 64 KiB chunk", n, err)
		}
	})
}

func TestByteBurst(t *testing.T) {
	cases := []struct {
		name  string
		bps   int64
		burst int
	}{
		{"small quota gets 1 MiB", 1000, mib},
		{"large quota is its own burst", 4 * mib, 4 * mib},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s := newStates(t, 4, fixed(Params{RPS: 1, Weight: 1, MaxBytesPerS: c.bps}))
				st := acquire(t, s, "acme")
				for sent := 0; sent < c.burst; sent += ByteChunk {
					if d, err := charge(s, st, ByteChunk, 0); err != nil || d != 0 {
						t.Fatalf("burst chunk at %d: err %v after %v", sent, err, d)
					}
				}
				d, err := charge(s, st, 1000, time.Hour)
				if want := time.Duration(1000 / float64(c.bps) * float64(time.Second)); err != nil || !near(d, want) {
					t.Fatalf("after the burst: err %v after %v, want %v", err, d, want)
				}
			})
		})
	}
}

func TestWaitBytesTooLong(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newStates(t, 4, fixed(Params{RPS: 1, Weight: 1, MaxBytesPerS: 1000}))
		st := acquire(t, s, "acme")
		if _, err := charge(s, st, mib, 0); err != nil { // empties the 1 MiB burst
			t.Fatal(err)
		}
		d, err := charge(s, st, ByteChunk, 5*time.Second) // would wait 65.5 s
		he := wantStatus(t, err, http.StatusTooManyRequests)
		if he.Code != httpx.CodeRateLimited || he.Details["limit"] != "tenant_bytes" || he.RetryAfter != 66 || d != 0 {
			t.Fatalf("got %+v after %v", he, d)
		}
		// The refused chunk was not charged: 1000 bytes wait one second.
		if d, err := charge(s, st, 1000, 5*time.Second); err != nil || !near(d, time.Second) {
			t.Fatalf("next chunk: err %v after %v", err, d)
		}
		// A paced reader fails the same way and stays failed.
		r := s.PacedReader(context.Background(), st, bytes.NewReader(make([]byte, ByteChunk)), 5*time.Second)
		buf := make([]byte, ByteChunk)
		for range 2 {
			if n, err := r.Read(buf); n != 0 || httpx.AsError(err).Status != http.StatusTooManyRequests {
				t.Fatalf("Read = %d, %v", n, err)
			}
		}
		if httpx.AsError(r.(*Paced).Err()).Details["limit"] != "tenant_bytes" {
			t.Fatalf("Err = %v", r.(*Paced).Err())
		}
	})
}

func TestWaitBytesRetryAfterAtLeastOne(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newStates(t, 4, fixed(Params{RPS: 1, Weight: 1, MaxBytesPerS: mib}))
		st := acquire(t, s, "acme")
		if _, err := charge(s, st, mib, 0); err != nil {
			t.Fatal(err)
		}
		he := wantStatus(t, func() error { _, err := charge(s, st, 1024, 0); return err }(), 429)
		if he.RetryAfter != 1 {
			t.Fatalf("Retry-After %d, want 1", he.RetryAfter)
		}
	})
}

func TestWaitBytesCancel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newStates(t, 4, fixed(Params{RPS: 1, Weight: 1, MaxBytesPerS: mib}))
		st := acquire(t, s, "acme")
		if _, err := charge(s, st, mib, 0); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- s.WaitBytes(ctx, st, ByteChunk, time.Hour) }()
		time.Sleep(10 * time.Millisecond) // bubble time: the waiter is parked on its timer
		synctest.Wait()
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Fatalf("WaitBytes = %v, want context.Canceled", err)
		}
		// The cancelled chunk gave its bytes back: 64 KiB is due after the
		// 62.5 ms it takes to earn them, less the 10 ms already earned.
		if d, err := charge(s, st, ByteChunk, time.Hour); err != nil || !near(d, 52500*time.Microsecond) {
			t.Fatalf("after cancel: err %v after %v", err, d)
		}
	})
}

func TestWaitBytesNoQuota(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newStates(t, 4, fixed(Params{RPS: 1, Weight: 1}))
		st := acquire(t, s, "acme")
		start := time.Now()
		for range 100 {
			if err := s.WaitBytes(context.Background(), st, ByteChunk, 0); err != nil {
				t.Fatal(err)
			}
		}
		src := make([]byte, 10*mib)
		got, err := io.ReadAll(s.PacedReader(context.Background(), st, bytes.NewReader(src), 0))
		if err != nil || len(got) != len(src) || time.Since(start) != 0 {
			t.Fatalf("read %d, err %v, took %v", len(got), err, time.Since(start))
		}
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if err := s.WaitBytes(ctx, st, 0, 0); err != nil {
			t.Fatalf("zero bytes: %v", err)
		}
	})
}

func TestByteQuotaLive(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newStates(t, 4, fixed(Params{RPS: 1, Weight: 1, MaxBytesPerS: 2 * mib}))
		st := acquire(t, s, "acme")
		// Lowering the quota clamps the full 2 MiB bucket to the new 1 MiB burst.
		if err := s.SetParams(fixed(Params{RPS: 1, Weight: 1, MaxBytesPerS: mib})); err != nil {
			t.Fatal(err)
		}
		if d, err := charge(s, st, mib+ByteChunk, time.Hour); err != nil || !near(d, 62500*time.Microsecond) {
			t.Fatalf("after lowering: err %v after %v", err, d)
		}
		// Turning the quota off lets everything through at once.
		if err := s.SetParams(fixed(Params{RPS: 1, Weight: 1})); err != nil {
			t.Fatal(err)
		}
		if d, err := charge(s, st, 10*mib, 0); err != nil || d != 0 {
			t.Fatalf("quota off: err %v after %v", err, d)
		}
		// Turning it back on starts with a full bucket.
		if err := s.SetParams(fixed(Params{RPS: 1, Weight: 1, MaxBytesPerS: 1000})); err != nil {
			t.Fatal(err)
		}
		if d, err := charge(s, st, mib, 0); err != nil || d != 0 {
			t.Fatalf("quota back on: err %v after %v", err, d)
		}
		wantStatus(t, func() error { _, err := charge(s, st, ByteChunk, time.Second); return err }(), 429)
	})
}

func TestWaitBytesConcurrentUploadsShareTheQuota(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newStates(t, 4, fixed(Params{RPS: 1, Weight: 1, MaxBytesPerS: mib}))
		st := acquire(t, s, "acme")
		start := time.Now()
		done := make(chan error, 2)
		for range 2 {
			go func() {
				_, err := io.Copy(io.Discard, s.PacedReader(context.Background(), st, bytes.NewReader(make([]byte, 2*mib)), time.Minute))
				done <- err
			}()
		}
		for range 2 {
			if err := <-done; err != nil {
				t.Fatal(err)
			}
		}
		if el := time.Since(start); !near(el, 3*time.Second) { // 4 MiB − 1 MiB burst at 1 MiB/s
			t.Fatalf("two 2 MiB uploads took %v, want 3s", el)
		}
	})
}
