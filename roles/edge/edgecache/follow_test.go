package edgecache

import (
	"bytes"
	"context"
	"errors"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ronhq/ron/store"
)

// TestManyFollowers: 100 followers read one fill while it grows; every one
// gets exactly the committed bytes.
func TestManyFollowers(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			e := newEnv(t, m, 64<<20)
			b := body(70, 262_147)
			f, err := e.c.NewFill(-1)
			if err != nil {
				t.Fatal(err)
			}
			var wg sync.WaitGroup
			errs := make(chan error, 100)
			for range 100 {
				r := f.Follow()
				wg.Go(func() {
					defer r.Close()
					got, err := readFollower(context.Background(), r)
					if err == nil && !bytes.Equal(got, b) {
						err = errors.New("follower got other bytes")
					}
					errs <- err
				})
			}
			for i := 0; i < len(b); i += 7919 {
				if _, err := f.Write(b[i:min(i+7919, len(b))]); err != nil {
					t.Fatal(err)
				}
			}
			if err := f.CommitObject(store.Sum(b), ""); err != nil {
				t.Fatal(err)
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				if err != nil {
					t.Fatal(err)
				}
			}
			e.wantObject(store.Sum(b), b, "")
		})
	}
}

// TestFollowerWaits: a follower blocks until bytes arrive, returns what is
// there, and stops at its context's deadline.
func TestFollowerWaits(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				e := newEnv(t, m, 1<<20)
				f, _ := e.c.NewFill(-1)
				r := f.Follow()
				defer r.Close()
				got := make(chan int, 1)
				go func() {
					n, _ := r.ReadAt(context.Background(), make([]byte, 100), 0)
					got <- n
				}()
				synctest.Wait()
				select {
				case <-got:
					t.Fatal("ReadAt returned before any byte existed")
				default:
				}
				f.Write([]byte("hello"))
				if n := <-got; n != 5 {
					t.Fatalf("ReadAt = %d bytes, want 5 (what was there)", n)
				}
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
				defer cancel()
				start := time.Now()
				if _, err := r.ReadAt(ctx, make([]byte, 1), 5); !errors.Is(err, context.DeadlineExceeded) {
					t.Fatalf("ReadAt past the written end = %v", err)
				}
				if _, err := r.Size(ctx); !errors.Is(err, context.DeadlineExceeded) {
					t.Fatalf("Size = %v", err)
				}
				if d := time.Since(start); d != 2*time.Second {
					t.Fatalf("waited %v", d)
				}
				sized := make(chan int64, 1)
				go func() {
					n, _ := r.Size(context.Background())
					sized <- n
				}()
				synctest.Wait()
				f.Write([]byte(" world"))
				if err := f.CommitAsset("k", stored("")); err != nil {
					t.Fatal(err)
				}
				if n := <-sized; n != 11 {
					t.Fatalf("Size after commit = %d", n)
				}
			})
		})
	}
}

// TestAbortWakesFollowers: followers blocked in ReadAt get the abort error.
func TestAbortWakesFollowers(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				e := newEnv(t, m, 1<<20)
				f, _ := e.c.NewFill(-1)
				f.Write([]byte("part"))
				errs := make(chan error, 10)
				for range 10 {
					r := f.Follow()
					go func() {
						defer r.Close()
						_, err := readFollower(context.Background(), r)
						errs <- err
					}()
				}
				synctest.Wait()
				boom := errors.New("boom")
				f.Abort(boom)
				for range 10 {
					if err := <-errs; !errors.Is(err, boom) {
						t.Fatalf("follower = %v", err)
					}
				}
			})
		})
	}
}

// TestConcurrentUse mixes fills, hits, variants and limit changes (run
// with -race).
func TestConcurrentUse(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			e := newEnv(t, m, 200_000)
			var wg sync.WaitGroup
			for w := range 8 {
				wg.Go(func() {
					for i := range 30 {
						b := body(w*100+i%7, 10_000+i%5)
						if i%2 == 0 {
							e.putObject(b, "x")
							if blob, _, ok := e.c.Object(store.Sum(b)); ok {
								blob.ReadAt(make([]byte, 100), 50)
								blob.Close()
							}
						} else {
							e.putAsset(keyN(i%3), stored(string(rune('a'+w))), b)
							for _, a := range e.c.Variants(keyN(i % 3)) {
								if blob, ok := e.c.OpenAsset(a); ok {
									blob.Close()
								}
							}
						}
						if i%10 == 0 {
							e.c.Invalidate(keyN(i % 3))
							e.c.SetLimits(int64(100_000+w*10_000), 3)
						}
					}
				})
			}
			wg.Wait()
			s := e.c.Stats()
			if s.Bytes > 200_000 {
				t.Fatalf("over budget: %+v", s)
			}
		})
	}
}
