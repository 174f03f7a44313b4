package storage

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/rs/zerolog"

	"github.com/ronhq/ron/roles/storage/announcing"
	"github.com/ronhq/ron/runtime"
	"github.com/ronhq/ron/runtime/cluster"
	"github.com/ronhq/ron/store"
	"github.com/ronhq/ron/store/memory"
)

func TestReprovideTTL(t *testing.T) {
	for _, tc := range []struct {
		providerTTL, last, want time.Duration
	}{
		{600 * time.Second, 0, 600 * time.Second},
		{600 * time.Second, 200 * time.Second, 600 * time.Second},
		{600 * time.Second, 300 * time.Second, 600 * time.Second},
		{600 * time.Second, 400 * time.Second, 800 * time.Second},
		{600 * time.Second, 301200 * time.Millisecond, 603 * time.Second}, // 602.4 s rounded up
		{86400 * time.Second, 50000 * time.Second, announcing.MaxProviderTTL},
		{60 * time.Second, 24 * time.Hour, announcing.MaxProviderTTL},
		{time.Second, 0, time.Second},
		{1500 * time.Millisecond, 0, 2 * time.Second},
	} {
		if got := reprovideTTL(tc.providerTTL, tc.last); got != tc.want {
			t.Errorf("reprovideTTL(%v, %v) = %v, want %v", tc.providerTTL, tc.last, got, tc.want)
		}
	}
}

// passSink records every batch with its time. delay makes each call take
// that long (a slow index); during, when set, runs inside the first call
// before its batch is recorded.
type passSink struct {
	mu      sync.Mutex
	at      []time.Time
	batches [][]announcing.Record
	delay   time.Duration
	during  func()
}

func (s *passSink) Announce(ctx context.Context, batch []announcing.Record) error {
	time.Sleep(s.delay)
	s.mu.Lock()
	during := s.during
	s.during = nil
	s.mu.Unlock()
	if during != nil {
		during()
	}
	s.record(batch)
	return nil
}

func (s *passSink) record(batch []announcing.Record) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.at = append(s.at, time.Now())
	s.batches = append(s.batches, append([]announcing.Record(nil), batch...))
}

func (s *passSink) snap() ([]time.Time, [][]announcing.Record) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Time(nil), s.at...), append([][]announcing.Record(nil), s.batches...)
}

// reprovideEnv is a memory engine, an announcer and a reprovider in a
// synctest bubble.
type reprovideEnv struct {
	engine *memory.Store
	a      *announcer
	p      *reprovider
	cfg    *runtime.Snapshot[Config]
	m      *runtime.Metrics
	ids    []store.ID
}

// newReprovideEnv stores n objects (every other one typed text/plain).
func newReprovideEnv(t *testing.T, sink announcing.Sink, n int, providerTTL time.Duration) *reprovideEnv {
	t.Helper()
	cfg := DefaultConfig()
	cfg.ProviderTTL = providerTTL
	e := &reprovideEnv{engine: memory.New(memory.Options{}), cfg: runtime.NewSnapshot(&cfg), m: runtime.NewMetrics(nil)}
	t.Cleanup(func() { _ = e.engine.Close() })
	for i := range n {
		meta := store.Meta{}
		if i%2 == 0 {
			meta.ContentType = "text/plain"
		}
		info, _, err := e.engine.Put(context.Background(), bytes.NewReader([]byte{byte(i), byte(i >> 8), 1}), store.PutOptions{Meta: meta})
		if err != nil {
			t.Fatal(err)
		}
		e.ids = append(e.ids, info.ID)
	}
	e.a = newAnnouncer(sink, e.m, 1024)
	e.p = newReprovider(e.engine, e.a, e.cfg, roleMetrics{e.m}, zerolog.Nop())
	return e
}

// run starts the reprovide and announce workers; stop ends both.
func (e *reprovideEnv) run() (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { _ = e.p.run(ctx) })
	wg.Go(func() { _ = e.a.run(ctx) })
	return func() { cancel(); wg.Wait() }
}

func (e *reprovideEnv) setTTL(d time.Duration) {
	cfg := *e.cfg.Load()
	cfg.ProviderTTL = d
	e.cfg.Store(&cfg)
	e.p.reload()
}

// TestReprovidePacing: 2500 objects go out as 1000, 1000, 500 records, one
// batch per 100 ms, each with the pass TTL and the stored Content-Type;
// the next pass starts provider_ttl/2 after this one ended.
func TestReprovidePacing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sink := &passSink{}
		e := newReprovideEnv(t, sink, 2500, time.Minute)
		start := time.Now()
		stop := e.run()
		defer stop()
		time.Sleep(30200*time.Millisecond - time.Nanosecond)
		synctest.Wait()
		at, batches := sink.snap()
		if len(at) != 3 || len(batches[0]) != 1000 || len(batches[1]) != 1000 || len(batches[2]) != 500 {
			t.Fatalf("%d batches", len(at))
		}
		for i, want := range []time.Duration{0, 100 * time.Millisecond, 200 * time.Millisecond} {
			if at[i].Sub(start) != want {
				t.Fatalf("batch %d at %v, want %v", i, at[i].Sub(start), want)
			}
		}
		types := map[store.ID]string{}
		for _, b := range batches {
			for _, r := range b {
				if r.TTL != time.Minute {
					t.Fatalf("TTL %v", r.TTL)
				}
				types[r.ID] = r.Type
			}
		}
		for i, id := range e.ids {
			if want := map[bool]string{true: "text/plain"}[i%2 == 0]; types[id] != want {
				t.Fatalf("object %d: type %q, want %q (or missing)", i, types[id], want)
			}
		}
		m := scrapeSet(t, e.m)
		if m[series("storage_reprovide_last_duration_seconds")] != 0.2 || m[series("tasks_spawned_total", "kind", "reprovide")] != 1 {
			t.Fatalf("metrics %v", m)
		}
		time.Sleep(time.Nanosecond)
		synctest.Wait()
		if at, _ = sink.snap(); len(at) != 4 || at[3].Sub(start) != 30200*time.Millisecond {
			t.Fatalf("second pass: %d batches, last at %v", len(at), at[len(at)-1].Sub(start))
		}
	})
}

// TestReprovideSlowPassStretchesTTL: a pass that took 40 s is followed one
// provider_ttl/2 later by a pass announcing with 2 × 40 s.
func TestReprovideSlowPassStretchesTTL(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sink := &passSink{delay: 40 * time.Second}
		e := newReprovideEnv(t, sink, 3, time.Minute)
		start := time.Now()
		stop := e.run()
		defer stop()
		time.Sleep(150 * time.Second)
		at, batches := sink.snap()
		if len(at) != 2 || at[0].Sub(start) != 40*time.Second || at[1].Sub(start) != 110*time.Second {
			t.Fatalf("batches at %v", at)
		}
		if batches[0][0].TTL != time.Minute || batches[1][0].TTL != 80*time.Second {
			t.Fatalf("TTLs %v, %v", batches[0][0].TTL, batches[1][0].TTL)
		}
		if got := scrapeSet(t, e.m)[series("storage_reprovide_last_duration_seconds")]; got != 40 {
			t.Fatalf("last duration %v", got)
		}
	})
}

// TestReprovideReloadTTL: a provider_ttl reload re-plans the wait (from the
// end of the last pass) and sets the next pass's TTL.
func TestReprovideReloadTTL(t *testing.T) {
	for _, tc := range []struct {
		name      string
		ttl       time.Duration
		nextAfter time.Duration
	}{
		{"shorter", time.Minute, 30 * time.Second},
		{"longer", 1200 * time.Second, 600 * time.Second},
		{"shorter than elapsed", 10 * time.Second, 10 * time.Second}, // 5 s past already: at once
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				sink := &passSink{}
				e := newReprovideEnv(t, sink, 1, 600*time.Second)
				start := time.Now()
				stop := e.run()
				defer stop()
				time.Sleep(10 * time.Second)
				e.setTTL(tc.ttl)
				time.Sleep(time.Hour)
				at, batches := sink.snap()
				if len(at) < 2 || at[1].Sub(start) != tc.nextAfter || batches[1][0].TTL != tc.ttl {
					t.Fatalf("second pass at %v with TTL %v", at[1].Sub(start), batches[1][0].TTL)
				}
			})
		})
	}
}

// TestReprovideWithdrawHasLastWord: objects deleted and quarantined while
// their re-provide batch is in flight, whose withdraws reached the index
// before that batch, still end withdrawn: the pass withdraws again what
// left the store meanwhile.
func TestReprovideWithdrawHasLastWord(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sink := &passSink{}
		e := newReprovideEnv(t, sink, 3, time.Minute)
		deleted, quarantined := e.ids[0], e.ids[1]
		sink.during = func() {
			ctx := context.Background()
			if err := e.engine.Delete(ctx, deleted); err != nil {
				t.Error(err)
			}
			sink.record([]announcing.Record{{ID: deleted}}) // DELETE's withdraw overtakes the batch
			if err := e.engine.Quarantine(ctx, quarantined, "test"); err != nil {
				t.Error(err)
			}
			sink.record([]announcing.Record{{ID: quarantined}}) // so does onCorrupt's
		}
		stop := e.run()
		defer stop()
		time.Sleep(time.Second)
		_, batches := sink.snap()
		if len(batches) < 4 || len(batches[2]) != 3 || batches[2][0].TTL != time.Minute {
			t.Fatalf("want 2 withdraws, the re-provide batch of 3, then withdraws: %v", batches)
		}
		last := map[store.ID]time.Duration{}
		for _, b := range batches {
			for _, r := range b {
				last[r.ID] = r.TTL
			}
		}
		if last[deleted] != 0 || last[quarantined] != 0 || last[e.ids[2]] != time.Minute {
			t.Fatalf("last records %v (batches %v)", last, batches)
		}
	})
}

// TestReprovideEmptyStore: a pass over nothing sends nothing but still
// counts and times the pass.
func TestReprovideEmptyStore(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sink := &passSink{}
		e := newReprovideEnv(t, sink, 0, 10*time.Second)
		stop := e.run()
		defer stop()
		time.Sleep(12 * time.Second)
		if at, _ := sink.snap(); len(at) != 0 {
			t.Fatalf("sent %d batches", len(at))
		}
		if got := scrapeSet(t, e.m)[series("tasks_spawned_total", "kind", "reprovide")]; got != 3 {
			t.Fatalf("passes %v, want 3 (0 s, 5 s, 10 s)", got)
		}
	})
}

// watchSink is a passSink that follows index members like indexsink does
// in cluster mode.
type watchSink struct {
	*passSink
	m *cluster.Static
}

func (w watchSink) IndexChanges() (<-chan struct{}, func()) { return w.m.Subscribe() }

func (w watchSink) IndexMembers() string {
	var s string
	for _, m := range w.m.View().Alive("index") {
		s += m.ID + "=" + m.URL("index") + " "
	}
	return s
}

// members is a view of alive members "id:role".
func members(specs ...string) *cluster.View {
	ms := make([]cluster.Member, len(specs))
	for i, s := range specs {
		id, role, _ := strings.Cut(s, ":")
		ms[i] = cluster.Member{ID: id, Roles: []string{role}, URLs: map[string]string{role: "http://" + id},
			State: cluster.StateAlive}
	}
	return cluster.NewView("self", ms, time.Now())
}

// TestReprovideOnIndexMembershipChange: a pass starts reprovideSettle after
// the alive index members changed, once per burst of changes; a change of
// other members, or one undone within the settle time, starts none.
func TestReprovideOnIndexMembershipChange(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := cluster.NewStatic(members("i1:index", "s1:storage"))
		sink := watchSink{&passSink{}, m}
		e := newReprovideEnv(t, sink, 1, time.Hour)
		start := time.Now()
		stop := e.run()
		defer stop()
		steps := []struct {
			at   time.Duration
			view *cluster.View
		}{
			{5 * time.Second, members("i1:index", "i2:index", "s1:storage")},  // pass at 15 s
			{20 * time.Second, members("i1:index", "i2:index", "s2:storage")}, // storage only: none
			{30 * time.Second, members("i1:index", "i2:index", "i3:index")},   // undone at 35 s: none
			{35 * time.Second, members("i1:index", "i2:index", "s2:storage")}, //
			{50 * time.Second, members("i1:index", "s2:storage")},             // burst: one pass at 60 s
			{55 * time.Second, members("i1:index", "i4:index", "s2:storage")}, //
			{58 * time.Second, members("i1:index", "i4:index", "s2:storage")}, //
		}
		for _, s := range steps {
			time.Sleep(time.Until(start.Add(s.at)))
			m.Set(s.view)
		}
		time.Sleep(time.Until(start.Add(10 * time.Minute)))
		at, _ := sink.snap()
		var got []time.Duration
		for _, a := range at {
			got = append(got, a.Sub(start))
		}
		if want := []time.Duration{0, 15 * time.Second, 60 * time.Second}; !slices.Equal(got, want) {
			t.Fatalf("passes at %v, want %v", got, want)
		}
	})
}

// TestReprovideIndexWatchPlainSink: a sink that follows no cluster never
// signals an index change.
func TestReprovideIndexWatchPlainSink(t *testing.T) {
	p := &reprovider{announce: &announcer{sink: &passSink{}}}
	iw := p.watchIndex()
	defer iw.cancel()
	iw.mark()
	if iw.w != nil || iw.changes != nil || iw.changed() {
		t.Fatalf("plain sink watched: %+v", iw)
	}
}
