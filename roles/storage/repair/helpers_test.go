package repair

import (
	"context"
	"encoding/binary"
	"errors"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/ronhq/ron/runtime"
	"github.com/ronhq/ron/runtime/cluster"
	"github.com/ronhq/ron/runtime/cluster/placement"
	"github.com/ronhq/ron/store"
)

// member is an alive storage member with base URL http://<id>.
func member(id string, since time.Time) cluster.Member {
	return cluster.Member{ID: id, Roles: []string{placement.Role}, URLs: map[string]string{placement.Role: "http://" + id},
		State: cluster.StateAlive, Since: since}
}

func departed(id string, since time.Time) cluster.Member {
	m := member(id, since)
	m.State = cluster.StateDead
	return m
}

// fakeLocal is an in-memory inventory.
type fakeLocal struct {
	mu     sync.Mutex
	infos  map[store.ID]store.Info
	passes []time.Time // when Count was called: one per pass start
}

func newFakeLocal(infos ...store.Info) *fakeLocal {
	l := &fakeLocal{infos: map[store.ID]store.Info{}}
	for _, in := range infos {
		l.infos[in.ID] = in
	}
	return l
}

func (l *fakeLocal) List(_ context.Context, after *store.ID, limit int) ([]store.Info, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []store.Info
	for _, in := range l.infos {
		if after == nil || in.ID.String() > after.String() {
			out = append(out, in)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID.String() < out[j].ID.String() })
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

func (l *fakeLocal) Stat(_ context.Context, id store.ID) (store.Info, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	in, ok := l.infos[id]
	if !ok {
		return store.Info{}, store.ErrNotFound
	}
	return in, nil
}

func (l *fakeLocal) Count() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.passes = append(l.passes, time.Now())
	return int64(len(l.infos))
}

func (l *fakeLocal) passTimes() []time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]time.Time(nil), l.passes...)
}

// fakeRemote answers Has from per-member holdings; members in fail error.
type fakeRemote struct {
	mu    sync.Mutex
	holds map[string]map[store.ID]bool // base URL → held ids
	fail  map[string]bool
	calls map[string]int
}

func newFakeRemote() *fakeRemote {
	return &fakeRemote{holds: map[string]map[store.ID]bool{}, fail: map[string]bool{}, calls: map[string]int{}}
}

func (f *fakeRemote) hold(member string, ids ...store.ID) {
	f.mu.Lock()
	defer f.mu.Unlock()
	base := "http://" + member
	if f.holds[base] == nil {
		f.holds[base] = map[store.ID]bool{}
	}
	for _, id := range ids {
		f.holds[base][id] = true
	}
}

func (f *fakeRemote) Has(_ context.Context, base string, ids []store.ID) (map[store.ID]bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls[base]++
	if f.fail[base] {
		return nil, errors.New("connection refused")
	}
	out := map[store.ID]bool{}
	for _, id := range ids {
		out[id] = f.holds[base][id]
	}
	return out, nil
}

// fakeExec records transfers; push, when set, runs each push.
type fakeExec struct {
	mu      sync.Mutex
	pushes  []pushCall
	pulls   []store.ID
	drops   []store.ID
	push    func(ctx context.Context, id store.ID, base string, m Meter) (bool, error)
	pull    func(ctx context.Context, id store.ID, sources []string, m Meter) error
	dropErr error
}

type pushCall struct {
	id   store.ID
	base string
}

func (f *fakeExec) Push(ctx context.Context, id store.ID, base string, m Meter) (bool, error) {
	f.mu.Lock()
	f.pushes = append(f.pushes, pushCall{id, base})
	fn := f.push
	f.mu.Unlock()
	if fn != nil {
		return fn(ctx, id, base, m)
	}
	return false, nil
}

func (f *fakeExec) Pull(ctx context.Context, id store.ID, sources []string, m Meter) error {
	f.mu.Lock()
	f.pulls = append(f.pulls, id)
	fn := f.pull
	f.mu.Unlock()
	if fn != nil {
		return fn(ctx, id, sources, m)
	}
	return nil
}

func (f *fakeExec) Drop(_ context.Context, id store.ID) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.dropErr != nil {
		return f.dropErr
	}
	f.drops = append(f.drops, id)
	return nil
}

func (f *fakeExec) dropped() []store.ID {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]store.ID(nil), f.drops...)
}

func testConfig() Config {
	return Config{RF: 2, RepairAfter: 30 * time.Second, Interval: time.Hour, Batch: 1000, ScanRate: 10000,
		Workers: 4, PerTarget: 2, Pace: 50 << 20, Queue: 256, DropExcess: true}
}

// rig is an engine over fakes.
type rig struct {
	*Repairer
	members *cluster.Static
	local   *fakeLocal
	remote  *fakeRemote
	exec    *fakeExec
	metrics *runtime.Metrics
}

func newRig(t *testing.T, cfg Config, v *cluster.View, local *fakeLocal) *rig {
	t.Helper()
	g := &rig{members: cluster.NewStatic(v), local: local, remote: newFakeRemote(), exec: &fakeExec{},
		metrics: runtime.NewMetrics(nil)}
	g.Repairer = New(Options{Members: g.members, Local: local, Remote: g.remote, Exec: g.exec,
		Metrics: g.metrics, Log: zerolog.Nop()}, cfg)
	return g
}

// start runs the engine's tasks in a task group stopped at cleanup.
func (g *rig) start(t *testing.T) {
	t.Helper()
	tg := runtime.NewTaskGroup("storage", zerolog.Nop(), g.metrics)
	g.Start(tg.Go)
	t.Cleanup(func() {
		g.Stop()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		tg.Stop(ctx)
	})
}

func (g *rig) metric(name string, labels ...string) float64 {
	return g.metrics.Values()[runtime.MetricName(name, append([]string{"role", "storage"}, labels...)...)]
}

// objectID returns a distinct object id for n.
func objectID(n int) store.ID {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], uint64(n))
	return store.Sum(b[:])
}

// idsWhere returns count object ids (with their infos) for which keep holds
// of top(rf, ms, id).
func idsWhere(count, rf int, ms []cluster.Member, keep func(top []string) bool) []store.Info {
	var out []store.Info
	for n := 0; len(out) < count; n++ {
		id := objectID(n)
		if keep(placement.IDs(placement.Top(rf, ms, id))) {
			out = append(out, store.Info{ID: id, Size: int64(1000 + n), Chunks: 1})
		}
	}
	return out
}

func contains(ids []string, id string) bool {
	for _, s := range ids {
		if s == id {
			return true
		}
	}
	return false
}
