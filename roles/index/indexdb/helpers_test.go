package indexdb

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/ronhq/ron/internal/testclock"
	"github.com/ronhq/ron/store"
	"github.com/ronhq/ron/store/kv"
	"github.com/ronhq/ron/store/kv/bolt"
	"github.com/ronhq/ron/store/kv/memkv"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// clock is an injectable, settable clock.
func newClock() *testclock.Clock {
	return testclock.New(time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC))
}

// engine opens a fresh kv.DB of one kind.
type engine struct {
	name string
	open func(t *testing.T) kv.DB
}

var engines = []engine{
	{"memkv", func(t *testing.T) kv.DB {
		db := memkv.New()
		t.Cleanup(func() { _ = db.Close() })
		return db
	}},
	{"bolt", func(t *testing.T) kv.DB {
		db, err := bolt.Open(filepath.Join(t.TempDir(), "index.db"), bolt.Options{NoSync: true})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = db.Close() })
		return db
	}},
}

// forEach runs fn against a fresh DB on every engine.
func forEach(t *testing.T, fn func(t *testing.T, db *DB, c *testclock.Clock)) {
	for _, e := range engines {
		t.Run(e.name, func(t *testing.T) {
			t.Parallel()
			c := newClock()
			db, err := Open(context.Background(), e.open(t), c.Now)
			if err != nil {
				t.Fatal(err)
			}
			fn(t, db, c)
		})
	}
}

// id returns a deterministic object id.
func id(s string) store.ID { return store.Sum([]byte(s)) }
