package pmtiles

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
)

// A waiter whose leader failed only because the leader's context ended
// loads the directory itself.
func TestDirCacheRetryAfterLeaderCanceled(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := NewDirCache(DirCacheOptions{})
		key := dirKey{pack: "p", offset: 1, length: 2}
		gate := make(chan struct{})
		leader := make(chan error, 1)
		go func() {
			_, err := c.get(context.Background(), key, func() ([]Entry, error) { <-gate; return nil, context.Canceled })
			leader <- err
		}()
		synctest.Wait()
		want := []Entry{{TileID: 7, Length: 1, RunLength: 1}}
		waiter := make(chan []Entry, 1)
		go func() {
			es, err := c.get(context.Background(), key, func() ([]Entry, error) { return want, nil })
			if err != nil {
				t.Error(err)
			}
			waiter <- es
		}()
		synctest.Wait()
		close(gate)
		if err := <-leader; !errors.Is(err, context.Canceled) {
			t.Fatalf("leader: %v", err)
		}
		if es := <-waiter; len(es) != 1 || es[0] != want[0] {
			t.Fatalf("waiter got %v", es)
		}
		if s := c.Stats(); s.Misses != 2 || s.Directories != 1 {
			t.Fatalf("stats %+v", s)
		}
	})
}

// A panicking load fails its waiters with an error, leaves nothing behind,
// and the panic reaches the leader's caller.
func TestDirCacheLoadPanic(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := NewDirCache(DirCacheOptions{})
		key := dirKey{pack: "p"}
		gate := make(chan struct{})
		recovered := make(chan any, 1)
		go func() {
			defer func() { recovered <- recover() }()
			_, _ = c.get(context.Background(), key, func() ([]Entry, error) { <-gate; panic("boom") })
		}()
		synctest.Wait()
		waiter := make(chan error, 1)
		go func() {
			_, err := c.get(context.Background(), key, func() ([]Entry, error) { return nil, nil })
			waiter <- err
		}()
		synctest.Wait()
		close(gate)
		if p := <-recovered; p != "boom" {
			t.Fatalf("recovered %v", p)
		}
		if err := <-waiter; err == nil {
			t.Fatal("waiter got no error")
		}
		c.mu.Lock()
		defer c.mu.Unlock()
		if len(c.loading) != 0 || len(c.items) != 0 {
			t.Fatalf("left behind: %d loading, %d items", len(c.loading), len(c.items))
		}
	})
}
