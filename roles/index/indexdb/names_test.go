package indexdb

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/ronhq/ron/internal/testclock"
	"github.com/ronhq/ron/roles/index/indexapi"
)

var ctx = context.Background()

func mustSet(t *testing.T, db *DB, name, target string, c indexapi.Cond) Record {
	t.Helper()
	rec, err := db.Set(ctx, name, id(target), c)
	if err != nil {
		t.Fatalf("Set(%s): %v", name, err)
	}
	return rec
}

func TestSetGet(t *testing.T) {
	forEach(t, func(t *testing.T, db *DB, c *testclock.Clock) {
		if _, err := db.Get(ctx, "blog.example"); !errors.Is(err, ErrNotFound) || errors.Is(err, ErrDeleted) {
			t.Fatalf("Get absent: %v", err)
		}
		r1 := mustSet(t, db, "blog.example", "x", indexapi.Cond{})
		c.Advance(1500 * time.Microsecond)
		r2 := mustSet(t, db, "blog.example", "x", indexapi.Cond{}) // unchanged target still bumps
		if r1.Version != 1 || r2.Version != 2 || r2.Target != id("x") {
			t.Fatalf("versions %d %d", r1.Version, r2.Version)
		}
		if !r2.UpdatedAt.Equal(c.Now().Truncate(time.Millisecond)) {
			t.Fatalf("UpdatedAt %v", r2.UpdatedAt)
		}
		got, err := db.Get(ctx, "blog.example")
		if err != nil || got != r2 {
			t.Fatalf("Get = %+v, %v; want %+v", got, err, r2)
		}
		if _, err := db.Get(ctx, "Blog.example"); !errors.Is(err, indexapi.ErrInvalid) {
			t.Fatalf("Get bad name: %v", err)
		}
		if _, err := db.Set(ctx, "a..b", id("x"), indexapi.Cond{}); !errors.Is(err, indexapi.ErrInvalid) {
			t.Fatalf("Set bad name: %v", err)
		}
	})
}

func TestRecordJSON(t *testing.T) {
	r := Record{Name: "blog.example", Target: id("x"), Version: 7,
		UpdatedAt: time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)}
	b, _ := json.Marshal(r)
	want := fmt.Sprintf(`{"name":"blog.example","b3":"%s","version":7,"updated_at":"2026-11-22T10:00:00.000Z","deleted":false}`, id("x"))
	if string(b) != want {
		t.Fatalf("got %s\nwant %s", b, want)
	}
	var back Record
	if err := json.Unmarshal(b, &back); err != nil || back != r {
		t.Fatalf("round trip %+v %v", back, err)
	}
	tomb := Record{Name: "a", Version: 8, UpdatedAt: r.UpdatedAt, Deleted: true}
	b, _ = json.Marshal(tomb)
	if want := `{"name":"a","b3":null,"version":8,"updated_at":"2026-11-22T10:00:00.000Z","deleted":true}`; string(b) != want {
		t.Fatalf("tombstone %s", b)
	}
	for _, bad := range []string{`{"name":"a","b3":null,"version":1,"updated_at":"2026-11-22T10:00:00.000Z"}`,
		`{"name":"a","b3":"B3:00","version":1,"updated_at":"2026-11-22T10:00:00.000Z"}`,
		`{"name":"a","version":1,"updated_at":"yesterday","deleted":true}`, `[`} {
		if err := json.Unmarshal([]byte(bad), &back); err == nil {
			t.Errorf("Unmarshal(%s) accepted", bad)
		}
	}
}

func TestPreconditions(t *testing.T) {
	forEach(t, func(t *testing.T, db *DB, c *testclock.Clock) {
		var pe *PreconditionError
		if _, err := db.Set(ctx, "n", id("x"), indexapi.IfMatch(1)); !errors.As(err, &pe) || pe.Current != 0 {
			t.Fatalf("IfMatch on absent: %v", err)
		}
		if _, err := db.Set(ctx, "n", id("x"), indexapi.IfLive()); !errors.Is(err, ErrPrecondition) {
			t.Fatalf("IfLive on absent: %v", err)
		}
		mustSet(t, db, "n", "x", indexapi.IfAbsent())
		_, err := db.Set(ctx, "n", id("y"), indexapi.IfAbsent())
		if !errors.Is(err, ErrExists) || !errors.Is(err, ErrPrecondition) || !errors.As(err, &pe) || pe.Current != 1 {
			t.Fatalf("create-only on live: %v", err)
		}
		mustSet(t, db, "n", "y", indexapi.IfMatch(1))
		if _, err := db.Set(ctx, "n", id("z"), indexapi.IfMatch(1)); !errors.As(err, &pe) || pe.Current != 2 || errors.Is(err, ErrExists) {
			t.Fatalf("stale IfMatch: %v", err)
		}
		mustSet(t, db, "n", "z", indexapi.IfLive())
		if _, err := db.Delete(ctx, "n", indexapi.IfMatch(2)); !errors.Is(err, ErrPrecondition) {
			t.Fatalf("Delete stale: %v", err)
		}
		if got, _ := db.Get(ctx, "n"); got.Version != 3 || got.Target != id("z") {
			t.Fatalf("failed writes changed state: %+v", got)
		}
	})
}

func TestTombstones(t *testing.T) {
	forEach(t, func(t *testing.T, db *DB, c *testclock.Clock) {
		if _, err := db.Delete(ctx, "n", indexapi.Cond{}); !errors.Is(err, ErrNotFound) || errors.Is(err, ErrDeleted) {
			t.Fatalf("Delete absent: %v", err)
		}
		mustSet(t, db, "n", "x", indexapi.Cond{})
		tomb, err := db.Delete(ctx, "n", indexapi.IfMatch(1))
		if err != nil || tomb.Version != 2 || !tomb.Deleted {
			t.Fatalf("Delete = %+v, %v", tomb, err)
		}
		if got, err := db.Get(ctx, "n"); !errors.Is(err, ErrDeleted) || !errors.Is(err, ErrNotFound) || got != tomb {
			t.Fatalf("Get tombstone = %+v, %v", got, err)
		}
		if _, err := db.Delete(ctx, "n", indexapi.Cond{}); !errors.Is(err, ErrDeleted) {
			t.Fatalf("Delete twice: %v", err)
		}
		var pe *PreconditionError
		if _, err := db.Set(ctx, "n", id("y"), indexapi.IfMatch(2)); !errors.As(err, &pe) || pe.Current != 0 {
			t.Fatalf("IfMatch tombstone version: %v", err)
		}
		if _, err := db.Delete(ctx, "n", indexapi.IfLive()); !errors.Is(err, ErrPrecondition) {
			t.Fatalf("Delete IfLive on tombstone: %v", err)
		}
		r := mustSet(t, db, "n", "y", indexapi.IfAbsent()) // tombstoned counts as absent
		if r.Version != 3 {
			t.Fatalf("recreate version %d, want 3", r.Version)
		}
		if _, err := db.GetVersion(ctx, "n", 2); !errors.Is(err, ErrDeleted) {
			t.Fatalf("GetVersion tombstone: %v", err)
		}
		if got, err := db.GetVersion(ctx, "n", 1); err != nil || got.Target != id("x") {
			t.Fatalf("GetVersion 1 = %+v, %v", got, err)
		}
		if _, err := db.GetVersion(ctx, "n", 4); !errors.Is(err, ErrNotFound) || errors.Is(err, ErrPruned) {
			t.Fatalf("GetVersion future: %v", err)
		}
		if _, err := db.GetVersion(ctx, "n", 0); !errors.Is(err, indexapi.ErrInvalid) {
			t.Fatalf("GetVersion 0: %v", err)
		}
	})
}

func TestHistoryTrim(t *testing.T) {
	forEach(t, func(t *testing.T, db *DB, c *testclock.Clock) {
		if _, err := db.History(ctx, "n"); !errors.Is(err, ErrNotFound) {
			t.Fatalf("History absent: %v", err)
		}
		mustSet(t, db, "m", "other", indexapi.Cond{}) // a neighbour name is untouched
		mustSet(t, db, "n.a", "other", indexapi.Cond{})
		for i := 1; i <= 25; i++ {
			if i%5 == 0 {
				if _, err := db.Delete(ctx, "n", indexapi.Cond{}); err != nil {
					t.Fatal(err)
				}
				continue
			}
			r := mustSet(t, db, "n", fmt.Sprint(i), indexapi.Cond{})
			if r.Version != uint64(i) {
				t.Fatalf("version %d at step %d", r.Version, i)
			}
		}
		h, err := db.History(ctx, "n")
		if err != nil || len(h) != HistoryLen {
			t.Fatalf("History len %d, %v", len(h), err)
		}
		for i, r := range h {
			if want := uint64(25 - i); r.Version != want || r.Deleted != (want%5 == 0) {
				t.Fatalf("h[%d] = %+v, want version %d", i, r, want)
			}
		}
		if _, err := db.GetVersion(ctx, "n", 15); !errors.Is(err, ErrPruned) || !errors.Is(err, ErrNotFound) {
			t.Fatalf("GetVersion pruned: %v", err)
		}
		if got, err := db.GetVersion(ctx, "n", 16); err != nil || got.Target != id("16") {
			t.Fatalf("GetVersion 16: %+v %v", got, err)
		}
		for _, other := range []string{"m", "n.a"} {
			if h, _ := db.History(ctx, other); len(h) != 1 {
				t.Fatalf("History(%s) = %d", other, len(h))
			}
		}
	})
}

// TestCASRace: 20 writers with the same IfMatch, exactly one wins.
func TestCASRace(t *testing.T) {
	forEach(t, func(t *testing.T, db *DB, c *testclock.Clock) {
		mustSet(t, db, "race", "start", indexapi.Cond{})
		for round := uint64(1); round <= 3; round++ {
			var wg sync.WaitGroup
			var mu sync.Mutex
			wins, fails := 0, 0
			for g := range 20 {
				wg.Go(func() {
					_, err := db.Set(ctx, "race", id(fmt.Sprint(round, g)), indexapi.IfMatch(round))
					mu.Lock()
					defer mu.Unlock()
					switch {
					case err == nil:
						wins++
					case errors.Is(err, ErrPrecondition):
						fails++
					default:
						t.Errorf("unexpected %v", err)
					}
				})
			}
			wg.Wait()
			if wins != 1 || fails != 19 {
				t.Fatalf("round %d: %d wins %d fails", round, wins, fails)
			}
			if got, _ := db.Get(ctx, "race"); got.Version != round+1 {
				t.Fatalf("version %d", got.Version)
			}
		}
	})
}

// TestCreateOnlyRace: 20 concurrent IfAbsent creators, one wins.
func TestCreateOnlyRace(t *testing.T) {
	forEach(t, func(t *testing.T, db *DB, c *testclock.Clock) {
		var wg sync.WaitGroup
		var mu sync.Mutex
		wins := 0
		for g := range 20 {
			wg.Go(func() {
				_, err := db.Set(ctx, "new", id(fmt.Sprint(g)), indexapi.IfAbsent())
				mu.Lock()
				defer mu.Unlock()
				if err == nil {
					wins++
				} else if !errors.Is(err, ErrExists) {
					t.Errorf("unexpected %v", err)
				}
			})
		}
		wg.Wait()
		if wins != 1 {
			t.Fatalf("%d wins", wins)
		}
	})
}

// TestVersionMonotonic: versions strictly increase over mixed writes.
func TestVersionMonotonic(t *testing.T) {
	forEach(t, func(t *testing.T, db *DB, c *testclock.Clock) {
		var last uint64
		for i := range 40 {
			var r Record
			var err error
			if i%3 == 2 {
				r, err = db.Delete(ctx, "mono", indexapi.Cond{})
			} else {
				r, err = db.Set(ctx, "mono", id(fmt.Sprint(i%2)), indexapi.Cond{})
			}
			if err != nil {
				t.Fatal(err)
			}
			if r.Version != last+1 {
				t.Fatalf("step %d: version %d after %d", i, r.Version, last)
			}
			last = r.Version
		}
	})
}
