package tenants

import (
	"context"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/rs/zerolog"

	"github.com/ronhq/ron/roles/gateway/tenant"
	"github.com/ronhq/ron/roles/registry/registryapi"
	"github.com/ronhq/ron/runtime"
)

// harness runs a Follower over a fake registry inside a synctest bubble.
type harness struct {
	t      *testing.T
	reg    *fakeRegistry
	m      *runtime.Metrics
	f      *Follower
	start  time.Time
	cancel context.CancelFunc
	done   chan error

	mu     sync.Mutex
	tables []*Table
}

// startFollower starts a follower with opt (Client, Apply, Metrics and Log
// filled in) and waits until it is idle.
func startFollower(t *testing.T, reg *fakeRegistry, opt FollowerOptions) *harness {
	t.Helper()
	h := &harness{t: t, reg: reg, m: runtime.NewMetrics(nil), done: make(chan error, 1), start: time.Now()}
	if opt.Client == nil {
		opt.Client = reg
	}
	opt.Apply, opt.Metrics, opt.Log = h.record, h.m, zerolog.Nop()
	h.f = NewFollower(opt)
	h.f.rnd = func() float64 { return 0.5 } // no jitter
	ctx, cancel := context.WithCancel(context.Background())
	h.cancel = cancel
	go func() { h.done <- h.f.Run(ctx) }() // the role's task
	synctest.Wait()
	return h
}

func (h *harness) record(tb *Table) {
	h.mu.Lock()
	h.tables = append(h.tables, tb)
	h.mu.Unlock()
}

// stop ends Run and checks that it returned nil.
func (h *harness) stop() {
	h.t.Helper()
	h.cancel()
	if err := <-h.done; err != nil {
		h.t.Fatalf("Run = %v", err)
	}
}

// current is the last table applied; it must be the follower's Table.
func (h *harness) current() *Table {
	h.t.Helper()
	h.mu.Lock()
	defer h.mu.Unlock()
	last := h.tables[len(h.tables)-1]
	if h.f.Table() != last {
		h.t.Fatal("Follower.Table is not the last table applied")
	}
	return last
}

// applied returns the registry versions of the tables applied (-1: config only).
func (h *harness) applied() []int {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]int, len(h.tables))
	for i, tb := range h.tables {
		out[i] = -1
		if tb.FromRegistry() {
			out[i] = int(tb.Version())
		}
	}
	return out
}

// metric reads one gateway series, e.g. metric("gateway_tenants_version").
func (h *harness) metric(name string, labels ...string) float64 {
	return h.m.Values()[runtime.MetricName(name, append([]string{"role", "gateway"}, labels...)...)]
}

// wantApplied checks the sequence of applied versions.
func (h *harness) wantApplied(want ...int) {
	h.t.Helper()
	if got := h.applied(); !slices.Equal(got, want) {
		h.t.Fatalf("applied versions %v, want %v", got, want)
	}
}

// wantGets checks the versions fetched so far.
func (h *harness) wantGets(want ...uint64) {
	h.t.Helper()
	if gets, _, _ := h.reg.calls(); !slices.Equal(gets, want) {
		h.t.Fatalf("Get calls %v, want %v", gets, want)
	}
}

// advance lets d of bubble time pass and waits until everything is idle.
func advance(d time.Duration) {
	time.Sleep(d)
	synctest.Wait()
}

// offsets returns times as offsets from start.
func offsets(start time.Time, times []time.Time) []time.Duration {
	out := make([]time.Duration, len(times))
	for i, at := range times {
		out[i] = at.Sub(start)
	}
	return out
}

var config = []Item{{ID: "acme", RPS: 10, Burst: 10, Weight: 1}, {ID: "beta", RPS: 5, Missing: FieldBurst | FieldWeight}}

func TestFollowerStartsFromHead(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reg := newFakeRegistry(t)
		reg.commit(0)
		reg.commit(1, tenantItem("acme", 100, 100, 1, 0))
		reg.commit(2, tenantItem("acme", 300, 600, 3, 1<<20), tenantItem("gamma", 0, 0, 1, 0))
		h := startFollower(t, reg, FollowerOptions{Defaults: defs, Config: config})
		h.wantApplied(-1, 2)
		h.wantGets(2)
		tb := h.current()
		if got := tb.Params("acme"); got != (tenant.Params{RPS: 300, Burst: 600, Weight: 3, MaxBytesPerS: 1 << 20}) {
			t.Fatalf("acme %+v", got)
		}
		if tb.Params("beta") != (tenant.Params{RPS: 5, Burst: 1000, Weight: 1}) || !tb.Params("gamma").Suspended() {
			t.Fatalf("beta %+v gamma %+v", tb.Params("beta"), tb.Params("gamma"))
		}
		if !slices.Equal(tb.Listed(), []string{"acme", "beta", "gamma"}) {
			t.Fatalf("Listed %v", tb.Listed())
		}
		if reg.since[0] == nil || *reg.since[0] != 2 {
			t.Fatalf("watch since %v, want 2", reg.since[0])
		}
		if h.metric("gateway_tenants_version") != 2 || h.metric("tasks_spawned_total", "kind", "registry_watch") != 1 {
			t.Fatalf("metrics %v", h.m.Values())
		}
		h.stop()
		if h.metric("tasks_canceled_total", "kind", "registry_watch") != 1 {
			t.Fatal("open watch not counted as cancelled")
		}
	})
}

func TestFollowerGenesisOnly(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reg := newFakeRegistry(t)
		reg.commit(0)
		h := startFollower(t, reg, FollowerOptions{Defaults: defs, Config: config})
		defer h.stop()
		h.wantApplied(-1, 0)
		if tb := h.current(); tb.Version() != 0 || !tb.FromRegistry() || tb.Params("acme").RPS != 10 {
			t.Fatalf("genesis table: version %d, registry %v, acme %+v", tb.Version(), tb.FromRegistry(), tb.Params("acme"))
		}
		u := reg.commit(1, tenantItem("acme", 1, 1, 1, 0))
		h.reg.announce(u)
		synctest.Wait()
		h.wantApplied(-1, 0, 1)
	})
}

func TestFollowerAppliesUpdatesInOrder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reg := newFakeRegistry(t)
		reg.commit(0)
		reg.commit(1)
		h := startFollower(t, reg, FollowerOptions{Defaults: defs})
		defer h.stop()
		for v := uint64(2); v <= 4; v++ {
			reg.announce(reg.commit(v, tenantItem("acme", float64(v), 1, 1, 0)))
			synctest.Wait()
			if got := h.current().Params("acme").RPS; got != float64(v) {
				t.Fatalf("version %d: acme rps %v", v, got)
			}
		}
		h.wantApplied(-1, 1, 2, 3, 4)
		h.wantGets(1, 2, 3, 4)
		if h.metric("gateway_tenants_version") != 4 {
			t.Fatal("version gauge")
		}
	})
}

func TestFollowerGapAppliesNewest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reg := newFakeRegistry(t)
		reg.commit(0)
		reg.commit(1)
		h := startFollower(t, reg, FollowerOptions{Defaults: defs})
		defer h.stop()
		reg.commit(2, tenantItem("a", 2, 1, 1, 0))
		reg.commit(3, tenantItem("a", 3, 1, 1, 0))
		u := reg.commit(4, tenantItem("a", 4, 1, 1, 0))
		reg.announce(u) // 2 and 3 were lost (a lagging watch keeps the newest)
		synctest.Wait()
		h.wantApplied(-1, 1, 4)
		h.wantGets(1, 4)
	})
}

func TestNewestUpdate(t *testing.T) {
	ch := make(chan registryapi.Update, 8)
	for _, v := range []uint64{5, 7, 6} {
		ch <- registryapi.Update{Version: v}
	}
	if got := newestUpdate(ch, registryapi.Update{Version: 4}); got.Version != 7 || len(ch) != 0 {
		t.Fatalf("newest %d, %d left", got.Version, len(ch))
	}
	ch <- registryapi.Update{Version: 1}
	close(ch)
	if got := newestUpdate(ch, registryapi.Update{Version: 3}); got.Version != 3 {
		t.Fatalf("newest %d", got.Version)
	}
}

func TestFollowerIgnoresStaleAndDuplicates(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reg := newFakeRegistry(t)
		u0 := reg.commit(0)
		u1 := reg.commit(1)
		u2 := reg.commit(2)
		h := startFollower(t, reg, FollowerOptions{Defaults: defs})
		defer h.stop()
		for _, u := range []registryapi.Update{u2, u1, u0, u2} {
			reg.announce(u)
			synctest.Wait()
		}
		h.wantApplied(-1, 2)
		h.wantGets(2)
	})
}

func TestFollowerRejectsB3Mismatch(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reg := newFakeRegistry(t)
		reg.commit(0)
		u1 := reg.commit(1)
		h := startFollower(t, reg, FollowerOptions{Defaults: defs})
		defer h.stop()
		u2 := reg.commit(2, tenantItem("acme", 1, 1, 1, 0))
		forged := u2
		forged.PayloadB3 = u1.PayloadB3
		reg.announce(forged)
		synctest.Wait()
		h.wantApplied(-1, 1)
		h.wantGets(1, 2)
		if h.metric("gateway_tenants_rejected_total", "reason", "b3_mismatch") != 1 || h.metric("gateway_tenants_version") != 1 {
			t.Fatalf("metrics %v", h.m.Values())
		}
		reg.announce(u2) // the genuine announcement still applies
		synctest.Wait()
		h.wantApplied(-1, 1, 2)
	})
}

func TestFollowerReconnectBackoff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reg := newFakeRegistry(t)
		reg.commit(0)
		reg.watchFails = 7
		h := startFollower(t, reg, FollowerOptions{Defaults: defs})
		defer h.stop()
		advance(100 * time.Second)
		_, _, watches := reg.calls()
		want := []time.Duration{0, 1, 3, 7, 15, 31, 61, 91} // waits 1, 2, 4, 8, 16, 30, 30 s
		for i := range want {
			want[i] *= time.Second
		}
		if got := offsets(h.start, watches); !slices.Equal(got, want) {
			t.Fatalf("watch attempts at %v, want %v", got, want)
		}
		// The 8th watch is open; once it closes, the next attempt comes 1 s
		// later (a good watch resets the backoff) and resumes after HEAD.
		u := reg.commit(1, tenantItem("acme", 1, 1, 1, 0))
		reg.drop()
		dropped := time.Now()
		advance(999 * time.Millisecond)
		if _, _, w := reg.calls(); len(w) != 8 {
			t.Fatalf("%d watch attempts before the backoff ended", len(w))
		}
		advance(time.Millisecond)
		_, _, watches = reg.calls()
		if len(watches) != 9 || watches[8].Sub(dropped) != time.Second || *reg.since[8] != 0 {
			t.Fatalf("reconnects at %v (since %v)", offsets(dropped, watches[8:]), reg.since[8:])
		}
		reg.announce(u)
		synctest.Wait()
		h.wantApplied(-1, 0, 1)
		if h.metric("tasks_spawned_total", "kind", "registry_watch") != 2 {
			t.Fatal("spawned count")
		}
	})
}

func TestFollowerRereadsHead(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reg := newFakeRegistry(t)
		reg.commit(0)
		h := startFollower(t, reg, FollowerOptions{Defaults: defs})
		defer h.stop()
		reg.commit(1, tenantItem("acme", 1, 1, 1, 0)) // never announced
		advance(59 * time.Second)
		h.wantApplied(-1, 0)
		advance(2 * time.Second)
		h.wantApplied(-1, 0, 1)
		advance(60 * time.Second)
		_, heads, _ := reg.calls()
		if got := offsets(h.start, heads); !slices.Equal(got, []time.Duration{0, 60 * time.Second, 120 * time.Second}) {
			t.Fatalf("Head read at %v", got)
		}
		h.wantGets(0, 1)
	})
}

func TestFollowerRegistryUnreachable(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reg := newFakeRegistry(t)
		reg.commit(0)
		reg.commit(1, tenantItem("acme", 1, 1, 1, 0))
		reg.setDown(true)
		h := startFollower(t, reg, FollowerOptions{Defaults: defs, Config: config})
		defer h.stop()
		advance(45 * time.Second)
		h.wantApplied(-1)
		if tb := h.current(); tb.FromRegistry() || tb.Params("acme").RPS != 10 {
			t.Fatalf("config table not in force: %+v", tb.Params("acme"))
		}
		if h.metric("gateway_tenants_rejected_total", "reason", "fetch") != 1 {
			t.Fatalf("fetch failures %v", h.metric("gateway_tenants_rejected_total", "reason", "fetch"))
		}
		reg.setDown(false) // HEAD at 60 s applies 1; the watch attempt due at 61 s connects
		advance(20 * time.Second)
		h.wantApplied(-1, 1)
		if _, _, w := reg.calls(); len(w) != 7 {
			t.Fatalf("%d watch attempts", len(w))
		}
		// Down again: the last applied table stays in force.
		reg.setDown(true)
		reg.drop()
		advance(10 * time.Minute)
		h.wantApplied(-1, 1)
		if h.current().Params("acme").RPS != 1 {
			t.Fatal("registry table lost while the registry is down")
		}
	})
}

func TestFollowerSetConfig(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reg := newFakeRegistry(t)
		reg.commit(0)
		reg.commit(1, tenantItem("acme", 100, 100, 1, 0), tenantItem("anon:x", 1, 1, 1, 0))
		h := startFollower(t, reg, FollowerOptions{Defaults: defs,
			Config: append([]Item{{ID: "bad", RPS: -1, Weight: 1}}, config...)})
		defer h.stop()
		invalid := "gateway_tenant_items_invalid_total"
		if h.metric(invalid) != 2 { // the config's bad item, the registry's anon: item
			t.Fatalf("invalid items %v", h.metric(invalid))
		}
		newDefs := Defaults{Tenant: tenant.Params{RPS: 50, Burst: 60, Weight: 2}, Anon: tenant.Params{RPS: 1, Weight: 1}}
		h.f.SetConfig(newDefs, []Item{{ID: "beta", RPS: 7, Missing: FieldBurst | FieldWeight}, {ID: "acme", RPS: 1, Weight: 1},
			{ID: "w0", RPS: 1}}) // w0's weight is written as 0: invalid
		h.wantApplied(-1, 1, 1)
		tb := h.current()
		switch {
		case tb.Params("acme").RPS != 100: // the registry still wins
			t.Fatalf("acme %+v", tb.Params("acme"))
		case tb.Params("beta") != (tenant.Params{RPS: 7, Burst: 60, Weight: 2}):
			t.Fatalf("beta %+v", tb.Params("beta"))
		case tb.Params("zed") != newDefs.Tenant || tb.Params("anon:1.2.3.0/24") != newDefs.Anon:
			t.Fatal("new defaults not in force")
		case !slices.Equal(tb.Listed(), []string{"beta", "acme"}) || tb.Version() != 1:
			t.Fatalf("Listed %v version %d", tb.Listed(), tb.Version())
		case h.metric(invalid) != 3:
			t.Fatalf("invalid items %v", h.metric(invalid))
		}
		reg.announce(reg.commit(2, tenantItem("acme", 5, 5, 1, 0)))
		synctest.Wait()
		if tb := h.current(); tb.Params("acme").RPS != 5 || h.metric(invalid) != 3 {
			t.Fatalf("acme %+v, invalid %v (config items counted again)", tb.Params("acme"), h.metric(invalid))
		}
	})
}

func TestFollowerBus(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reg := newFakeRegistry(t)
		reg.commit(0)
		bus := runtime.NewBus(nil)
		h := startFollower(t, reg, FollowerOptions{Defaults: defs, Bus: bus})
		defer h.stop()
		h.wantApplied(-1, 0)
		u1 := reg.commit(1, tenantItem("acme", 1, 1, 1, 0))
		bus.Publish(runtime.ConfigUpdated{Version: 9})
		bus.Publish(runtime.RegistryUpdated{Version: u1.Version, B3: u1.PayloadB3})
		synctest.Wait()
		h.wantApplied(-1, 0, 1)
		u2 := reg.commit(2)
		bus.Publish(runtime.RegistryUpdated{Version: 2, B3: u1.PayloadB3}) // wrong b3
		bus.Publish(runtime.RegistryUpdated{Version: 1, B3: u1.PayloadB3}) // stale
		synctest.Wait()
		h.wantApplied(-1, 0, 1)
		bus.Publish(runtime.RegistryUpdated{Version: 2, B3: u2.PayloadB3})
		synctest.Wait()
		h.wantApplied(-1, 0, 1, 2)
		h.wantGets(0, 1, 2, 2)
		if _, _, w := reg.calls(); len(w) != 0 {
			t.Fatal("Watch called although a bus is given")
		}
		advance(60 * time.Second)
		if _, heads, _ := reg.calls(); len(heads) != 2 {
			t.Fatalf("Head read %d times", len(heads))
		}
	})
}

func TestNewestEvent(t *testing.T) {
	ch := make(chan runtime.Event, 8)
	ch <- runtime.RegistryUpdated{Version: 3, B3: "c"}
	ch <- runtime.Shutdown{}
	ch <- runtime.RegistryUpdated{Version: 2, B3: "b"}
	if u, ok := newestEvent(ch, runtime.ConfigUpdated{}); !ok || u.Version != 3 || u.B3 != "c" {
		t.Fatalf("newest %+v %v", u, ok)
	}
	ch <- runtime.Shutdown{}
	close(ch)
	if _, ok := newestEvent(ch, runtime.ConfigUpdated{}); ok {
		t.Fatal("found an update among none")
	}
}

func TestFollowerWithoutRegistry(t *testing.T) {
	var got []*Table
	f := NewFollower(FollowerOptions{Defaults: defs, Config: config, Apply: func(tb *Table) { got = append(got, tb) }})
	if err := f.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || f.Table() != got[0] || got[0].FromRegistry() || got[0].Params("acme").RPS != 10 {
		t.Fatalf("tables %v", got)
	}
	NewFollower(FollowerOptions{}).SetConfig(defs, nil) // nil Apply is allowed
}
