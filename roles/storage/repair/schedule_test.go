package repair

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/ronhq/ron/runtime/cluster"
)

// TestPassTiming drives the planner under synctest: a pass exactly when a
// departed member passes repair_after, 10 s after a join, at once on
// request, and interval after the previous pass otherwise. A member back
// within repair_after starts only its join pass.
func TestPassTiming(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		t0 := time.Now()
		cfg := testConfig() // repair_after 30 s, interval 1 h
		ms := []cluster.Member{member("a", t0), departed("b", t0), member("s", t0)}
		g := newRig(t, cfg, cluster.NewView("s", ms, t0), newFakeLocal())
		g.start(t)

		time.Sleep(100 * time.Second)
		// c joins at 100 s.
		ms = append(ms, member("c", time.Now()))
		g.members.Set(cluster.NewView("s", ms, time.Now()))
		time.Sleep(100 * time.Second)
		g.RunPass() // at 200 s
		time.Sleep(100 * time.Second)
		// a departs at 300 s and comes back 10 s later: only the join pass.
		ms[0] = departed("a", time.Now())
		g.members.Set(cluster.NewView("s", ms, time.Now()))
		time.Sleep(10 * time.Second)
		ms[0] = member("a", time.Now())
		g.members.Set(cluster.NewView("s", ms, time.Now()))
		time.Sleep(time.Hour + 10*time.Second)
		synctest.Wait()

		want := []time.Duration{30 * time.Second, 110 * time.Second, 200 * time.Second,
			320 * time.Second, 320*time.Second + time.Hour}
		got := g.local.passTimes()
		if len(got) != len(want) {
			t.Fatalf("passes at %v, want %v", offsets(got, t0), want)
		}
		for i := range want {
			if got[i].Sub(t0) != want[i] {
				t.Fatalf("passes at %v, want %v", offsets(got, t0), want)
			}
		}
		if g.metric("repair_passes_total") != float64(len(want)) {
			t.Fatalf("passes_total %v", g.metric("repair_passes_total"))
		}
	})
}

func offsets(ts []time.Time, t0 time.Time) []time.Duration {
	out := make([]time.Duration, len(ts))
	for i, t := range ts {
		out[i] = t.Sub(t0)
	}
	return out
}

// TestPassIntervalReload: a shorter repair_interval applies to the wait in
// progress.
func TestPassIntervalReload(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		t0 := time.Now()
		cfg := testConfig()
		cfg.Interval = 5 * time.Second
		g := newRig(t, cfg, cluster.NewView("s", []cluster.Member{member("s", t0)}, t0), newFakeLocal())
		g.start(t)
		// The first pass waits max(interval, 10 s); the next is due at 15 s.
		time.Sleep(12 * time.Second)
		cfg.Interval = time.Second
		g.Apply(cfg)
		time.Sleep(1500 * time.Millisecond)
		synctest.Wait()
		// At 12 s the pass ended at 10 s is overdue under the new interval.
		got := offsets(g.local.passTimes(), t0)
		if len(got) != 3 || got[0] != 10*time.Second || got[1] != 12*time.Second || got[2] != 13*time.Second {
			t.Fatalf("passes at %v", got)
		}
	})
}
