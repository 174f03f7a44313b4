package fillq

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/rs/zerolog"
	"go.uber.org/goleak"

	"github.com/ronhq/ron/runtime"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// started runs q's workers on a fresh group, stopped at cleanup.
func started(t *testing.T, q *Queue, workers int) *runtime.TaskGroup {
	g := runtime.NewTaskGroup("edge", zerolog.Nop(), nil)
	q.Start(g, workers)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		g.Stop(ctx)
	})
	return g
}

func TestSubmitRunsAndRefusesWhenFull(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := runtime.NewMetrics(nil)
		q := New(m, "edge", 2)
		block := make(chan struct{})
		ran := make(chan string, 4)
		job := func(name string) Job {
			return Job{Run: func(context.Context) { <-block; ran <- name }}
		}
		started(t, q, 1)
		if err := q.Submit(job("a")); err != nil {
			t.Fatal(err)
		}
		synctest.Wait() // the worker holds "a"
		for _, n := range []string{"b", "c"} {
			if err := q.Submit(job(n)); err != nil {
				t.Fatalf("submit %s: %v", n, err)
			}
		}
		if err := q.Submit(job("d")); !errors.Is(err, ErrBusy) {
			t.Fatalf("submit on a full queue = %v, want ErrBusy", err)
		}
		if !q.Degraded() {
			t.Fatal("a full queue is not degraded")
		}
		close(block)
		for _, want := range []string{"a", "b", "c"} {
			if got := <-ran; got != want {
				t.Fatalf("ran %s, want %s (FIFO)", got, want)
			}
		}
		synctest.Wait()
		if q.Degraded() || q.Len() != 0 || q.Cap() != 2 {
			t.Fatalf("after draining: degraded %v len %d cap %d", q.Degraded(), q.Len(), q.Cap())
		}
		if v := m.Values()[`ron_tasks_spawned_total{role="edge",kind="fill"}`]; v != 3 {
			t.Fatalf("tasks_spawned_total{kind=fill} = %v, want 3", v)
		}
	})
}

func TestExpiredJobIsDropped(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := runtime.NewMetrics(nil)
		q := New(m, "edge", 4)
		var got error
		ran := false
		if err := q.Submit(Job{Deadline: time.Now().Add(time.Second),
			Run: func(context.Context) { ran = true }, Dropped: func(err error) { got = err }}); err != nil {
			t.Fatal(err)
		}
		time.Sleep(2 * time.Second) // fake clock: the deadline passes while queued
		started(t, q, 1)
		synctest.Wait()
		if ran || !errors.Is(got, ErrExpired) {
			t.Fatalf("ran %v, dropped with %v; want dropped with ErrExpired", ran, got)
		}
		if v := m.Values()[`ron_queue_dropped_total{role="edge",queue="work"}`]; v != 1 {
			t.Fatalf("queue_dropped_total = %v, want 1", v)
		}
	})
}

func TestCloseDropsQueuedAndRefusesNew(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := New(nil, "edge", 4)
		var errs []error
		for range 3 {
			if err := q.Submit(Job{Run: func(context.Context) { t.Error("queued job ran after Close") },
				Dropped: func(err error) { errs = append(errs, err) }}); err != nil {
				t.Fatal(err)
			}
		}
		q.Close()
		if len(errs) != 3 || !errors.Is(errs[0], ErrDraining) {
			t.Fatalf("dropped %v, want 3 × ErrDraining", errs)
		}
		if err := q.Submit(Job{Run: func(context.Context) {}}); !errors.Is(err, ErrDraining) {
			t.Fatalf("submit after Close = %v, want ErrDraining", err)
		}
		started(t, q, 2)
		synctest.Wait()
	})
}

func TestDrainWaitsThenAborts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := runtime.NewMetrics(nil)
		q := New(m, "edge", 4)
		started(t, q, 2)
		quick := make(chan struct{})
		q.Submit(Job{Run: func(context.Context) { time.Sleep(time.Second); close(quick) }})
		aborted := make(chan error, 1)
		q.Submit(Job{Run: func(ctx context.Context) { <-ctx.Done(); aborted <- ctx.Err() }})
		synctest.Wait()
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		if n := q.Drain(ctx); n != 1 {
			t.Fatalf("Drain aborted %d jobs, want 1", n)
		}
		<-quick
		if err := <-aborted; !errors.Is(err, context.Canceled) {
			t.Fatalf("aborted job saw %v", err)
		}
		if v := m.Values()[`ron_tasks_aborted_total{role="edge",kind="fill"}`]; v != 1 {
			t.Fatalf("tasks_aborted_total{kind=fill} = %v, want 1", v)
		}
	})
}

func TestDrainReturnsWhenJobsEnd(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := New(nil, "edge", 1)
		started(t, q, 1)
		done := make(chan struct{})
		q.Submit(Job{Run: func(context.Context) { time.Sleep(time.Second); close(done) }})
		synctest.Wait()
		start := time.Now()
		if n := q.Drain(context.Background()); n != 0 {
			t.Fatalf("Drain aborted %d", n)
		}
		<-done
		if time.Since(start) != time.Second {
			t.Fatalf("Drain returned after %v, want exactly when the job ended (1s)", time.Since(start))
		}
	})
}

func TestDegradedHysteresis(t *testing.T) {
	q := New(nil, "edge", 10)
	for i := range 10 {
		if err := q.Submit(Job{Run: func(context.Context) {}}); err != nil {
			t.Fatal(err)
		}
		if want := i+1 >= 8; q.Degraded() != want {
			t.Fatalf("depth %d: degraded %v, want %v", i+1, q.Degraded(), want)
		}
	}
	for depth := 9; depth >= 0; depth-- {
		q.q.TryPop()
		if want := depth >= 5; q.Degraded() != want {
			t.Fatalf("depth %d on the way down: degraded %v, want %v", depth, q.Degraded(), want)
		}
	}
}
