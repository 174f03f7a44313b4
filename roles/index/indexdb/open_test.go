package indexdb

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/ronhq/ron/roles/index/indexapi"
	"github.com/ronhq/ron/store/kv"
	"github.com/ronhq/ron/store/kv/bolt"
	"github.com/ronhq/ron/store/kv/memkv"
)

func TestOpenBucketsAndSchema(t *testing.T) {
	for _, e := range engines {
		t.Run(e.name, func(t *testing.T) {
			kdb := e.open(t)
			if _, err := Open(ctx, kdb, nil); err != nil {
				t.Fatal(err)
			}
			err := kdb.View(ctx, func(tx kv.Tx) error {
				for _, b := range allBuckets {
					if tx.Bucket(b) == nil {
						return fmt.Errorf("bucket %s missing", b)
					}
				}
				if v := tx.Bucket(bucketMeta).Get([]byte("schema")); string(v) != "1" {
					return fmt.Errorf("schema %q", v)
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := Open(ctx, kdb, nil); err != nil { // idempotent
				t.Fatal(err)
			}
			_ = kdb.Update(ctx, func(tx kv.Tx) error {
				return tx.Bucket(bucketMeta).Put([]byte("schema"), []byte("2"))
			})
			if _, err := Open(ctx, kdb, nil); !errors.Is(err, ErrSchema) {
				t.Fatalf("schema 2: %v", err)
			}
		})
	}
}

// TestReopenBolt: everything survives closing and reopening the file.
func TestReopenBolt(t *testing.T) {
	path := filepath.Join(t.TempDir(), "index.db")
	c := newClock()
	open := func() (*DB, kv.DB) {
		kdb, err := bolt.Open(path, bolt.Options{})
		if err != nil {
			t.Fatal(err)
		}
		db, err := Open(ctx, kdb, c.Now)
		if err != nil {
			t.Fatal(err)
		}
		return db, kdb
	}
	db, kdb := open()
	for i := range 12 {
		mustSet(t, db, "n", fmt.Sprint(i), indexapi.Cond{})
	}
	if _, err := db.Delete(ctx, "n", indexapi.Cond{}); err != nil {
		t.Fatal(err)
	}
	mustAnnounce(t, db, ann("o", "a", time.Minute), ann("o", "b", time.Hour))
	if err := kdb.Close(); err != nil {
		t.Fatal(err)
	}

	db, kdb = open()
	defer func() { _ = kdb.Close() }()
	if r, err := db.Get(ctx, "n"); !errors.Is(err, ErrDeleted) || r.Version != 13 {
		t.Fatalf("Get after reopen %+v %v", r, err)
	}
	if h, _ := db.History(ctx, "n"); len(h) != HistoryLen || h[0].Version != 13 || h[9].Version != 4 {
		t.Fatalf("history after reopen %d", len(h))
	}
	if r := mustSet(t, db, "n", "again", indexapi.IfAbsent()); r.Version != 14 {
		t.Fatalf("version after reopen %d", r.Version)
	}
	c.Advance(2 * time.Minute)
	if n, _ := db.Prune(ctx, 0); n != 1 {
		t.Fatalf("pruned %d after reopen", n)
	}
	if ps, _ := db.Providers(ctx, id("o"), "", 0); fmt.Sprint(nodes(ps)) != "[b]" {
		t.Fatalf("providers after reopen %v", nodes(ps))
	}
}

var errBoom = errors.New("boom")

// failDB fails the Put after the first `puts` Puts of each Update.
type failDB struct {
	kv.DB
	puts int
}

func (d *failDB) Update(ctx2 context.Context, fn func(kv.Tx) error) error {
	left := d.puts
	return d.DB.Update(ctx2, func(tx kv.Tx) error { return fn(failTx{tx, &left}) })
}

type failTx struct {
	kv.Tx
	left *int
}

func (t failTx) Bucket(name string) kv.Bucket {
	b := t.Tx.Bucket(name)
	if b == nil {
		return nil
	}
	return failBucket{b, t.left}
}

type failBucket struct {
	kv.Bucket
	left *int
}

func (b failBucket) Put(k, v []byte) error {
	if *b.left--; *b.left < 0 {
		return errBoom
	}
	return b.Bucket.Put(k, v)
}

// TestAnnounceRollback: a kv failure in the middle of a batch leaves
// nothing behind; likewise for a name write.
func TestAnnounceRollback(t *testing.T) {
	mem := memkv.New()
	defer func() { _ = mem.Close() }()
	fdb := &failDB{DB: mem, puts: 100}
	db, err := Open(ctx, fdb, newClock().Now)
	if err != nil {
		t.Fatal(err)
	}
	mustAnnounce(t, db, ann("o", "old", time.Hour))
	fdb.puts = 5 // record 0: 2 puts, record 1: 2 puts, record 2 fails halfway
	batch := []indexapi.Announcement{ann("o", "a", time.Minute), ann("o", "old", 0), ann("p", "b", time.Minute), ann("p", "c", time.Minute)}
	if _, err := db.Announce(ctx, batch); !errors.Is(err, errBoom) {
		t.Fatalf("err %v", err)
	}
	if ps, _ := db.Providers(ctx, id("o"), "", 0); fmt.Sprint(nodes(ps)) != "[old]" {
		t.Fatalf("partial batch visible: %v", nodes(ps))
	}
	if ps, _ := db.Providers(ctx, id("p"), "", 0); len(ps) != 0 {
		t.Fatalf("partial batch visible: %v", nodes(ps))
	}
	fdb.puts = 1 // names Put ok, name_versions Put fails
	if _, err := db.Set(ctx, "n", id("x"), indexapi.Cond{}); !errors.Is(err, errBoom) {
		t.Fatalf("Set err %v", err)
	}
	if _, err := db.Get(ctx, "n"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("half-written name visible: %v", err)
	}
}
