package repair

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/ronhq/ron/runtime/cluster"
	"github.com/ronhq/ron/store"
)

var longAgo = time.Now().Add(-24 * time.Hour)

func threeAlive() []cluster.Member {
	return []cluster.Member{member("a", longAgo), member("b", longAgo), member("s", longAgo)}
}

func sizes(infos []store.Info) int64 {
	var n int64
	for _, in := range infos {
		n += in.Size
	}
	return n
}

// TestPassQueuesAndSkips: self in T with the other target lacking the
// object pushes on the normal lane; overflow is skipped and counted.
func TestPassQueuesAndSkips(t *testing.T) {
	ms := threeAlive()
	infos := idsWhere(5, 2, ms, func(top []string) bool { return contains(top, "s") })
	cfg := testConfig()
	cfg.Queue = 2
	g := newRig(t, cfg, cluster.NewView("s", ms, longAgo), newFakeLocal(infos...))
	g.pass(context.Background())
	p := g.Progress()
	if p.Scanned != 5 || p.Total != 5 || p.Queued != 2 || p.Skipped != 3 || p.UnderReplicated != 5 {
		t.Fatalf("progress %+v", p)
	}
	if p.BytesPending != sizes(infos) || p.EtaS == nil || p.State != "transferring" {
		t.Fatalf("pending %d (want %d), eta %v, state %s", p.BytesPending, sizes(infos), p.EtaS, p.State)
	}
	if g.lanes.normal.Len() != 2 || g.lanes.urgent.Len() != 0 {
		t.Fatalf("lanes normal %d urgent %d", g.lanes.normal.Len(), g.lanes.urgent.Len())
	}
	if g.metric("repair_skipped_total", "reason", "full") != 3 || g.metric("repair_under_replicated_objects") != 5 ||
		g.metric("repair_passes_total") != 1 || g.metric("rf_observed") != 1 || g.metric("rf_target") != 2 {
		t.Fatalf("metrics %v", g.metrics.Values())
	}
	// A second pass does not queue what is still pending.
	g.pass(context.Background())
	if p := g.Progress(); p.Queued != 0 || p.Skipped != 3 || g.lanes.normal.Len() != 2 {
		t.Fatalf("second pass %+v, normal lane %d", p, g.lanes.normal.Len())
	}
}

// TestPassUrgentOnlyCopy: self outside T while no member of T holds the
// object: it pushes to every member of T on the urgent lane.
func TestPassUrgentOnlyCopy(t *testing.T) {
	ms := threeAlive()
	infos := idsWhere(3, 2, ms, func(top []string) bool { return !contains(top, "s") })
	g := newRig(t, testConfig(), cluster.NewView("s", ms, longAgo), newFakeLocal(infos...))
	g.pass(context.Background())
	if g.lanes.urgent.Len() != 6 || g.lanes.normal.Len() != 0 {
		t.Fatalf("urgent %d normal %d", g.lanes.urgent.Len(), g.lanes.normal.Len())
	}
	if got := g.metric("repair_bytes_total", "phase", "planned"); got != float64(2*sizes(infos)) {
		t.Fatalf("planned bytes %v", got)
	}
}

// TestPassUndecided: a member that does not answer leaves its ids
// undecided (one error); the others are decided.
func TestPassUndecided(t *testing.T) {
	ms := threeAlive()
	infos := idsWhere(4, 2, ms, func(top []string) bool { return contains(top, "s") && contains(top, "a") })
	g := newRig(t, testConfig(), cluster.NewView("s", ms, longAgo), newFakeLocal(infos...))
	g.remote.fail["http://a"] = true
	g.pass(context.Background())
	p := g.Progress()
	if p.Scanned != 4 || p.Errors != 1 || p.Queued != 0 || p.UnderReplicated != 0 || p.LastError == "" {
		t.Fatalf("progress %+v", p)
	}
}

// TestPassDepartedNotAsked: a member departed within repair_after is not
// asked and assumed to hold its share; no traffic.
func TestPassDepartedNotAsked(t *testing.T) {
	now := time.Now()
	ms := []cluster.Member{departed("a", now.Add(-5*time.Second)), member("b", longAgo), member("s", longAgo)}
	infos := idsWhere(4, 2, ms, func(top []string) bool { return contains(top, "a") && contains(top, "s") })
	g := newRig(t, testConfig(), cluster.NewView("s", ms, now), newFakeLocal(infos...))
	g.pass(context.Background())
	if g.remote.calls["http://a"] != 0 || g.lanes.urgent.Len()+g.lanes.normal.Len() != 0 {
		t.Fatalf("calls %v, queued %d", g.remote.calls, g.lanes.urgent.Len()+g.lanes.normal.Len())
	}
	if p := g.Progress(); p.UnderReplicated != 0 || g.metric("rf_observed") != 2 {
		t.Fatalf("progress %+v rf_observed %v", p, g.metric("rf_observed"))
	}
}

// TestPassLostIsUrgent: once a member is gone longer than repair_after,
// the objects it held are pushed to their new T urgently.
func TestPassLostIsUrgent(t *testing.T) {
	now := time.Now()
	ms := []cluster.Member{departed("a", now.Add(-time.Minute)), member("b", longAgo), member("s", longAgo)}
	infos := idsWhere(3, 2, ms, func(top []string) bool { return contains(top, "a") && contains(top, "s") })
	g := newRig(t, testConfig(), cluster.NewView("s", ms, now), newFakeLocal(infos...))
	g.pass(context.Background())
	if g.lanes.urgent.Len() != 3 || g.lanes.normal.Len() != 0 {
		t.Fatalf("urgent %d normal %d", g.lanes.urgent.Len(), g.lanes.normal.Len())
	}
}

// TestPassExcess covers the drop conditions of docs/cluster.md §5.
func TestPassExcess(t *testing.T) {
	ms := threeAlive()
	infos := idsWhere(3, 2, ms, func(top []string) bool { return !contains(top, "s") })
	ids := []store.ID{infos[0].ID, infos[1].ID, infos[2].ID}
	cases := []struct {
		name     string
		changed  time.Time
		drop     bool
		partial  bool // b does not hold the first object
		busy     bool // a push of the first object is still pending
		dropErr  error
		wantDrop int
		wantKept float64
	}{
		{"stable, all confirmed", longAgo, true, false, false, nil, 3, 0},
		{"membership changed within repair_after", time.Now(), true, false, false, nil, 0, 3},
		{"drop_excess off", longAgo, false, false, false, nil, 0, 3},
		{"one member lacks one object", longAgo, true, true, false, nil, 2, 0},
		{"pending transfer of the object", longAgo, true, false, true, nil, 2, 1},
		{"delete fails", longAgo, true, false, false, errors.New("disk"), 0, 3},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := testConfig()
			cfg.DropExcess = c.drop
			g := newRig(t, cfg, cluster.NewView("s", ms, c.changed), newFakeLocal(infos...))
			g.exec.dropErr = c.dropErr
			g.remote.hold("a", ids...)
			if c.partial {
				g.remote.hold("b", ids[1:]...)
			} else {
				g.remote.hold("b", ids...)
			}
			if c.busy {
				g.lanes.claim(Item{Kind: KindPush, ID: ids[0], Target: "x"})
			}
			g.pass(context.Background())
			if got := len(g.exec.dropped()); got != c.wantDrop {
				t.Fatalf("dropped %d, want %d", got, c.wantDrop)
			}
			if got := g.metric("repair_excess_objects"); got != c.wantKept {
				t.Fatalf("excess gauge %v, want %v", got, c.wantKept)
			}
		})
	}
}

// TestObservedRFBeforeAnyPass: the gauges exist at 0 (rf_* at the target)
// before the first pass.
func TestObservedRFBeforeAnyPass(t *testing.T) {
	g := newRig(t, testConfig(), cluster.NewView("s", threeAlive(), longAgo), newFakeLocal())
	for _, name := range []string{"repair_under_replicated_objects", "repair_excess_objects", "repair_pending_bytes",
		"repair_eta_seconds", "repair_rate_bytes_per_second", "repair_pass_duration_seconds", "repair_passes_total"} {
		if v, ok := g.metrics.Values()["ron_"+name+`{role="storage"}`]; !ok || v != 0 {
			t.Fatalf("%s = %v (registered %t)", name, v, ok)
		}
	}
	if g.metric("repair_pace_bytes_per_second") != 50<<20 || g.metric("rf_observed") != 2 {
		t.Fatalf("metrics %v", g.metrics.Values())
	}
	if p := g.Progress(); p.State != "idle" || p.EtaS != nil || p.BoostUntil != nil {
		t.Fatalf("progress %+v", p)
	}
}
