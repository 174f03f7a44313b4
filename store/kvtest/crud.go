package kvtest

import (
	"testing"

	"github.com/ronhq/ron/store/kv"
)

func testCRUD(t *testing.T, db kv.DB) {
	if _, ok := get(t, db, "a"); ok {
		t.Fatal("empty DB has key a")
	}
	put(t, db, "a", "1", "b", "2")
	if v, ok := get(t, db, "a"); !ok || v != "1" {
		t.Fatalf("a = %q %v, want 1", v, ok)
	}
	put(t, db, "a", "one")
	if v, _ := get(t, db, "a"); v != "one" {
		t.Fatalf("overwritten a = %q", v)
	}
	update(t, db, func(tx kv.Tx) error {
		b := tx.Bucket(bkt)
		if err := b.Delete([]byte("a")); err != nil {
			return err
		}
		if b.Get([]byte("a")) != nil {
			t.Error("deleted key visible in its own tx")
		}
		return b.Delete([]byte("absent")) // not an error
	})
	if _, ok := get(t, db, "a"); ok {
		t.Fatal("deleted a still present")
	}
	wantPairs(t, walk(t, db, true), "b", "2")
}

func testEmptyValue(t *testing.T, db kv.DB) {
	update(t, db, func(tx kv.Tx) error {
		b, err := tx.CreateBucket(bkt)
		if err != nil {
			return err
		}
		if err := b.Put([]byte("nil"), nil); err != nil {
			return err
		}
		if v := b.Get([]byte("nil")); v == nil || len(v) != 0 {
			t.Errorf("in-tx Get of empty value = %#v, want non-nil empty", v)
		}
		return b.Put([]byte("empty"), []byte{})
	})
	view(t, db, func(tx kv.Tx) error {
		b := tx.Bucket(bkt)
		for _, k := range []string{"nil", "empty"} {
			if v := b.Get([]byte(k)); v == nil || len(v) != 0 {
				t.Errorf("Get(%s) = %#v, want non-nil empty", k, v)
			}
		}
		if k, v := b.Cursor().First(); string(k) != "empty" || v == nil {
			t.Errorf("First = %q %#v, want empty and non-nil value", k, v)
		}
		return nil
	})
}

func testPutCopies(t *testing.T, db kv.DB) {
	key, val := []byte("key"), []byte("value")
	update(t, db, func(tx kv.Tx) error {
		b, err := tx.CreateBucket(bkt)
		if err != nil {
			return err
		}
		if err := b.Put(key, val); err != nil {
			return err
		}
		copy(key, "XXX") // reuse the buffers before commit
		copy(val, "XXXXX")
		return nil
	})
	wantPairs(t, walk(t, db, true), "key", "value")
}

func testPutLimits(t *testing.T, db kv.DB) {
	update(t, db, func(tx kv.Tx) error {
		b, err := tx.CreateBucket(bkt)
		if err != nil {
			return err
		}
		wantErr(t, "Put(nil key)", b.Put(nil, []byte("v")), kv.ErrKeyRequired)
		wantErr(t, "Put(empty key)", b.Put([]byte{}, []byte("v")), kv.ErrKeyRequired)
		big := make([]byte, kv.MaxKeySize+1)
		wantErr(t, "Put(big key)", b.Put(big, nil), kv.ErrKeyTooLarge)
		return b.Put(big[:kv.MaxKeySize], []byte("max"))
	})
	view(t, db, func(tx kv.Tx) error {
		if v := tx.Bucket(bkt).Get(make([]byte, kv.MaxKeySize)); string(v) != "max" {
			t.Errorf("max-size key = %q", v)
		}
		return nil
	})
}

func testBuckets(t *testing.T, db kv.DB) {
	view(t, db, func(tx kv.Tx) error {
		if tx.Bucket(bkt) != nil {
			t.Error("absent bucket is non-nil in View")
		}
		return nil
	})
	update(t, db, func(tx kv.Tx) error {
		if tx.Bucket(bkt) != nil {
			t.Error("absent bucket is non-nil in Update")
		}
		_, err := tx.CreateBucket("")
		wantErr(t, "CreateBucket(\"\")", err, kv.ErrBucketNameRequired)
		wantErr(t, "DeleteBucket(absent)", tx.DeleteBucket("nope"), kv.ErrBucketNotFound)
		return nil
	})
	put(t, db, "k", "v")
	put(t, db, "k2", "v2") // CreateBucket on an existing bucket keeps its data
	wantPairs(t, walk(t, db, true), "k", "v", "k2", "v2")
	update(t, db, func(tx kv.Tx) error { return tx.DeleteBucket(bkt) })
	view(t, db, func(tx kv.Tx) error {
		if tx.Bucket(bkt) != nil {
			t.Error("deleted bucket still present")
		}
		return nil
	})
	put(t, db, "new", "1") // recreated empty
	wantPairs(t, walk(t, db, true), "new", "1")
}

func testBucketIsolation(t *testing.T, db kv.DB) {
	update(t, db, func(tx kv.Tx) error {
		for _, name := range []string{"x", "y"} {
			b, err := tx.CreateBucket(name)
			if err != nil {
				return err
			}
			if err := b.Put([]byte("k"), []byte(name)); err != nil {
				return err
			}
		}
		return nil
	})
	update(t, db, func(tx kv.Tx) error { return tx.DeleteBucket("x") })
	view(t, db, func(tx kv.Tx) error {
		if tx.Bucket("x") != nil {
			t.Error("x survived DeleteBucket")
		}
		if v := tx.Bucket("y").Get([]byte("k")); string(v) != "y" {
			t.Errorf("y/k = %q", v)
		}
		return nil
	})
}

func testDeletedBucketHandle(t *testing.T, db kv.DB) {
	put(t, db, "k", "v")
	update(t, db, func(tx kv.Tx) error {
		old := tx.Bucket(bkt)
		if tx.Bucket(bkt) != old {
			t.Error("Bucket returned different handles for one name")
		}
		if err := tx.DeleteBucket(bkt); err != nil {
			return err
		}
		if old.Get([]byte("k")) != nil {
			t.Error("Get through deleted handle returned a value")
		}
		if k, _ := old.Cursor().First(); k != nil {
			t.Error("cursor on deleted handle returned a key")
		}
		wantErr(t, "Put via deleted handle", old.Put([]byte("k"), nil), kv.ErrBucketNotFound)
		wantErr(t, "Delete via deleted handle", old.Delete([]byte("k")), kv.ErrBucketNotFound)
		b, err := tx.CreateBucket(bkt)
		if err != nil {
			return err
		}
		if b.Get([]byte("k")) != nil {
			t.Error("recreated bucket is not empty")
		}
		return b.Put([]byte("fresh"), []byte("1"))
	})
	wantPairs(t, walk(t, db, true), "fresh", "1")
}
