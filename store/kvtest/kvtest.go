// Package kvtest is the conformance suite every kv engine passes
// (store/kv/bolt and store/kv/memkv). Engines call Run from their tests and
// the Bench helpers from their benchmarks.
package kvtest

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"testing"

	"github.com/ronhq/ron/store/kv"
)

// Opener returns a fresh, empty, open DB. The suite closes it (Close is
// idempotent, so the opener may also register its own cleanup).
type Opener func(t *testing.T) kv.DB

// Run runs the conformance suite against the engine made by open.
//
// SnapshotIsolation holds a View open until an Update has committed, which
// the kv contract otherwise forbids: bbolt's writer may wait for open readers
// when it must grow its memory map. A bolt opener therefore sets
// bolt.Options.InitialMmapSize (1 MiB is plenty for the suite).
func Run(t *testing.T, open Opener) {
	tests := []struct {
		name string
		fn   func(*testing.T, kv.DB)
	}{
		{"CRUD", testCRUD},
		{"EmptyValue", testEmptyValue},
		{"PutCopies", testPutCopies},
		{"PutLimits", testPutLimits},
		{"Buckets", testBuckets},
		{"BucketIsolation", testBucketIsolation},
		{"DeletedBucketHandle", testDeletedBucketHandle},
		{"CursorWalk", testCursorWalk},
		{"CursorEmpty", testCursorEmpty},
		{"CursorUnpositioned", testCursorUnpositioned},
		{"Seek", testSeek},
		{"SeekPrefix", testSeekPrefix},
		{"CursorDeleteWhileWalking", testCursorDeleteWhileWalking},
		{"CursorPutWhileWalking", testCursorPutWhileWalking},
		{"CursorPrevAfterDelete", testCursorPrevAfterDelete},
		{"Rollback", testRollback},
		{"RollbackBuckets", testRollbackBuckets},
		{"PanicRollsBack", testPanicRollsBack},
		{"ReadOnly", testReadOnly},
		{"TxClosed", testTxClosed},
		{"CtxBeforeStart", testCtxBeforeStart},
		{"UpdateWaitsUnderCtx", testUpdateWaitsUnderCtx},
		{"Closed", testClosed},
		{"CloseWakesWaitingWriter", testCloseWakesWaitingWriter},
		{"AtomicVisibility", testAtomicVisibility},
		{"SnapshotIsolation", testSnapshotIsolation},
		{"BinaryKeys", testBinaryKeys},
		{"IndexKeyOrder", testIndexKeyOrder},
		{"OrderProperty", testOrderProperty},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			db := open(t)
			t.Cleanup(func() {
				if err := db.Close(); err != nil {
					t.Errorf("Close: %v", err)
				}
			})
			tc.fn(t, db)
		})
	}
}

// --- helpers ---

const bkt = "b"

func update(t *testing.T, db kv.DB, fn func(kv.Tx) error) {
	t.Helper()
	if err := db.Update(context.Background(), fn); err != nil {
		t.Fatalf("Update: %v", err)
	}
}

func view(t *testing.T, db kv.DB, fn func(kv.Tx) error) {
	t.Helper()
	if err := db.View(context.Background(), fn); err != nil {
		t.Fatalf("View: %v", err)
	}
}

// put writes pairs (k1, v1, k2, v2, …) into bucket bkt in one Update.
func put(t *testing.T, db kv.DB, kvs ...string) {
	t.Helper()
	update(t, db, func(tx kv.Tx) error {
		b, err := tx.CreateBucket(bkt)
		if err != nil {
			return err
		}
		for i := 0; i+1 < len(kvs); i += 2 {
			if err := b.Put([]byte(kvs[i]), []byte(kvs[i+1])); err != nil {
				return err
			}
		}
		return nil
	})
}

// get reads key from bucket bkt; ok is false when the bucket or key is absent.
func get(t *testing.T, db kv.DB, key string) (val string, ok bool) {
	t.Helper()
	view(t, db, func(tx kv.Tx) error {
		b := tx.Bucket(bkt)
		if b == nil {
			return nil
		}
		v := b.Get([]byte(key))
		val, ok = string(v), v != nil
		return nil
	})
	return val, ok
}

// pair is a copied key/value.
type pair struct{ k, v string }

// walk returns bucket bkt's contents in the given direction (copies).
func walk(t *testing.T, db kv.DB, forward bool) []pair {
	t.Helper()
	var out []pair
	view(t, db, func(tx kv.Tx) error {
		b := tx.Bucket(bkt)
		if b == nil {
			return nil
		}
		out = collect(b.Cursor(), forward)
		return nil
	})
	return out
}

func collect(c kv.Cursor, forward bool) []pair {
	var out []pair
	first, next := c.First, c.Next
	if !forward {
		first, next = c.Last, c.Prev
	}
	for k, v := first(); k != nil; k, v = next() {
		out = append(out, pair{string(k), string(v)})
	}
	return out
}

func wantPairs(t *testing.T, got []pair, kvs ...string) {
	t.Helper()
	var want []pair
	for i := 0; i+1 < len(kvs); i += 2 {
		want = append(want, pair{kvs[i], kvs[i+1]})
	}
	if len(got) != len(want) {
		t.Fatalf("got %d pairs %q, want %d %q", len(got), got, len(want), want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("pair %d = %q, want %q (all: %q)", i, got[i], want[i], got)
		}
	}
}

func wantErr(t *testing.T, what string, got, want error) {
	t.Helper()
	if !errors.Is(got, want) {
		t.Fatalf("%s: err = %v, want %v", what, got, want)
	}
}

func u64(n uint64) []byte { return binary.BigEndian.AppendUint64(nil, n) }

func cat(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
