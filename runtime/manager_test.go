package runtime

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/VictoriaMetrics/metrics"
	"github.com/rs/zerolog"
)

// recorder is a shared, ordered log of role lifecycle calls.
type recorder struct {
	mu  sync.Mutex
	log []string
}

func (r *recorder) add(s string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.log = append(r.log, s)
}

func (r *recorder) get() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.log)
}

// fakeRole is a configurable Role that also implements every optional
// interface.
type fakeRole struct {
	name      string
	rec       *recorder
	startErr  error
	runErr    error         // returned by Run when failRun closes
	failRun   chan struct{} // nil: Run waits for ctx
	stopBlock chan struct{} // non-nil: Stop ignores ctx until closed
	group     *TaskGroup
	ready     Readiness
	applyErr  error
}

func (f *fakeRole) Name() string { return f.name }

func (f *fakeRole) Start(context.Context) error {
	f.rec.add("start:" + f.name)
	return f.startErr
}

func (f *fakeRole) Run(ctx context.Context) error {
	select {
	case <-ctx.Done():
		return nil
	case <-f.failRun:
		return f.runErr
	}
}

func (f *fakeRole) Stop(ctx context.Context) error {
	f.rec.add("stop:" + f.name)
	if f.group != nil {
		f.group.Stop(ctx)
	}
	if f.stopBlock != nil {
		<-f.stopBlock
	}
	return nil
}

func (f *fakeRole) Drain()                          { f.rec.add("drain:" + f.name) }
func (f *fakeRole) Ready(context.Context) Readiness { return f.ready }
func (f *fakeRole) Details() any                    { return map[string]string{"role": f.name} }
func (f *fakeRole) TaskGroup() *TaskGroup           { return f.group }
func (f *fakeRole) Apply(any) error                 { return f.applyErr }
func newFake(name string, rec *recorder) *fakeRole  { return &fakeRole{name: name, rec: rec} }
func tableOrder() []string                          { return []string{"registry", "index", "storage", "edge", "gateway"} }
func testManager(set *metrics.Set, d time.Duration) *Manager {
	return NewManager(ManagerOptions{Log: zerolog.Nop(), Metrics: NewMetrics(set), DrainDeadline: d})
}

// addAll adds one fake per name and returns them by name.
func addAll(m *Manager, rec *recorder, names ...string) map[string]*fakeRole {
	out := map[string]*fakeRole{}
	for _, n := range names {
		out[n] = newFake(n, rec)
		m.Add(out[n], "127.0.0.1:0")
	}
	return out
}

// prefixed returns the entries of log that start with p.
func prefixed(log []string, p string) []string {
	var out []string
	for _, s := range log {
		if strings.HasPrefix(s, p) {
			out = append(out, strings.TrimPrefix(s, p))
		}
	}
	return out
}

func states(m *Manager) map[string]State {
	out := map[string]State{}
	for _, s := range m.Status() {
		out[s.Name] = s.State
	}
	return out
}

func TestManagerStartStopOrder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := &recorder{}
		bus := NewBus(nil)
		sub := bus.Subscribe("test")
		defer sub.Close()
		m := NewManager(ManagerOptions{Log: zerolog.Nop(), Bus: bus})
		addAll(m, rec, tableOrder()...)
		if err := m.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		done := make(chan error)
		go func() { done <- m.Run(context.Background()) }() // Manager.Run, owned by this test
		synctest.Wait()
		if m.Draining() {
			t.Fatal("draining before shutdown")
		}
		m.RequestShutdown("test")
		if !m.Draining() {
			t.Fatal("Draining() false right after RequestShutdown")
		}
		if err := <-done; err != nil {
			t.Fatalf("Run = %v", err)
		}
		<-m.ShutdownDone()
		log := rec.get()
		rev := slices.Clone(tableOrder())
		slices.Reverse(rev)
		if got := prefixed(log, "start:"); !slices.Equal(got, tableOrder()) {
			t.Errorf("start order %v", got)
		}
		if got := prefixed(log, "stop:"); !slices.Equal(got, rev) {
			t.Errorf("stop order %v", got)
		}
		if got := prefixed(log, "drain:"); !slices.Equal(got, rev) {
			t.Errorf("drain order %v", got)
		}
		if i, j := slices.Index(log, "drain:registry"), slices.Index(log, "stop:gateway"); i > j {
			t.Errorf("a Stop ran before every Drain: %v", log)
		}
		for n, s := range states(m) {
			if s != StateTerminated {
				t.Errorf("%s: state %s", n, s)
			}
		}
		if ev := <-sub.C(); ev != (Shutdown{}) {
			t.Errorf("bus event %#v", ev)
		}
		if err := m.Run(context.Background()); err == nil {
			t.Error("second Run accepted")
		}
	})
}

func TestManagerStartFailureRollsBack(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := &recorder{}
		m := testManager(nil, 0)
		roles := addAll(m, rec, tableOrder()...)
		boom := errors.New("address in use")
		roles["storage"].startErr = boom
		err := m.Start(context.Background())
		if !errors.Is(err, boom) || !strings.Contains(err.Error(), "role storage") {
			t.Fatalf("Start = %v", err)
		}
		want := []string{"start:registry", "start:index", "start:storage", "stop:index", "stop:registry"}
		if got := rec.get(); !slices.Equal(got, want) {
			t.Fatalf("calls %v, want %v", got, want)
		}
		st := states(m)
		if st["registry"] != StateTerminated || st["index"] != StateTerminated ||
			st["storage"] != StateFailed || st["edge"] != StateNew {
			t.Fatalf("states %v", st)
		}
		for _, s := range m.Status() {
			if s.Name == "storage" && !strings.Contains(s.LastError, "address in use") {
				t.Errorf("last error %q", s.LastError)
			}
		}
		if m.Start(context.Background()) == nil {
			t.Error("second Start accepted")
		}
	})
}

func TestManagerRunFailureShutsDown(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := &recorder{}
		m := testManager(nil, 0)
		roles := addAll(m, rec, tableOrder()...)
		boom := errors.New("listener died")
		roles["index"].failRun, roles["index"].runErr = make(chan struct{}), boom
		if err := m.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		done := make(chan error)
		go func() { done <- m.Run(context.Background()) }() // Manager.Run, owned by this test
		close(roles["index"].failRun)
		err := <-done
		if !errors.Is(err, boom) || !strings.Contains(err.Error(), "role index") {
			t.Fatalf("Run = %v", err)
		}
		rev := slices.Clone(tableOrder())
		slices.Reverse(rev)
		if got := prefixed(rec.get(), "stop:"); !slices.Equal(got, rev) {
			t.Errorf("stop order %v", got)
		}
		if st := states(m); st["index"] != StateFailed || st["storage"] != StateTerminated {
			t.Errorf("states %v", st)
		}
	})
}

func TestManagerContextEndsRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := testManager(nil, 0)
		addAll(m, &recorder{}, "edge")
		if err := m.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error)
		go func() { done <- m.Run(ctx) }() // Manager.Run, owned by this test
		cancel()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	})
}

// TestManagerDrainDeadline: a role with an in-flight worker that ignores
// cancellation; the shutdown ends exactly at the drain deadline and the
// straggler is counted.
func TestManagerDrainDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		set := metrics.NewSet()
		m := testManager(set, 3*time.Second)
		rec := &recorder{}
		roles := addAll(m, rec, "storage", "gateway")
		release := make(chan struct{})
		g := NewTaskGroup("storage", zerolog.Nop(), NewMetrics(set))
		roles["storage"].group = g
		g.Go("inflight-put", func(context.Context) error { <-release; return nil })
		g.Go("repair", func(ctx context.Context) error { <-ctx.Done(); return nil })
		if err := m.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		done := make(chan error)
		go func() { done <- m.Run(context.Background()) }() // Manager.Run, owned by this test
		synctest.Wait()
		start := time.Now()
		m.RequestShutdown("test")
		<-m.ShutdownDone()
		if el := time.Since(start); el != 3*time.Second {
			t.Fatalf("shutdown took %v, want exactly the 3 s drain deadline", el)
		}
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		got := scrape(t, set)
		if v := got[`ron_tasks_aborted_total{role="storage",kind="worker"}`]; v != 1 {
			t.Errorf("worker aborts = %v, want 1 (%v)", v, got)
		}
		if _, ok := got[`ron_tasks_aborted_total{role="storage",kind="role_stop"}`]; ok {
			t.Error("a Stop that respected ctx was counted as abandoned")
		}
		close(release)
	})
}

// TestManagerAbandonsStopIgnoringCtx: Stop that ignores ctx is abandoned
// shortly after the deadline and counted; the next role still stops.
func TestManagerAbandonsStopIgnoringCtx(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		set := metrics.NewSet()
		m := testManager(set, time.Second)
		rec := &recorder{}
		roles := addAll(m, rec, "registry", "edge")
		release := make(chan struct{})
		roles["edge"].stopBlock = release
		if err := m.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		done := make(chan error)
		go func() { done <- m.Run(context.Background()) }() // Manager.Run, owned by this test
		start := time.Now()
		m.RequestShutdown("test")
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if el := time.Since(start); el != time.Second+stopGrace {
			t.Fatalf("shutdown took %v", el)
		}
		if v := metric(t, set, `ron_tasks_aborted_total{role="edge",kind="role_stop"}`); v != 1 {
			t.Errorf("role_stop aborts = %v", v)
		}
		if st := states(m); st["edge"] != StateFailed || st["registry"] != StateTerminated {
			t.Errorf("states %v", st)
		}
		close(release)
	})
}

func TestManagerReadinessAndStatus(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := testManager(nil, 0)
		roles := addAll(m, &recorder{}, "index", "storage", "edge")
		ctx := context.Background()
		if r := m.Readiness(ctx); !slices.Equal(r.Missing, []string{"index", "storage", "edge"}) || r.Ready() {
			t.Fatalf("before start: %+v", r)
		}
		roles["edge"].ready = Readiness{Missing: []string{"edge:pack:world"}}
		g := NewTaskGroup("index", zerolog.Nop(), nil, WithBackoff(Backoff{Base: time.Millisecond, Max: time.Millisecond, Factor: 1}))
		roles["index"].group = g
		if err := m.Start(ctx); err != nil {
			t.Fatal(err)
		}
		if r := m.Readiness(ctx); !slices.Equal(r.Missing, []string{"edge:pack:world"}) || len(r.Degraded) != 0 {
			t.Fatalf("running: %+v", r)
		}
		calls := make(chan time.Time)
		g.Go("flaky", failing(calls, false))
		for range 6 {
			<-calls
		}
		synctest.Wait()
		if r := m.Readiness(ctx); !slices.Equal(r.Degraded, []string{"index"}) {
			t.Fatalf("degraded: %+v", r)
		}
		byName := map[string]RoleStatus{}
		for _, s := range m.Status() {
			byName[s.Name] = s
		}
		if s := byName["index"]; !s.Degraded || !s.Ready || s.Restarts != 5 || s.State != StateRunning || s.Listen != "127.0.0.1:0" {
			t.Errorf("index status %+v", s)
		}
		if s := byName["edge"]; s.Ready || s.Details.(map[string]string)["role"] != "edge" {
			t.Errorf("edge status %+v", s)
		}
		roles["storage"].applyErr = errors.New("listen cannot change live")
		if err := m.Apply(struct{}{}); err == nil || !strings.Contains(err.Error(), "role storage") {
			t.Errorf("Apply = %v", err)
		}
		done := make(chan error)
		go func() { done <- m.Run(ctx) }() // Manager.Run, owned by this test
		m.RequestShutdown("test")
		if r := m.Readiness(ctx); len(r.Missing) != 3 {
			t.Errorf("draining: %+v", r)
		}
		<-done
	})
}

func TestStateString(t *testing.T) {
	want := []string{"new", "starting", "running", "stopping", "terminated", "failed"}
	for i, w := range want {
		if got := State(i).String(); got != w {
			t.Errorf("State(%d) = %s", i, got)
		}
	}
	if b, _ := StateFailed.MarshalText(); string(b) != "failed" || State(42).String() != "unknown" {
		t.Error("MarshalText/unknown")
	}
}

func TestManagerAddPanics(t *testing.T) {
	m := testManager(nil, 0)
	m.Add(newFake("edge", &recorder{}), "")
	defer func() {
		if recover() == nil {
			t.Fatal("duplicate role accepted")
		}
	}()
	m.Add(newFake("edge", &recorder{}), "")
}

// impaired is a running role that reports why it is impaired.
type impaired struct {
	*fakeRole
	why string
}

func (i impaired) LastError() string { return i.why }

// TestStatusShowsLastErrorer: a running role's own last error shows in its
// status.
func TestStatusShowsLastErrorer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := &recorder{}
		m := testManager(metrics.NewSet(), time.Second)
		m.Add(impaired{newFake("registry", rec), "writes unready: verify_failed"}, "127.0.0.1:0")
		if err := m.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		st := m.Status()
		if len(st) != 1 || st[0].LastError != "writes unready: verify_failed" {
			t.Fatalf("status %+v", st)
		}
		m.RequestShutdown("test end")
		runCtx, cancel := context.WithCancel(context.Background())
		defer cancel()
		if err := m.Run(runCtx); err != nil {
			t.Fatal(err)
		}
	})
}
