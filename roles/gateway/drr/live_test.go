package drr

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// TestDeterministicDRR is docs/gateway.md §12's scheduler test on the pure
// DRR state: 10 000 dispatches with tenants A and B always backlogged.
func TestDeterministicDRR(t *testing.T) {
	tests := []struct {
		name         string
		weightA      int
		weightB      int
		costA, costB int
		wantA        float64 // share of dispatched cost
	}{
		{"equal weights", 1, 1, 1, 1, 0.50},
		{"weights 3:1", 3, 1, 1, 1, 0.75},
		{"equal weights, mixed costs", 1, 1, 17, 1, 0.50},
		{"weights 3:1, mixed costs", 3, 1, 5, 64, 0.75},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st := &state{tenants: map[string]*tenantQueue{}}
			add := func(name string) {
				w, c := tc.weightA, tc.costA
				if name == "b" {
					w, c = tc.weightB, tc.costB
				}
				st.enqueue(&waiter{tenant: name, weight: w, cost: c})
			}
			for range 4 {
				add("a")
				add("b")
			}
			cost := map[string]int{}
			for range 10000 {
				w := st.next(DefaultQuantum)
				cost[w.tenant] += w.cost
				add(w.tenant) // stays backlogged
			}
			share := float64(cost["a"]) / float64(cost["a"]+cost["b"])
			if math.Abs(share-tc.wantA) > 0.01 {
				t.Fatalf("share of A = %.4f, want %.2f ± 0.01 (%v)", share, tc.wantA, cost)
			}
		})
	}
}

// load runs closed-loop clients: workers per tenant, each holding its slot
// for hold, recording the dispatch order until stopped.
type load struct {
	mu    sync.Mutex
	order []string
	stop  atomic.Bool
	wg    sync.WaitGroup
}

func (l *load) start(s *Scheduler, tenant string, weight, workers int, hold time.Duration) {
	for range workers {
		l.wg.Go(func() {
			for !l.stop.Load() {
				rel, err := s.Acquire(context.Background(), tenant, weight, 1)
				if err != nil {
					return
				}
				l.mu.Lock()
				l.order = append(l.order, tenant)
				l.mu.Unlock()
				time.Sleep(hold)
				rel()
			}
		})
	}
}

func (l *load) finish() {
	l.stop.Store(true)
	l.wg.Wait()
}

// TestSchedulerFairnessGauges runs the docs/gateway.md §12 scenario through a running
// Scheduler: A and B backlogged for 10 s, 10 000 dispatches of 1 ms each;
// shares of the first 10 000 dispatches, and the share and fairness gauges.
func TestSchedulerFairnessGauges(t *testing.T) {
	tests := []struct {
		name             string
		weightA, weightB int
		wantA            float64
	}{
		{"equal weights", 1, 1, 0.5},
		{"weights 3:1", 3, 1, 0.75},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s := start(t, Options{Slots: 1})
				l := &load{}
				l.start(s, "a", tc.weightA, 4, time.Millisecond)
				l.start(s, "b", tc.weightB, 4, time.Millisecond)
				time.Sleep(10*time.Second + 500*time.Millisecond)
				v := s.opt.Metrics.Values()
				l.finish()
				if len(l.order) < 10000 {
					t.Fatalf("only %d dispatches", len(l.order))
				}
				a := 0
				for _, tn := range l.order[:10000] {
					if tn == "a" {
						a++
					}
				}
				if share := float64(a) / 10000; math.Abs(share-tc.wantA) > 0.01 {
					t.Fatalf("A got %.4f of 10 000 dispatches, want %.2f ± 0.01", share, tc.wantA)
				}
				checkGauges(t, v, map[string]float64{
					`ron_gateway_drr_share{role="gateway",tenant="a"}`:  tc.wantA,
					`ron_gateway_drr_share{role="gateway",tenant="b"}`:  1 - tc.wantA,
					`ron_gateway_drr_fairness{role="gateway"}`:          1,
					`ron_gateway_drr_active_tenants{role="gateway"}`:    2,
					`ron_gateway_drr_weight_sum{role="gateway"}`:        float64(tc.weightA + tc.weightB),
					`ron_gateway_drr_weight{role="gateway",tenant="a"}`: float64(tc.weightA),
					`ron_gateway_drr_weight{role="gateway",tenant="b"}`: float64(tc.weightB),
				})
				if d := v[`ron_gateway_drr_queue_depth{role="gateway",tenant="a"}`]; d < 1 || d > 4 {
					t.Fatalf("queue depth of a = %v", d)
				}
				cost := v[`ron_gateway_drr_dispatched_cost_total{role="gateway",tenant="a"}`] +
					v[`ron_gateway_drr_dispatched_cost_total{role="gateway",tenant="b"}`]
				if cost < 10000 || cost > 10600 {
					t.Fatalf("dispatched cost %v after 10.5 s of 1 ms dispatches", cost)
				}
			})
		})
	}
}

// checkGauges compares series within 0.01.
func checkGauges(t *testing.T, got, want map[string]float64) {
	t.Helper()
	for k, w := range want {
		g, ok := got[k]
		if !ok || math.Abs(g-w) > 0.01 {
			t.Errorf("%s = %v (present %v), want %v", k, g, ok, w)
		}
	}
}

func TestJain(t *testing.T) {
	tests := []struct {
		xs   []float64
		want float64
	}{
		{nil, 1}, {[]float64{5}, 1}, {[]float64{2, 2}, 1}, {[]float64{0, 0}, 1},
		{[]float64{1, 0}, 0.5}, {[]float64{3, 1}, 0.8}, {[]float64{1, 0, 0, 0}, 0.25},
	}
	for _, tc := range tests {
		if got := jain(tc.xs); math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("jain(%v) = %v, want %v", tc.xs, got, tc.want)
		}
	}
}

// TestFairnessNeedsWholeWindow: only tenants backlogged for the whole 10 s
// count; a newcomer does not, so one long-backlogged tenant reads as 1.
func TestFairnessNeedsWholeWindow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := start(t, Options{Slots: 1})
		l := &load{}
		l.start(s, "a", 1, 3, time.Millisecond)
		time.Sleep(8 * time.Second)
		l.start(s, "b", 1, 3, 10*time.Millisecond) // b takes more time, not more cost
		time.Sleep(2*time.Second + 500*time.Millisecond)
		v := s.opt.Metrics.Values()
		if f := v[`ron_gateway_drr_fairness{role="gateway"}`]; f != 1 {
			t.Fatalf("fairness %v with one tenant backlogged for the whole window", f)
		}
		if n := v[`ron_gateway_drr_active_tenants{role="gateway"}`]; n != 2 {
			t.Fatalf("active tenants %v", n)
		}
		// Ten more seconds: both qualify, equal cost per weight.
		time.Sleep(10 * time.Second)
		v = s.opt.Metrics.Values()
		l.finish()
		if f := v[`ron_gateway_drr_fairness{role="gateway"}`]; f < 0.99 {
			t.Fatalf("fairness %v with equal dispatched cost", f)
		}
		if sh := v[`ron_gateway_drr_share{role="gateway",tenant="b"}`]; math.Abs(sh-0.5) > 0.01 {
			t.Fatalf("share of b %v", sh)
		}
	})
}

// TestPublishFairness checks publish on a hand-built state: unequal cost
// per weight reads below 1; tenants that joined inside the window and cost
// older than the window do not count.
func TestPublishFairness(t *testing.T) {
	s := New(Options{})
	s.epoch = 20
	tq := func(name string, weight int, joined int64, costs map[int64]int) {
		w := &waiter{tenant: name, weight: weight, cost: 1, stats: s.labelOf(name)}
		s.epoch, joined = joined, s.epoch
		s.enqueue(w)
		s.epoch = joined
		for e, c := range costs {
			w.tq.win.add(e, c)
			w.stats.win.add(e, c)
		}
	}
	tq("a", 1, 0, map[int64]int{5: 1000, 12: 60, 19: 40}) // epoch 5 is outside the window
	tq("b", 2, 11, map[int64]int{15: 100})
	tq("c", 1, 12, map[int64]int{20: 800}) // joined inside the window
	s.publish()
	v := s.opt.Metrics.Values()
	checkGauges(t, v, map[string]float64{
		`ron_gateway_drr_fairness{role="gateway"}`:         jain([]float64{100, 50}),
		`ron_gateway_drr_share{role="gateway",tenant="a"}`: 0.1,
		`ron_gateway_drr_share{role="gateway",tenant="b"}`: 0.1,
		`ron_gateway_drr_share{role="gateway",tenant="c"}`: 0.8,
		`ron_gateway_drr_weight_sum{role="gateway"}`:       4,
		`ron_gateway_drr_active_tenants{role="gateway"}`:   3,
	})
	if f := v[`ron_gateway_drr_fairness{role="gateway"}`]; math.Abs(f-0.9) > 1e-9 {
		t.Fatalf("fairness %v, want 0.9", f)
	}
}

func TestPerTenantGaugesAndLabels(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		label := func(tn string) string {
			switch tn {
			case "acme":
				return "acme"
			case "blank":
				return ""
			}
			return "anon"
		}
		s := start(t, Options{Slots: 1, Label: label})
		hold := mustAcquire(t, s, "acme")
		rs := []*result{
			waitFor(context.Background(), s, "anon:1.2.3.0/24", 2, 1),
			waitFor(context.Background(), s, "anon:5.6.7.0/24", 3, 1),
			waitFor(context.Background(), s, "anon:5.6.7.0/24", 3, 1),
			waitFor(context.Background(), s, "blank", 1, 1),
			waitFor(context.Background(), s, "acme", 4, 1),
		}
		time.Sleep(time.Second) // one publication
		synctest.Wait()
		checkGauges(t, s.opt.Metrics.Values(), map[string]float64{
			`ron_gateway_drr_queue_depth{role="gateway",tenant="anon"}`:           3,
			`ron_gateway_drr_weight{role="gateway",tenant="anon"}`:                5,
			`ron_gateway_drr_queue_depth{role="gateway",tenant="other"}`:          1,
			`ron_gateway_drr_queue_depth{role="gateway",tenant="acme"}`:           1,
			`ron_gateway_drr_weight{role="gateway",tenant="acme"}`:                4,
			`ron_gateway_drr_weight_sum{role="gateway"}`:                          10,
			`ron_gateway_drr_active_tenants{role="gateway"}`:                      4,
			`ron_gateway_drr_share{role="gateway",tenant="acme"}`:                 1,
			`ron_gateway_drr_share{role="gateway",tenant="anon"}`:                 0,
			`ron_gateway_drr_dispatched_cost_total{role="gateway",tenant="acme"}`: 1,
			`ron_gateway_drr_dispatched_cost_total{role="gateway",tenant="anon"}`: 0,
			`ron_gateway_drr_fairness{role="gateway"}`:                            1,
			`ron_queue_depth{role="gateway",queue="sched"}`:                       5,
		})
		hold()
		for _, r := range rs {
			synctest.Wait()
			r.rel()
		}
		time.Sleep(time.Second)
		synctest.Wait()
		v := s.opt.Metrics.Values()
		checkGauges(t, v, map[string]float64{
			`ron_gateway_drr_queue_depth{role="gateway",tenant="anon"}`:           0,
			`ron_gateway_drr_weight{role="gateway",tenant="anon"}`:                0,
			`ron_gateway_drr_active_tenants{role="gateway"}`:                      0,
			`ron_gateway_drr_dispatched_cost_total{role="gateway",tenant="anon"}`: 3,
		})
		for k := range v {
			if containsAny(k, "anon:", "blank") {
				t.Fatalf("raw tenant id in a label: %s", k)
			}
		}
	})
}

func containsAny(s string, subs ...string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

// TestLabelCap: past the first MaxLabels values, tenants count as "other".
func TestLabelCap(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := start(t, Options{Slots: 1})
		for i := range MaxLabels + 10 {
			mustAcquire(t, s, fmt.Sprintf("t%d", i))()
		}
		v := s.opt.Metrics.Values()
		n := 0
		for k := range v {
			if strings.HasPrefix(k, "ron_gateway_drr_dispatched_cost_total{") {
				n++
			}
		}
		if n != MaxLabels+1 || v[`ron_gateway_drr_dispatched_cost_total{role="gateway",tenant="other"}`] != 10 {
			t.Fatalf("%d label values, other = %v", n, v[`ron_gateway_drr_dispatched_cost_total{role="gateway",tenant="other"}`])
		}
	})
}

func TestSetOptionsSlots(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := start(t, Options{Slots: 1})
		held := []func(){mustAcquire(t, s, "a")}
		w1 := waitFor(context.Background(), s, "b", 1, 1)
		w2 := waitFor(context.Background(), s, "c", 1, 1)
		s.SetOptions(Options{Slots: 3})
		synctest.Wait()
		if !w1.done() || !w2.done() || w1.err != nil || w2.err != nil || s.InFlight() != 3 {
			t.Fatalf("grown slots not filled: %v %v inflight=%d", w1.err, w2.err, s.InFlight())
		}
		held = append(held, w1.rel, w2.rel)
		s.SetOptions(Options{Slots: 1}) // held slots stay held
		synctest.Wait()
		w3 := waitFor(context.Background(), s, "d", 1, 1)
		if s.InFlight() != 3 || w3.done() {
			t.Fatalf("shrink: inflight=%d, w3 done=%v", s.InFlight(), w3.done())
		}
		held[0]()
		held[1]()
		synctest.Wait()
		if w3.done() {
			t.Fatal("dispatched while at or over the shrunk slot count")
		}
		held[2]()
		synctest.Wait()
		if !w3.done() || w3.err != nil || s.InFlight() != 1 {
			t.Fatalf("w3: %v inflight=%d", w3.err, s.InFlight())
		}
		w3.rel()
	})
}

func TestSetOptionsCapsAndWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := start(t, Options{Slots: 1, QueueCap: 10, TenantQueueCap: 5})
		hold := mustAcquire(t, s, "blocker")
		defer hold()
		a1 := waitFor(context.Background(), s, "a", 1, 1)
		a2 := waitFor(context.Background(), s, "a", 1, 1)
		s.SetOptions(Options{Slots: 1, QueueCap: 2, TenantQueueCap: 1, MaxWait: time.Second})
		if _, err := s.Acquire(context.Background(), "a", 1, 1); !errors.Is(err, ErrTenantQueue) {
			t.Fatalf("shrunk tenant cap: %v", err)
		}
		if v := metric(s, `ron_queue_capacity{role="gateway",queue="sched"}`); v != 2 {
			t.Fatalf("capacity gauge %v", v)
		}
		began := time.Now()
		b := waitFor(context.Background(), s, "b", 1, 1) // total full: drops a1
		if !a1.done() || !errors.Is(a1.err, ErrDropped) || a2.done() || s.Waiting() != 2 {
			t.Fatalf("drop-oldest at the new cap: a1=%v a2=%v waiting=%d", a1.err, a2.done(), s.Waiting())
		}
		time.Sleep(time.Second)
		synctest.Wait()
		if !b.done() || !errors.Is(b.err, ErrQueueWait) || time.Since(began) != time.Second {
			t.Fatalf("new max wait: b=%v after %s", b.err, time.Since(began))
		}
		if a2.done() {
			t.Fatal("a request queued before the change got the new max wait")
		}
		time.Sleep(time.Second)
		synctest.Wait()
		if !errors.Is(a2.err, ErrQueueWait) {
			t.Fatalf("a2: %v", a2.err)
		}
	})
}

func TestSetOptionsQuantum(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := start(t, Options{Slots: 1, Quantum: 1, QueueCap: 100, TenantQueueCap: 50})
		hold := mustAcquire(t, s, "blocker")
		s.SetOptions(Options{Slots: 1, Quantum: 4, QueueCap: 100, TenantQueueCap: 50})
		l := &log{costs: map[string]int{}}
		for range 8 {
			l.queueAndRelease(s, "a", 1, 1)
			l.queueAndRelease(s, "b", 1, 1)
		}
		hold()
		synctest.Wait()
		want := "aaaabbbbaaaabbbb"
		if got := strings.Join(l.order, ""); got != want {
			t.Fatalf("order %s, want %s (quantum 4)", got, want)
		}
	})
}

// TestSetOptionsNeverBlocks: before Run and after it stopped.
func TestSetOptionsNeverBlocks(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := New(Options{})
		s.SetOptions(Options{Slots: 2})
		s.SetOptions(Options{Slots: 3})
		if s.tunables().Slots != 3 {
			t.Fatal("options not stored")
		}
		ctx, cancel := context.WithCancel(context.Background())
		go func() { _ = s.Run(ctx) }()
		cancel()
		<-s.Done()
		s.SetOptions(Options{Slots: 4})
		s.SetOptions(Options{})
		if tun := s.tunables(); tun.Slots != DefaultSlots || tun.MaxWait != DefaultMaxWait {
			t.Fatalf("defaults: %+v", tun)
		}
	})
}

// TestRunOnce documents misuse: a second Run, while the first runs or after
// it returned, fails at once with ErrRunTwice and changes nothing.
func TestRunOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := New(Options{Slots: 2})
		ctx, cancel := context.WithCancel(context.Background())
		go func() { _ = s.Run(ctx) }()
		synctest.Wait()
		if err := s.Run(context.Background()); !errors.Is(err, ErrRunTwice) {
			t.Fatalf("second Run while running: %v", err)
		}
		rel := mustAcquire(t, s, "a")
		rel()
		s.SetOptions(Options{Slots: 8}) // more slots than the release buffer holds
		var held []func()
		for range 8 {
			held = append(held, mustAcquire(t, s, "a"))
		}
		cancel()
		<-s.Done()
		if err := s.Run(context.Background()); !errors.Is(err, ErrRunTwice) {
			t.Fatalf("Run after stop: %v", err)
		}
		if _, err := s.Acquire(context.Background(), "a", 1, 1); !errors.Is(err, ErrDraining) {
			t.Fatalf("Acquire after stop: %v", err)
		}
		for _, h := range held {
			h() // never blocks after stop, however many are out
		}
	})
}

func TestHooks(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var drops atomic.Int64
		var mu sync.Mutex
		var seen []int
		s := start(t, Options{Slots: 1, QueueCap: 2, MaxWait: time.Second,
			OnDrop: func() { drops.Add(1) },
			OnWaiting: func(n int) {
				mu.Lock()
				seen = append(seen, n)
				mu.Unlock()
			}})
		hold := mustAcquire(t, s, "blocker")
		ctx, cancel := context.WithCancel(context.Background())
		gone := waitFor(ctx, s, "a", 1, 1)
		b := waitFor(context.Background(), s, "b", 1, 1)
		c := waitFor(context.Background(), s, "c", 1, 1) // drops gone (oldest)
		if !errors.Is(gone.err, ErrDropped) || drops.Load() != 1 {
			t.Fatalf("drop: %v, drops=%d", gone.err, drops.Load())
		}
		cancel()                                         // already answered: no effect
		d := waitFor(context.Background(), s, "d", 1, 1) // drops b
		cctx, ccancel := context.WithCancel(context.Background())
		e := waitFor(cctx, s, "e", 1, 1) // drops c
		ccancel()                        // client gone: not a drop
		synctest.Wait()
		if !errors.Is(e.err, context.Canceled) || drops.Load() != 3 {
			t.Fatalf("canceled: %v, drops=%d", e.err, drops.Load())
		}
		time.Sleep(time.Second) // d times out
		synctest.Wait()
		if !errors.Is(d.err, ErrQueueWait) || drops.Load() != 4 || !errors.Is(b.err, ErrDropped) || !errors.Is(c.err, ErrDropped) {
			t.Fatalf("timeout: d=%v b=%v c=%v drops=%d", d.err, b.err, c.err, drops.Load())
		}
		hold()
		mu.Lock()
		defer mu.Unlock()
		want := []int{1, 2, 1, 0}
		if fmt.Sprint(seen) != fmt.Sprint(want) {
			t.Fatalf("OnWaiting saw %v, want %v", seen, want)
		}
	})
}
