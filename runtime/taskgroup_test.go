package runtime

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/VictoriaMetrics/metrics"
	"github.com/rs/zerolog"
)

// failing returns a worker that reports each call's time on calls and
// fails (or panics, when panicky) every time.
func failing(calls chan<- time.Time, panicky bool) func(context.Context) error {
	return func(ctx context.Context) error {
		select {
		case calls <- time.Now():
		case <-ctx.Done():
			return nil
		}
		if panicky {
			panic("boom")
		}
		return errors.New("boom")
	}
}

func TestTaskGroupRestartBackoff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		set := metrics.NewSet()
		g := NewTaskGroup("storage", zerolog.Nop(), NewMetrics(set))
		calls := make(chan time.Time)
		g.Go("repair", failing(calls, false))
		prev := <-calls
		for n := range 12 {
			at := <-calls
			want := min(100*time.Millisecond<<n, 30*time.Second)
			gap := at.Sub(prev)
			lo, hi := time.Duration(float64(want)*0.8), min(time.Duration(float64(want)*1.2), 30*time.Second)
			if gap < lo || gap > hi {
				t.Errorf("restart %d after %v, want %v ±20%%", n, gap, want)
			}
			prev = at
		}
		if aborted := g.Stop(context.Background()); aborted != 0 {
			t.Fatalf("aborted = %d", aborted)
		}
		if g.Restarts() != 12 {
			t.Errorf("Restarts = %d, want 12", g.Restarts())
		}
		if v := metric(t, set, `ron_service_restarts_total{role="storage"}`); v != 12 {
			t.Errorf("restarts metric = %v", v)
		}
		if v := metric(t, set, `ron_tasks_spawned_total{role="storage",kind="worker"}`); v != 1 {
			t.Errorf("spawned metric = %v", v)
		}
	})
}

func TestTaskGroupPanicsDegradeAndRecover(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		set := metrics.NewSet()
		bus := NewBus(NewMetrics(set))
		sub := bus.Subscribe("test")
		defer sub.Close()
		g := NewTaskGroup("index", zerolog.Nop(), NewMetrics(set), WithBus(bus),
			WithBackoff(Backoff{Base: time.Second, Max: time.Second, Factor: 1}))
		calls := make(chan time.Time)
		g.Go("lookup", failing(calls, true))
		for range 6 {
			<-calls
		}
		synctest.Wait() // sixth panic recorded; worker sleeping in its backoff
		if !g.Degraded() {
			t.Fatal("6 crashes within 60 s: want degraded")
		}
		g.Stop(context.Background())
		late := time.NewTimer(61 * time.Second)
		<-late.C
		if g.Degraded() {
			t.Fatal("after the window: want not degraded")
		}
		if v := metric(t, set, `ron_tasks_panicked_total{role="index",task="lookup"}`); v != 6 {
			t.Errorf("panicked metric = %v, want 6", v)
		}
		ev := (<-sub.C()).(ServiceCrashed)
		if ev.Service != "index/lookup" || ev.Reason != "panic: boom" {
			t.Errorf("event = %+v", ev)
		}
	})
}

func TestTaskGroupNilReturnEndsWorker(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := NewTaskGroup("edge", zerolog.Nop(), nil)
		ran := 0
		g.Go("once", func(context.Context) error { ran++; return nil })
		synctest.Wait()
		if ran != 1 || g.Running() != 0 || g.Restarts() != 0 {
			t.Fatalf("ran=%d running=%d restarts=%d", ran, g.Running(), g.Restarts())
		}
		g.Stop(context.Background())
		g.Go("late", func(context.Context) error { ran++; return nil })
		synctest.Wait()
		if ran != 1 {
			t.Fatal("Go after Stop started a worker")
		}
	})
}

func TestTaskGroupErrorAfterStopIsNotRestarted(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := NewTaskGroup("edge", zerolog.Nop(), nil)
		g.Go("loop", func(ctx context.Context) error { <-ctx.Done(); return ctx.Err() })
		if n := g.Stop(context.Background()); n != 0 || g.Restarts() != 0 {
			t.Fatalf("aborted=%d restarts=%d", n, g.Restarts())
		}
	})
}

func TestTaskGroupStopCountsStragglers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		set := metrics.NewSet()
		g := NewTaskGroup("gateway", zerolog.Nop(), NewMetrics(set))
		release := make(chan struct{})
		g.Go("polite", func(ctx context.Context) error { <-ctx.Done(); return nil })
		g.Go("stubborn", func(context.Context) error { <-release; return nil })
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		start := time.Now()
		if n := g.Stop(ctx); n != 1 {
			t.Fatalf("aborted = %d, want 1", n)
		}
		if el := time.Since(start); el != 2*time.Second {
			t.Fatalf("Stop took %v, want the 2 s deadline", el)
		}
		g.Stop(ctx) // idempotent: not counted twice
		if v := metric(t, set, `ron_tasks_aborted_total{role="gateway",kind="worker"}`); v != 1 {
			t.Errorf("aborted metric = %v", v)
		}
		close(release)
		synctest.Wait()
		if g.Running() != 0 {
			t.Fatal("straggler still running after release")
		}
	})
}
