package indexdb

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ronhq/ron/internal/testclock"
	"github.com/ronhq/ron/roles/index/indexapi"
	"github.com/ronhq/ron/store/kv/memkv"
)

var t0 = time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)

func live(name string, v uint64, target string, ms int) Record {
	return Record{Name: name, Version: v, Target: id(target), UpdatedAt: t0.Add(time.Duration(ms) * time.Millisecond)}
}

func tomb(name string, v uint64, ms int) Record {
	return Record{Name: name, Version: v, Deleted: true, UpdatedAt: t0.Add(time.Duration(ms) * time.Millisecond)}
}

func TestSupersedes(t *testing.T) {
	a, b := id("a"), id("b")
	lo, hi := live("n", 1, "a", 0), live("n", 1, "a", 0)
	lo.Target, hi.Target = a, b
	if bytes.Compare(a[:], b[:]) > 0 {
		lo.Target, hi.Target = b, a
	}
	cases := []struct {
		name string
		x, y Record
		want bool
	}{
		{"higher version", live("n", 2, "a", 0), live("n", 1, "b", 9), true},
		{"lower version", live("n", 1, "b", 9), live("n", 2, "a", 0), false},
		{"later updated_at", live("n", 3, "a", 5), live("n", 3, "b", 4), true},
		{"earlier updated_at", live("n", 3, "a", 4), live("n", 3, "b", 5), false},
		{"greater b3", hi, lo, true},
		{"smaller b3", lo, hi, false},
		{"live beats tombstone", live("n", 1, "a", 0), tomb("n", 1, 0), true},
		{"tombstone loses", tomb("n", 1, 0), live("n", 1, "a", 0), false},
		{"equal", live("n", 1, "a", 0), live("n", 1, "a", 0), false},
		{"equal tombstones", tomb("n", 1, 0), tomb("n", 1, 0), false},
	}
	for _, tc := range cases {
		if got := Supersedes(tc.x, tc.y); got != tc.want {
			t.Errorf("%s: Supersedes = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestApplyImportRules(t *testing.T) {
	forEach(t, func(t *testing.T, db *DB, c *testclock.Clock) {
		n, err := applyImport(ctx, db, []Record{live("blog.example", 3, "x", 0)})
		if err != nil || n != 1 {
			t.Fatalf("first apply: %d, %v", n, err)
		}
		// An older version joins the history only.
		if n, err = applyImport(ctx, db, []Record{live("blog.example", 2, "y", 0)}); err != nil || n != 0 {
			t.Fatalf("older apply: %d, %v", n, err)
		}
		got, err := db.Get(ctx, "blog.example")
		if err != nil || got.Version != 3 || got.Target != id("x") {
			t.Fatalf("current %+v, %v", got, err)
		}
		if old, err := db.GetVersion(ctx, "blog.example", 2); err != nil || old.Target != id("y") {
			t.Fatalf("v2 %+v, %v", old, err)
		}
		// Same version, later updated_at wins; the earlier one loses.
		if n, _ = applyImport(ctx, db, []Record{live("blog.example", 3, "z", 10)}); n != 1 {
			t.Fatal("later updated_at did not win")
		}
		if n, _ = applyImport(ctx, db, []Record{live("blog.example", 3, "x", 0)}); n != 0 {
			t.Fatal("earlier updated_at won")
		}
		// A tombstone at a higher version deletes; a local Set continues.
		if n, _ = applyImport(ctx, db, []Record{tomb("blog.example", 4, 20)}); n != 1 {
			t.Fatal("tombstone did not apply")
		}
		if _, err := db.Get(ctx, "blog.example"); !errors.Is(err, ErrDeleted) {
			t.Fatalf("after tombstone: %v", err)
		}
		rec := mustSet(t, db, "blog.example", "w", indexapi.Cond{})
		if rec.Version != 5 {
			t.Fatalf("Set after replica: version %d", rec.Version)
		}
	})
}

func TestApplyImportTrimsHistory(t *testing.T) {
	forEach(t, func(t *testing.T, db *DB, c *testclock.Clock) {
		db.SetLimits(Limits{HistoryLen: 3})
		var recs []Record
		for v := uint64(1); v <= 5; v++ {
			recs = append(recs, live("a.example", v, fmt.Sprint(v), int(v)))
		}
		if _, err := applyImport(ctx, db, recs); err != nil {
			t.Fatal(err)
		}
		hist, err := db.History(ctx, "a.example")
		if err != nil || len(hist) != 3 || hist[0].Version != 5 || hist[2].Version != 3 {
			t.Fatalf("history %+v, %v", hist, err)
		}
		// A version below the kept window is added and trimmed at once.
		if _, err := applyImport(ctx, db, []Record{live("a.example", 1, "again", 99)}); err != nil {
			t.Fatal(err)
		}
		if _, err := db.GetVersion(ctx, "a.example", 1); !errors.Is(err, ErrPruned) {
			t.Fatalf("v1: %v", err)
		}
	})
}

func TestCheckReplicaBadInput(t *testing.T) {
	ok := live("a.example", 1, "x", 0)
	many := make([]Record, MaxReplicaBatch+1)
	for i := range many {
		many[i] = ok
	}
	bad := func(f func(*Record)) []Record {
		r := ok
		f(&r)
		return []Record{ok, r}
	}
	cases := []struct {
		name  string
		recs  []Record
		index int
		field string
	}{
		{"empty", nil, -1, "records"},
		{"too many", many, -1, "records"},
		{"bad name", bad(func(r *Record) { r.Name = "Bad_Name" }), 1, "name"},
		{"version 0", bad(func(r *Record) { r.Version = 0 }), 1, "version"},
		{"no time", bad(func(r *Record) { r.UpdatedAt = time.Time{} }), 1, "updated_at"},
		{"tombstone with target", bad(func(r *Record) { r.Deleted = true }), 1, "b3"},
	}
	for _, tc := range cases {
		var ie *indexapi.InvalidError
		err := CheckReplica(tc.recs)
		if !errors.As(err, &ie) || ie.Index != tc.index || ie.Field != tc.field || !errors.Is(err, indexapi.ErrInvalid) {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
}

func TestDecodeReplicaNames(t *testing.T) {
	good := `{"records":[{"name":"a.example","version":2,"b3":"` + id("x").String() +
		`","deleted":false,"updated_at":"2026-11-22T10:00:00.000Z"},` +
		`{"name":"b.example","version":1,"b3":null,"deleted":true,"updated_at":"2026-11-22T10:00:00.001Z"}]}`
	recs, err := DecodeReplicaNames([]byte(good))
	if err != nil || len(recs) != 2 || recs[0].Target != id("x") || !recs[1].Deleted {
		t.Fatalf("decode: %+v, %v", recs, err)
	}
	body, err := EncodeReplicaNames(recs)
	if err != nil {
		t.Fatal(err)
	}
	again, err := DecodeReplicaNames(body)
	if err != nil || !slices.Equal(again, recs) {
		t.Fatalf("round trip: %+v, %v", again, err)
	}
	rec := func(s string) string { return `{"records":[` + s + `]}` }
	const ts = `"updated_at":"2026-11-22T10:00:00.000Z"`
	b3 := `"b3":"` + id("x").String() + `"`
	cases := []struct {
		name, body string
		index      int
		field      string
	}{
		{"not json", `{`, -1, "records"},
		{"trailing", rec(`{"name":"a","version":1,`+b3+`,`+ts+`}`) + `x`, -1, "records"},
		{"unknown field", rec(`{"name":"a","version":1,` + b3 + `,` + ts + `,"x":1}`), 0, ""},
		{"no name", rec(`{"version":1,` + b3 + `,` + ts + `}`), 0, "name"},
		{"no version", rec(`{"name":"a",` + b3 + `,` + ts + `}`), 0, "version"},
		{"no time", rec(`{"name":"a","version":1,` + b3 + `}`), 0, "updated_at"},
		{"bad time", rec(`{"name":"a","version":1,` + b3 + `,"updated_at":"yesterday"}`), 0, "updated_at"},
		{"live without b3", rec(`{"name":"a","version":1,` + ts + `}`), 0, "b3"},
		{"tombstone with b3", rec(`{"name":"a","version":1,"deleted":true,` + b3 + `,` + ts + `}`), 0, "b3"},
		{"bad b3", rec(`{"name":"a","version":1,"b3":"b3:XY",` + ts + `}`), 0, "b3"},
		{"version string", rec(`{"name":"a","version":"1",` + b3 + `,` + ts + `}`), 0, "version"},
		{"bad name", rec(`{"name":"A","version":1,` + b3 + `,` + ts + `}`), 0, "name"},
		{"zero version", rec(`{"name":"a","version":0,` + b3 + `,` + ts + `}`), 0, "version"},
		{"no records", `{"records":[]}`, -1, "records"},
	}
	for _, tc := range cases {
		var ie *indexapi.InvalidError
		_, err := DecodeReplicaNames([]byte(tc.body))
		if !errors.As(err, &ie) || ie.Index != tc.index || (tc.field != "" && ie.Field != tc.field) {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
}

// state renders a DB's names (current and history) for comparison.
func state(t *testing.T, db *DB, names []string) string {
	t.Helper()
	var b strings.Builder
	for _, n := range names {
		hist, err := db.History(context.Background(), n)
		if errors.Is(err, ErrNotFound) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		cur, err := db.Get(context.Background(), n)
		if err != nil && !errors.Is(err, ErrDeleted) {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "%s cur=%v/%v/%x/%d:", n, cur.Version, cur.Deleted, cur.Target[:4], cur.UpdatedAt.UnixMilli())
		for _, h := range hist {
			fmt.Fprintf(&b, " %v/%v/%x/%d", h.Version, h.Deleted, h.Target[:4], h.UpdatedAt.UnixMilli())
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// expected is the model of ApplyImport: per name the superseding record,
// and per version the superseding record, keeping the top keep versions.
func expected(recs []Record, names []string, keep int) string {
	var b strings.Builder
	for _, n := range names {
		best := map[uint64]Record{}
		for _, r := range recs {
			if r.Name != n {
				continue
			}
			if have, ok := best[r.Version]; !ok || Supersedes(r, have) {
				best[r.Version] = r
			}
		}
		if len(best) == 0 {
			continue
		}
		var vs []uint64
		for v := range best {
			vs = append(vs, v)
		}
		slices.Sort(vs)
		slices.Reverse(vs)
		cur := best[vs[0]]
		fmt.Fprintf(&b, "%s cur=%v/%v/%x/%d:", n, cur.Version, cur.Deleted, cur.Target[:4], cur.UpdatedAt.UnixMilli())
		for _, v := range vs[:min(keep, len(vs))] {
			h := best[v]
			fmt.Fprintf(&b, " %v/%v/%x/%d", h.Version, h.Deleted, h.Target[:4], h.UpdatedAt.UnixMilli())
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// TestApplyImportConverges is the property test of docs/cluster.md §13: the
// same records delivered in any order, any batching and with duplicates
// leave every replica in the same state, the model's.
func TestApplyImportConverges(t *testing.T) {
	names := []string{"a.example", "b.example", "c.example"}
	for seed := uint64(0); seed < 60; seed++ {
		rng := rand.New(rand.NewPCG(seed, 7))
		var recs []Record
		for range 4 + rng.IntN(20) {
			n := names[rng.IntN(len(names))]
			v := uint64(1 + rng.IntN(6))
			ms := rng.IntN(3)
			if rng.IntN(4) == 0 {
				recs = append(recs, tomb(n, v, ms))
			} else {
				recs = append(recs, live(n, v, fmt.Sprint(rng.IntN(3)), ms))
			}
		}
		want := expected(recs, names, 4)
		for order := range 6 {
			db, err := Open(context.Background(), memkv.New(), newClock().Now, WithLimits(Limits{HistoryLen: 4}))
			if err != nil {
				t.Fatal(err)
			}
			delivery := slices.Clone(recs)
			for range rng.IntN(4) { // redeliveries
				delivery = append(delivery, recs[rng.IntN(len(recs))])
			}
			rng.Shuffle(len(delivery), func(i, j int) { delivery[i], delivery[j] = delivery[j], delivery[i] })
			for len(delivery) > 0 {
				k := 1 + rng.IntN(len(delivery))
				if _, err := applyImport(context.Background(), db, delivery[:k]); err != nil {
					t.Fatal(err)
				}
				delivery = delivery[k:]
			}
			if got := state(t, db, names); got != want {
				t.Fatalf("seed %d order %d:\n got %s\nwant %s", seed, order, got, want)
			}
		}
	}
}

// applyImport applies recs as the next import entry of db's log, with the
// history length in force.
func applyImport(ctx context.Context, db *DB, recs []Record) (int, error) {
	index, err := db.LoggedIndex(ctx)
	if err != nil {
		return 0, err
	}
	return db.ApplyImport(ctx, recs, db.Limits().HistoryLen, index+1)
}
