package kvtest

import (
	"context"
	"errors"
	"testing"

	"github.com/ronhq/ron/store/kv"
)

var errBoom = errors.New("boom")

func testRollback(t *testing.T, db kv.DB) {
	put(t, db, "keep", "1", "gone", "2")
	err := db.Update(context.Background(), func(tx kv.Tx) error {
		b := tx.Bucket(bkt)
		if err := b.Put([]byte("keep"), []byte("changed")); err != nil {
			return err
		}
		if err := b.Put([]byte("new"), []byte("3")); err != nil {
			return err
		}
		if err := b.Delete([]byte("gone")); err != nil {
			return err
		}
		return errBoom
	})
	wantErr(t, "Update returning fn error", err, errBoom)
	wantPairs(t, walk(t, db, true), "gone", "2", "keep", "1")
}

func testRollbackBuckets(t *testing.T, db kv.DB) {
	put(t, db, "k", "v")
	err := db.Update(context.Background(), func(tx kv.Tx) error {
		if _, err := tx.CreateBucket("other"); err != nil {
			return err
		}
		if err := tx.DeleteBucket(bkt); err != nil {
			return err
		}
		return errBoom
	})
	wantErr(t, "Update", err, errBoom)
	view(t, db, func(tx kv.Tx) error {
		if tx.Bucket("other") != nil {
			t.Error("bucket created by a rolled-back Update exists")
		}
		return nil
	})
	wantPairs(t, walk(t, db, true), "k", "v")
}

func testPanicRollsBack(t *testing.T, db kv.DB) {
	put(t, db, "k", "v")
	func() {
		defer func() {
			if r := recover(); r != errBoom {
				t.Errorf("recovered %v, want the fn's panic", r)
			}
		}()
		_ = db.Update(context.Background(), func(tx kv.Tx) error {
			_ = tx.Bucket(bkt).Put([]byte("k"), []byte("panicked"))
			panic(errBoom)
		})
	}()
	if v, _ := get(t, db, "k"); v != "v" {
		t.Errorf("k = %q after a panicking Update", v)
	}
	put(t, db, "k", "after") // the writer slot was released
	if v, _ := get(t, db, "k"); v != "after" {
		t.Errorf("k = %q", v)
	}
}

func testReadOnly(t *testing.T, db kv.DB) {
	put(t, db, "k", "v")
	view(t, db, func(tx kv.Tx) error {
		_, err := tx.CreateBucket("new")
		wantErr(t, "CreateBucket(new) in View", err, kv.ErrReadOnly)
		_, err = tx.CreateBucket(bkt)
		wantErr(t, "CreateBucket(existing) in View", err, kv.ErrReadOnly)
		wantErr(t, "DeleteBucket in View", tx.DeleteBucket(bkt), kv.ErrReadOnly)
		b := tx.Bucket(bkt)
		wantErr(t, "Put in View", b.Put([]byte("k"), []byte("x")), kv.ErrReadOnly)
		wantErr(t, "Delete in View", b.Delete([]byte("k")), kv.ErrReadOnly)
		return nil
	})
	if v, _ := get(t, db, "k"); v != "v" {
		t.Errorf("k = %q after View writes", v)
	}
}

func testTxClosed(t *testing.T, db kv.DB) {
	put(t, db, "k", "v")
	var leaked kv.Tx
	var lb kv.Bucket
	var lc kv.Cursor
	update(t, db, func(tx kv.Tx) error {
		leaked, lb = tx, tx.Bucket(bkt)
		lc = lb.Cursor()
		lc.First()
		return nil
	})
	wantErr(t, "Put after tx", lb.Put([]byte("k"), []byte("x")), kv.ErrTxClosed)
	wantErr(t, "Delete after tx", lb.Delete([]byte("k")), kv.ErrTxClosed)
	_, err := leaked.CreateBucket("x")
	wantErr(t, "CreateBucket after tx", err, kv.ErrTxClosed)
	wantErr(t, "DeleteBucket after tx", leaked.DeleteBucket(bkt), kv.ErrTxClosed)
	if lb.Get([]byte("k")) != nil || leaked.Bucket(bkt) != nil {
		t.Error("reads after the tx returned data")
	}
	if k, _ := lc.Next(); k != nil {
		t.Error("cursor after the tx returned a key")
	}
	if k, _ := lc.First(); k != nil {
		t.Error("cursor First after the tx returned a key")
	}
	view(t, db, func(tx kv.Tx) error { leaked = tx; return nil })
	_, err = leaked.CreateBucket("x")
	wantErr(t, "CreateBucket after View", err, kv.ErrTxClosed)
}

func testCtxBeforeStart(t *testing.T, db kv.DB) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	called := false
	fn := func(kv.Tx) error { called = true; return nil }
	wantErr(t, "View(cancelled)", db.View(ctx, fn), context.Canceled)
	wantErr(t, "Update(cancelled)", db.Update(ctx, fn), context.Canceled)
	if called {
		t.Error("fn ran under a cancelled ctx")
	}
}

// holdWriter starts an Update that blocks inside fn until release is
// closed; it returns once fn is running and a channel with Update's result.
func holdWriter(t *testing.T, db kv.DB, release <-chan struct{}) <-chan error {
	t.Helper()
	inside := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- db.Update(context.Background(), func(tx kv.Tx) error {
			close(inside)
			<-release
			b, err := tx.CreateBucket(bkt)
			if err != nil {
				return err
			}
			return b.Put([]byte("held"), []byte("1"))
		})
	}()
	select {
	case <-inside:
	case err := <-done:
		t.Fatalf("holding Update returned early: %v", err)
	}
	return done
}

func testUpdateWaitsUnderCtx(t *testing.T, db kv.DB) {
	release := make(chan struct{})
	held := holdWriter(t, db, release)
	ctx, cancel := context.WithCancel(context.Background())
	waiter := make(chan error, 1)
	go func() {
		waiter <- db.Update(ctx, func(kv.Tx) error {
			t.Error("second Update ran while the writer was held")
			return nil
		})
	}()
	view(t, db, func(kv.Tx) error { return nil }) // Views are not blocked
	cancel()
	wantErr(t, "waiting Update", <-waiter, context.Canceled)
	close(release)
	if err := <-held; err != nil {
		t.Fatalf("held Update: %v", err)
	}
	if v, _ := get(t, db, "held"); v != "1" {
		t.Errorf("held = %q", v)
	}
}

func testClosed(t *testing.T, db kv.DB) {
	put(t, db, "k", "v")
	if err := db.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := db.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	fn := func(kv.Tx) error { t.Error("fn ran after Close"); return nil }
	wantErr(t, "View after Close", db.View(context.Background(), fn), kv.ErrClosed)
	wantErr(t, "Update after Close", db.Update(context.Background(), fn), kv.ErrClosed)
}

func testCloseWakesWaitingWriter(t *testing.T, db kv.DB) {
	release := make(chan struct{})
	held := holdWriter(t, db, release)
	waiter := make(chan error, 1)
	go func() {
		waiter <- db.Update(context.Background(), func(kv.Tx) error {
			t.Error("waiting Update ran")
			return nil
		})
	}()
	closed := make(chan error, 1)
	go func() { closed <- db.Close() }()
	wantErr(t, "waiting Update during Close", <-waiter, kv.ErrClosed)
	close(release) // Close waits for the running Update, which commits
	if err := <-held; err != nil {
		t.Fatalf("held Update: %v", err)
	}
	if err := <-closed; err != nil {
		t.Fatalf("Close: %v", err)
	}
}
