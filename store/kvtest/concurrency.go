package kvtest

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/ronhq/ron/store/kv"
)

// testAtomicVisibility: one writer sets ten keys to the same generation per
// Update while readers check, in every View, that all ten agree.
func testAtomicVisibility(t *testing.T, db kv.DB) {
	const keys, gens, readers = 10, 200, 4
	write := func(gen int) {
		update(t, db, func(tx kv.Tx) error {
			b, err := tx.CreateBucket(bkt)
			if err != nil {
				return err
			}
			for i := range keys {
				if err := b.Put(fmt.Appendf(nil, "k%02d", i), fmt.Appendf(nil, "%d", gen)); err != nil {
					return err
				}
			}
			return nil
		})
	}
	write(0)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range readers {
		wg.Go(func() { readUntil(t, db, keys, stop) })
	}
	for gen := 1; gen <= gens; gen++ {
		write(gen)
	}
	close(stop)
	wg.Wait()
}

// readUntil checks in View after View that all keys hold one value.
func readUntil(t *testing.T, db kv.DB, keys int, stop <-chan struct{}) {
	for {
		select {
		case <-stop:
			return
		default:
		}
		err := db.View(context.Background(), func(tx kv.Tx) error {
			c := tx.Bucket(bkt).Cursor()
			first, n := "", 0
			for k, v := c.First(); k != nil; k, v = c.Next() {
				if n == 0 {
					first = string(v)
				} else if string(v) != first {
					return fmt.Errorf("torn read: %s = %s, first key = %s", k, v, first)
				}
				n++
			}
			if n != keys {
				return fmt.Errorf("saw %d keys, want %d", n, keys)
			}
			return nil
		})
		if err != nil {
			t.Error(err)
			return
		}
	}
}

// testSnapshotIsolation: a View that started before an Update keeps seeing
// the old state after that Update commits; a later View sees the new one.
func testSnapshotIsolation(t *testing.T, db kv.DB) {
	put(t, db, "a", "old", "b", "old")
	started, committed := make(chan struct{}), make(chan error, 1)
	go func() {
		<-started
		committed <- db.Update(context.Background(), func(tx kv.Tx) error {
			b := tx.Bucket(bkt)
			if err := b.Put([]byte("a"), []byte("new")); err != nil {
				return err
			}
			return b.Delete([]byte("b"))
		})
	}()
	view(t, db, func(tx kv.Tx) error {
		b := tx.Bucket(bkt)
		close(started)
		if err := <-committed; err != nil {
			t.Fatalf("Update: %v", err)
		}
		wantPairs(t, collect(b.Cursor(), true), "a", "old", "b", "old")
		if v := tx.Bucket(bkt).Get([]byte("b")); string(v) != "old" {
			t.Errorf("b = %q inside the old View", v)
		}
		return nil
	})
	wantPairs(t, walk(t, db, true), "a", "new")
}
