package indexdb

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/ronhq/ron/internal/testclock"
	"github.com/ronhq/ron/roles/index/indexapi"
)

var leaderTime = time.Date(2030, 1, 2, 3, 4, 5, 678_900_000, time.UTC)

// TestApplyLoggedIsDeterministicAndOnce: a logged write takes its time and
// history length from the entry, never the server's clock or limits; a
// replayed entry changes nothing; a failed verdict records nothing, so its
// replay meets the same verdict.
func TestApplyLoggedIsDeterministicAndOnce(t *testing.T) {
	forEach(t, func(t *testing.T, db *DB, _ *testclock.Clock) {
		ctx := context.Background()
		w := NameWrite{Name: "site.example", Target: id("v1"), Cond: indexapi.IfAbsent(), At: leaderTime, Keep: 2}
		rec, err := db.ApplyLogged(ctx, w, 5)
		if err != nil || rec.Version != 1 || !rec.UpdatedAt.Equal(leaderTime.Truncate(time.Millisecond)) || rec.Target != id("v1") {
			t.Fatalf("first apply = %+v, %v", rec, err)
		}
		if _, err := db.ApplyLogged(ctx, w, 5); !errors.Is(err, ErrApplied) {
			t.Fatalf("replay of index 5 = %v, want ErrApplied", err)
		}
		if _, err := db.ApplyLogged(ctx, NameWrite{Name: "site.example", Target: id("x"), At: leaderTime, Keep: 2}, 4); !errors.Is(err, ErrApplied) {
			t.Fatalf("an older index = %v, want ErrApplied", err)
		}
		bad := NameWrite{Name: "site.example", Target: id("v2"), Cond: indexapi.IfMatch(7), At: leaderTime, Keep: 2}
		for range 2 {
			var pe *PreconditionError
			if _, err := db.ApplyLogged(ctx, bad, 6); !errors.As(err, &pe) || pe.Current != 1 {
				t.Fatalf("failed precondition = %v", err)
			}
		}
		if n, _ := db.LoggedIndex(ctx); n != 5 {
			t.Fatalf("logged index after a failed verdict = %d, want 5", n)
		}
		for i, v := range []string{"v2", "v3", "v4"} {
			w := NameWrite{Name: "site.example", Target: id(v), Cond: indexapi.IfMatch(uint64(i + 1)), At: leaderTime.Add(time.Duration(i) * time.Second), Keep: 2}
			if _, err := db.ApplyLogged(ctx, w, uint64(7+i)); err != nil {
				t.Fatal(err)
			}
		}
		if h, _ := db.History(ctx, "site.example"); len(h) != 2 || h[0].Version != 4 || h[1].Version != 3 {
			t.Fatalf("history kept by the entry's Keep = %+v", h)
		}
		del := NameWrite{Name: "site.example", Delete: true, Cond: indexapi.IfLive(), At: leaderTime, Keep: 2}
		if rec, err := db.ApplyLogged(ctx, del, 10); err != nil || !rec.Deleted || rec.Version != 5 {
			t.Fatalf("logged delete = %+v, %v", rec, err)
		}
	})
}

// TestApplyLoggedRefusesBadEntries is the table of entries no leader
// should log: each is refused and changes nothing.
func TestApplyLoggedRefusesBadEntries(t *testing.T) {
	forEach(t, func(t *testing.T, db *DB, _ *testclock.Clock) {
		ctx := context.Background()
		for _, w := range []NameWrite{
			{Name: "", Target: id("a"), Keep: 1},
			{Name: "Bad Name", Target: id("a"), Keep: 1},
			{Name: "ok.example", Target: id("a"), Keep: 0},
			{Name: "ok.example", Delete: true, Keep: 1}, // never written
		} {
			if _, err := db.ApplyLogged(ctx, w, 1); err == nil {
				t.Errorf("%+v applied", w)
			}
		}
		if n, _ := db.LoggedIndex(ctx); n != 0 {
			t.Fatalf("logged index = %d after refused entries", n)
		}
	})
}

// TestNamesSnapshotRoundTrip: a snapshot restored into another database
// gives the same names, history and applied index, and replaces what that
// database held; a snapshot that does not parse changes nothing.
func TestNamesSnapshotRoundTrip(t *testing.T) {
	forEach(t, func(t *testing.T, db *DB, _ *testclock.Clock) {
		ctx := context.Background()
		for i, n := range []string{"a.example", "b.example", "a.example"} {
			if _, err := db.ApplyLogged(ctx, NameWrite{Name: n, Target: id(n + string(rune('0'+i))), At: leaderTime, Keep: 10}, uint64(i+1)); err != nil {
				t.Fatal(err)
			}
		}
		var snap bytes.Buffer
		if err := db.SnapshotNames(ctx, &snap); err != nil {
			t.Fatal(err)
		}
		other, err := Open(ctx, engines[0].open(t), newClock().Now)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := other.Set(ctx, "stale.example", id("s"), indexapi.Cond{}); err != nil {
			t.Fatal(err)
		}
		if err := other.RestoreNames(ctx, bytes.NewReader(snap.Bytes())); err != nil {
			t.Fatal(err)
		}
		if _, err := other.Get(ctx, "stale.example"); !errors.Is(err, ErrNotFound) {
			t.Fatalf("a name the snapshot lacks survived the restore: %v", err)
		}
		for _, n := range []string{"a.example", "b.example"} {
			want, _ := db.History(ctx, n)
			got, _ := other.History(ctx, n)
			if len(got) != len(want) || got[0] != want[0] {
				t.Fatalf("%s history after restore = %+v, want %+v", n, got, want)
			}
		}
		if n, _ := other.LoggedIndex(ctx); n != 3 {
			t.Fatalf("restored logged index = %d", n)
		}
		for _, bad := range []string{"", "{}\n", `{"applied":3}` + "\n" + `{"b":"providers","k":"YQ==","v":"YQ=="}`, `{"applied":3}` + "\nnot json"} {
			if err := other.RestoreNames(ctx, strings.NewReader(bad)); err == nil {
				t.Errorf("snapshot %q restored", bad)
			}
		}
		if got, err := other.Get(ctx, "b.example"); err != nil || got.Version != 1 {
			t.Fatalf("a failed restore changed the names: %+v, %v", got, err)
		}
	})
}
