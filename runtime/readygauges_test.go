package runtime

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/rs/zerolog"
)

func TestReadinessGauges(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		met := NewMetrics(nil)
		mgr := NewManager(ManagerOptions{Log: zerolog.Nop(), Metrics: met, DrainDeadline: time.Second})
		rec := &recorder{}
		a := &fakeRole{name: "storage", rec: rec}
		b := &fakeRole{name: "edge", rec: rec, ready: Readiness{Missing: []string{"edge:pack:w"}, Degraded: []string{"edge:fill_queue"}}}
		mgr.Add(a, "")
		mgr.Add(b, "")
		g := NewReadinessGauges(mgr, met)
		want := func(role string, ready, degraded float64) {
			t.Helper()
			v := met.Values()
			if got := v[`ron_role_ready{role="`+role+`"}`]; got != ready {
				t.Errorf("ron_role_ready{%s} = %v, want %v", role, got, ready)
			}
			if got := v[`ron_role_degraded{role="`+role+`"}`]; got != degraded {
				t.Errorf("ron_role_degraded{%s} = %v, want %v", role, got, degraded)
			}
		}
		want("storage", 0, 0) // before the first refresh nothing is claimed ready
		if err := mgr.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		g.Refresh(context.Background())
		want("storage", 1, 0)
		want("edge", 0, 1)
		b.ready = Readiness{}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { g.Run(ctx, ReadinessRefresh); close(done) }() // refreshes at once
		synctest.Wait()
		want("edge", 1, 0)
		time.Sleep(3 * ReadinessRefresh) // fake clock: a few ticks, then stop
		cancel()
		<-done
	})
}
