package drr

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/runtime"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// start runs s until the test ends.
func start(t *testing.T, opt Options) *Scheduler {
	t.Helper()
	s := New(opt)
	ctx, cancel := context.WithCancel(context.Background())
	go func() { _ = s.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-s.Done() })
	return s
}

// mustAcquire takes a slot that must be free.
func mustAcquire(t *testing.T, s *Scheduler, tenant string) func() {
	t.Helper()
	rel, err := s.Acquire(context.Background(), tenant, 1, 1)
	if err != nil {
		t.Fatalf("Acquire(%s): %v", tenant, err)
	}
	return rel
}

// result is what one background Acquire got.
type result struct {
	fin chan struct{} // closed once err and rel are set
	err error
	rel func()
}

// done reports whether Acquire has returned.
func (r *result) done() bool {
	select {
	case <-r.fin:
		return true
	default:
		return false
	}
}

// log records dispatch order of background requests that release at once.
type log struct {
	mu    sync.Mutex
	order []string
	costs map[string]int
}

// waitFor starts a background Acquire and waits until it blocks or answers.
func waitFor(ctx context.Context, s *Scheduler, tenant string, weight, cost int) *result {
	r := &result{fin: make(chan struct{})}
	go func() { r.rel, r.err = s.Acquire(ctx, tenant, weight, cost); close(r.fin) }()
	synctest.Wait()
	return r
}

// queueAndRelease queues a request that records its dispatch and releases.
func (l *log) queueAndRelease(s *Scheduler, tenant string, weight, cost int) {
	go func() {
		rel, err := s.Acquire(context.Background(), tenant, weight, cost)
		if err != nil {
			return
		}
		l.mu.Lock()
		l.order = append(l.order, tenant)
		l.costs[tenant] += cost
		l.mu.Unlock()
		rel()
	}()
	synctest.Wait()
}

func metric(s *Scheduler, series string) float64 {
	return s.opt.Metrics.Values()[series]
}

func TestFairnessByWeight(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := start(t, Options{Slots: 1, QueueCap: 1000, TenantQueueCap: 200})
		hold := mustAcquire(t, s, "blocker")
		l := &log{costs: map[string]int{}}
		for range 100 {
			l.queueAndRelease(s, "a", 1, 1)
			l.queueAndRelease(s, "b", 3, 1)
		}
		hold()
		synctest.Wait()
		counts := map[string]int{}
		for _, tn := range l.order[:120] {
			counts[tn]++
		}
		if counts["a"] < 28 || counts["a"] > 32 || counts["b"] < 88 || counts["b"] > 92 {
			t.Fatalf("1:3 weights over 120 dispatches gave %v", counts)
		}
		if len(l.order) != 200 {
			t.Fatalf("dispatched %d of 200", len(l.order))
		}
	})
}

func TestFairnessByCost(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := start(t, Options{Slots: 1, QueueCap: 1000, TenantQueueCap: 200})
		hold := mustAcquire(t, s, "blocker")
		l := &log{costs: map[string]int{}}
		for range 100 {
			l.queueAndRelease(s, "big", 1, 8)
			l.queueAndRelease(s, "small", 1, 1)
		}
		hold()
		synctest.Wait()
		costs := map[string]int{}
		for _, tn := range l.order[:90] { // 10 turns of 1 big + 8 small
			costs[tn] += map[string]int{"big": 8, "small": 1}[tn]
		}
		if d := costs["big"] - costs["small"]; d < -8 || d > 8 {
			t.Fatalf("equal weights, dispatched cost %v", costs)
		}
	})
}

func TestFIFOWithinTenant(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := start(t, Options{Slots: 1})
		hold := mustAcquire(t, s, "blocker")
		var mu sync.Mutex
		var got []int
		for i := range 10 {
			go func() {
				rel, err := s.Acquire(context.Background(), "a", 1, 1+i*7%64)
				if err != nil {
					return
				}
				mu.Lock()
				got = append(got, i)
				mu.Unlock()
				rel()
			}()
			synctest.Wait()
		}
		hold()
		synctest.Wait()
		for i, v := range got {
			if v != i {
				t.Fatalf("dispatch order %v, want FIFO", got)
			}
		}
		if len(got) != 10 {
			t.Fatalf("dispatched %d of 10", len(got))
		}
	})
}

func TestTenantQueueCap(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := start(t, Options{Slots: 1, TenantQueueCap: 2})
		hold := mustAcquire(t, s, "blocker")
		a1 := waitFor(context.Background(), s, "a", 1, 1)
		a2 := waitFor(context.Background(), s, "a", 1, 1)
		b1 := waitFor(context.Background(), s, "b", 1, 1)
		_, err := s.Acquire(context.Background(), "a", 1, 1)
		he := httpx.AsError(err)
		if he.Status != http.StatusTooManyRequests || he.Code != httpx.CodeRateLimited ||
			he.Details["limit"] != "tenant_queue" || he.RetryAfter != 1 {
			t.Fatalf("full tenant queue: %+v", he)
		}
		if a1.done() || a2.done() || b1.done() {
			t.Fatal("queued requests answered early")
		}
		hold()
		for _, r := range []*result{a1, a2, b1} {
			synctest.Wait()
			if !r.done() || r.err != nil {
				t.Fatalf("queued request: done=%v err=%v", r.done(), r.err)
			}
			r.rel()
		}
	})
}

func TestDropOldest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := start(t, Options{Slots: 1, QueueCap: 2})
		hold := mustAcquire(t, s, "blocker")
		a := waitFor(context.Background(), s, "a", 1, 1)
		b := waitFor(context.Background(), s, "b", 1, 1)
		c := waitFor(context.Background(), s, "c", 1, 1)
		if !a.done() {
			t.Fatal("oldest request not dropped")
		}
		he := httpx.AsError(a.err)
		if he.Status != http.StatusServiceUnavailable || he.Code != httpx.CodeBusy ||
			he.Details["limit"] != "queue_full" || he.RetryAfter != 1 {
			t.Fatalf("oldest: %+v", he)
		}
		if b.done() || c.done() || s.Waiting() != 2 {
			t.Fatalf("b=%v c=%v waiting=%d", b.done(), c.done(), s.Waiting())
		}
		if v := metric(s, `ron_queue_dropped_total{role="gateway",queue="sched"}`); v != 1 {
			t.Fatalf("dropped_total = %v", v)
		}
		if v := metric(s, `ron_queue_depth{role="gateway",queue="sched"}`); v != 2 {
			t.Fatalf("depth = %v", v)
		}
		if v := metric(s, `ron_queue_capacity{role="gateway",queue="sched"}`); v != 2 {
			t.Fatalf("capacity = %v", v)
		}
		hold()
		synctest.Wait()
		b.rel()
		synctest.Wait()
		c.rel()
	})
}

func TestMaxWaitAndDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := start(t, Options{Slots: 1, MaxWait: 2 * time.Second})
		hold := mustAcquire(t, s, "blocker")
		defer hold()
		ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
		defer cancel()
		began := time.Now()
		short := waitFor(ctx, s, "a", 1, 1)
		long := waitFor(context.Background(), s, "b", 1, 1)
		time.Sleep(time.Second)
		synctest.Wait()
		if !short.done() || !errors.Is(short.err, ErrQueueWait) || long.done() {
			t.Fatalf("at 1s: short=%v/%v long=%v", short.done(), short.err, long.done())
		}
		time.Sleep(time.Second)
		synctest.Wait()
		if !long.done() || !errors.Is(long.err, ErrQueueWait) || time.Since(began) != 2*time.Second {
			t.Fatalf("at 2s: long=%v/%v", long.done(), long.err)
		}
		he := httpx.AsError(long.err)
		if he.Status != http.StatusServiceUnavailable || he.Details["limit"] != "queue_wait" {
			t.Fatalf("queue_wait error: %+v", he)
		}
		if s.Waiting() != 0 || metric(s, `ron_io_timeouts_total{role="gateway",op="queue_wait"}`) != 2 {
			t.Fatalf("waiting=%d timeouts=%v", s.Waiting(), metric(s, `ron_io_timeouts_total{role="gateway",op="queue_wait"}`))
		}
	})
}

func TestClientGone(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := start(t, Options{Slots: 1})
		hold := mustAcquire(t, s, "blocker")
		ctx, cancel := context.WithCancel(context.Background())
		r := waitFor(ctx, s, "a", 1, 1)
		next := waitFor(context.Background(), s, "a", 1, 1)
		cancel()
		synctest.Wait()
		if !r.done() || !errors.Is(r.err, context.Canceled) || s.Waiting() != 1 {
			t.Fatalf("canceled: done=%v err=%v waiting=%d", r.done(), r.err, s.Waiting())
		}
		if v := metric(s, `ron_tasks_canceled_total{role="gateway",kind="sched"}`); v != 1 {
			t.Fatalf("canceled_total = %v", v)
		}
		hold()
		synctest.Wait()
		if !next.done() || next.err != nil {
			t.Fatalf("next: done=%v err=%v", next.done(), next.err)
		}
		next.rel()
	})
}

func TestReleaseFreesOneSlot(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := start(t, Options{Slots: 2})
		r1, r2 := mustAcquire(t, s, "a"), mustAcquire(t, s, "b")
		w1 := waitFor(context.Background(), s, "c", 1, 1)
		w2 := waitFor(context.Background(), s, "c", 1, 1)
		if s.InFlight() != 2 || s.Waiting() != 2 || w1.done() {
			t.Fatalf("inflight=%d waiting=%d", s.InFlight(), s.Waiting())
		}
		r1()
		r1() // idempotent: frees one slot only
		synctest.Wait()
		if !w1.done() || w1.err != nil || w2.done() || s.InFlight() != 2 {
			t.Fatalf("after release: w1=%v/%v w2=%v inflight=%d", w1.done(), w1.err, w2.done(), s.InFlight())
		}
		r2()
		synctest.Wait()
		w1.rel()
		w2.rel()
		synctest.Wait()
		if s.InFlight() != 0 || metric(s, `ron_gateway_inflight{role="gateway"}`) != 0 {
			t.Fatalf("inflight=%d", s.InFlight())
		}
	})
}

func TestDraining(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := New(Options{Slots: 1})
		ctx, cancel := context.WithCancel(context.Background())
		go func() { _ = s.Run(ctx) }()
		hold := mustAcquire(t, s, "blocker")
		r := waitFor(context.Background(), s, "a", 1, 1)
		cancel()
		<-s.Done()
		synctest.Wait()
		if !r.done() || !errors.Is(r.err, ErrDraining) {
			t.Fatalf("queued at stop: done=%v err=%v", r.done(), r.err)
		}
		if _, err := s.Acquire(context.Background(), "a", 1, 1); !errors.Is(err, ErrDraining) {
			t.Fatalf("after stop: %v", err)
		}
		if err := s.Run(context.Background()); err == nil {
			t.Fatal("second Run succeeded")
		}
		hold() // never blocks after stop
	})
}

func TestCost(t *testing.T) {
	tests := []struct {
		bytes int64
		want  int
	}{
		{-1, 17}, {-1 << 40, 17}, {0, 1}, {65535, 1}, {65536, 2}, {1 << 20, 17},
		{63 * 65536, 64}, {1 << 40, 64},
	}
	for _, tc := range tests {
		if got := Cost(tc.bytes); got != tc.want {
			t.Errorf("Cost(%d) = %d, want %d", tc.bytes, got, tc.want)
		}
	}
}

func TestOptionDefaults(t *testing.T) {
	tests := []struct {
		name string
		in   Options
	}{
		{"zero", Options{}},
		{"negative", Options{Slots: -1, QueueCap: -5, TenantQueueCap: -1, Quantum: -8, MaxWait: -time.Second}},
	}
	for _, tc := range tests {
		o := tc.in.withDefaults()
		if o.Slots != DefaultSlots || o.QueueCap != DefaultQueueCap || o.TenantQueueCap != DefaultTenantQueueCap ||
			o.Quantum != DefaultQuantum || o.MaxWait != DefaultMaxWait || o.Metrics == nil || o.Role != "gateway" {
			t.Errorf("%s: %+v", tc.name, o)
		}
	}
}

func TestClampedArguments(t *testing.T) {
	tests := []struct{ weight, cost, wantW, wantC int }{
		{0, 0, 1, 1}, {-3, -3, 1, 1}, {5000, 1000, 1000, 64}, {7, 9, 7, 9},
	}
	for _, tc := range tests {
		if w, c := clamp(tc.weight, MinWeight, MaxWeight), clamp(tc.cost, 1, MaxCost); w != tc.wantW || c != tc.wantC {
			t.Errorf("clamp(%d,%d) = %d,%d", tc.weight, tc.cost, w, c)
		}
	}
	synctest.Test(t, func(t *testing.T) {
		m := runtime.NewMetrics(nil)
		s := start(t, Options{Slots: 1, Metrics: m, Role: "gw"})
		rel, err := s.Acquire(context.Background(), "a", 0, 1000)
		if err != nil {
			t.Fatal(err)
		}
		rel()
		if _, ok := m.Values()[`ron_queue_capacity{role="gw",queue="sched"}`]; !ok {
			t.Fatal("metrics not registered under the given role")
		}
	})
}

// TestGrantRacesTimeout frees the slot at the instant a waiter's deadline
// passes: whichever wins, no slot may leak.
func TestGrantRacesTimeout(t *testing.T) {
	for range 20 {
		synctest.Test(t, func(t *testing.T) {
			s := start(t, Options{Slots: 1})
			hold := mustAcquire(t, s, "blocker")
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			defer cancel()
			r := waitFor(ctx, s, "a", 1, 1)
			timer := time.AfterFunc(time.Second, hold)
			defer timer.Stop()
			time.Sleep(time.Second)
			synctest.Wait()
			if !r.done() {
				t.Fatal("waiter still blocked")
			}
			if r.err == nil {
				r.rel()
				synctest.Wait()
			} else if !errors.Is(r.err, ErrQueueWait) {
				t.Fatalf("err = %v", r.err)
			}
			if s.InFlight() != 0 || s.Waiting() != 0 {
				t.Fatalf("leak: inflight=%d waiting=%d", s.InFlight(), s.Waiting())
			}
		})
	}
}
