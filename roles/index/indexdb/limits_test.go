package indexdb

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/ronhq/ron/internal/testclock"
	"github.com/ronhq/ron/roles/index/indexapi"
)

// TestSetLimits: name_history, providers_per_object and provider_ttl_max
// change while the DB is open and apply to the next write.
func TestSetLimits(t *testing.T) {
	forEach(t, func(t *testing.T, db *DB, c *testclock.Clock) {
		if got := db.Limits(); got != (Limits{MaxTTL: DefaultMaxTTL, HistoryLen: HistoryLen, ProvidersPerObject: MaxProvidersPerObject}) {
			t.Fatalf("default limits %+v", got)
		}
		for i := 1; i <= 6; i++ {
			mustSet(t, db, "n", fmt.Sprint(i), indexapi.Cond{})
		}
		db.SetLimits(Limits{HistoryLen: 3, ProvidersPerObject: 2, MaxTTL: time.Minute})
		if h, _ := db.History(ctx, "n"); len(h) != 3 || h[0].Version != 6 {
			t.Fatalf("history answers the new length at once: %+v", h)
		}
		mustSet(t, db, "n", "7", indexapi.Cond{})
		if h, err := db.History(ctx, "n"); err != nil || len(h) != 3 || h[2].Version != 5 {
			t.Fatalf("history after shrinking to 3: %+v %v", h, err)
		}
		obj := id("obj")
		for i, node := range []string{"a", "b", "c"} {
			c.Advance(time.Second)
			if _, err := db.Announce(ctx, []indexapi.Announcement{{ID: obj, Node: node, Addr: "http://h:1",
				TTL: time.Duration(30+i) * time.Second}}); err != nil {
				t.Fatal(err)
			}
		}
		ps, err := db.Providers(ctx, obj, "", 64)
		if err != nil || len(ps) != 2 || ps[0].Node == "a" || ps[1].Node == "a" {
			t.Fatalf("cap 2 keeps the two expiring last: %+v %v", ps, err)
		}
		_, err = db.Announce(ctx, []indexapi.Announcement{{ID: obj, Node: "d", Addr: "http://h:1", TTL: 2 * time.Minute}})
		var ie *indexapi.InvalidError
		if !errors.As(err, &ie) || ie.Field != "ttl_s" {
			t.Fatalf("TTL above the new max: %v", err)
		}
		db.SetLimits(Limits{})
		if got := db.Limits(); got.HistoryLen != HistoryLen || got.MaxTTL != DefaultMaxTTL {
			t.Fatalf("zero limits are the defaults: %+v", got)
		}
	})
}
