package indexdb

import (
	"errors"
	"testing"

	"github.com/ronhq/ron/internal/testclock"
	"github.com/ronhq/ron/roles/index/indexapi"
)

// TestParkAndImport: a database with names and no log entry parks them
// (names and history leave the replicated state, nothing is lost), hands
// them out as whole names in batches, and an import entry brings them back
// through the log, once: a replay is ErrApplied. A database that follows
// the log parks nothing.
func TestParkAndImport(t *testing.T) {
	forEach(t, func(t *testing.T, db *DB, c *testclock.Clock) {
		for _, n := range []string{"a.example", "b.example", "c.example"} {
			if _, err := db.Set(ctx, n, id(n+"1"), indexapi.Cond{}); err != nil {
				t.Fatal(err)
			}
			if _, err := db.Set(ctx, n, id(n+"2"), indexapi.Cond{}); err != nil {
				t.Fatal(err)
			}
		}
		moved, err := db.ParkUnlogged(ctx)
		if err != nil || moved != 3 {
			t.Fatalf("park: %d %v", moved, err)
		}
		if _, err := db.Get(ctx, "a.example"); !errors.Is(err, ErrNotFound) {
			t.Fatalf("a parked name is still live: %v", err)
		}
		recs, names, err := db.PendingImport(ctx, 4)
		if err != nil || len(names) != 2 || names[0] != "a.example" || len(recs) != 4 {
			t.Fatalf("first batch: %v %v %v", names, recs, err)
		}
		if _, err := db.ApplyImport(ctx, recs, db.Limits().HistoryLen, 1); err != nil {
			t.Fatal(err)
		}
		if _, err := db.ApplyImport(ctx, recs, db.Limits().HistoryLen, 1); !errors.Is(err, ErrApplied) {
			t.Fatalf("replayed import: %v", err)
		}
		if err := db.DropImported(ctx, names); err != nil {
			t.Fatal(err)
		}
		hist, err := db.History(ctx, "a.example")
		if err != nil || len(hist) != 2 || hist[0].Version != 2 || hist[0].Target != id("a.example2") {
			t.Fatalf("imported history: %+v %v", hist, err)
		}
		recs, names, _ = db.PendingImport(ctx, 1000)
		if len(names) != 1 || names[0] != "c.example" || len(recs) != 2 {
			t.Fatalf("second batch: %v %v", names, recs)
		}
		if moved, err := db.ParkUnlogged(ctx); err != nil || moved != 0 {
			t.Fatalf("park after a log entry: %d %v", moved, err)
		}
		if _, err := db.ApplyImport(ctx, recs, 0, 2); !errors.Is(err, indexapi.ErrInvalid) {
			t.Fatalf("keep 0: %v", err)
		}
	})
}
