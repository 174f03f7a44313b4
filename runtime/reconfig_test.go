package runtime

import (
	"errors"
	"strings"
	"sync"
	"testing"
)

// testConf is a role config for the Reconfig tests.
type testConf struct {
	Listen string
	Limit  int
}

// reconfigFixture is a role's reload sequence with recorded calls.
type reconfigFixture struct {
	cfg     *Snapshot[testConf]
	mu      sync.Mutex
	running bool
	calls   []string // "old→new" limits seen by Reconfigure
	failRe  error
}

func newReconfigFixture() *reconfigFixture {
	return &reconfigFixture{cfg: NewSnapshot(&testConf{Listen: ":1", Limit: 1})}
}

func (f *reconfigFixture) rc() *Reconfig[testConf] {
	return &Reconfig[testConf]{Role: "demo", Config: f.cfg, Lock: &f.mu,
		Validate: func(n testConf) error {
			if n.Limit < 1 {
				return errors.New("demo.limit: must be positive")
			}
			return nil
		},
		RestartOnly: func(cur, n testConf) []string {
			if cur.Listen != n.Listen {
				return []string{"demo.listen"}
			}
			return nil
		},
		Refuse: func(_, n testConf) error {
			if n.Limit == 13 {
				return errors.New("demo.limit: 13 is forbidden")
			}
			return nil
		},
		Running: func() bool { return f.running },
		Reconfigure: func(old, n testConf) error {
			f.calls = append(f.calls, strings.Repeat("x", old.Limit)+"→"+strings.Repeat("x", n.Limit))
			return f.failRe
		}}
}

func TestReconfigRefusals(t *testing.T) {
	for _, row := range []struct {
		name string
		cfg  any
		want string
	}{
		{"another type", "not a config", "demo: Apply got string"},
		{"a pointer", &testConf{Listen: ":1", Limit: 2}, "demo: Apply got *runtime.testConf"},
		{"invalid", testConf{Listen: ":1", Limit: 0}, "demo.limit: must be positive"},
		{"restart-only key", testConf{Listen: ":2", Limit: 2}, "these keys need a restart: [demo.listen]"},
		{"refused", testConf{Listen: ":1", Limit: 13}, "demo.limit: 13 is forbidden"},
		{"invalid before restart-only", testConf{Listen: ":2", Limit: 0}, "demo.limit: must be positive"},
	} {
		t.Run(row.name, func(t *testing.T) {
			f := newReconfigFixture()
			f.running = true
			if _, err := f.rc().Check(row.cfg); err == nil || err.Error() != row.want {
				t.Fatalf("Check: %v, want %q", err, row.want)
			}
			if err := f.rc().Apply(row.cfg); err == nil || err.Error() != row.want {
				t.Fatalf("Apply: %v, want %q", err, row.want)
			}
			if f.cfg.Version() != 1 || len(f.calls) != 0 {
				t.Fatalf("a refused config was stored (version %d) or applied (%v)", f.cfg.Version(), f.calls)
			}
		})
	}
}

func TestReconfigApply(t *testing.T) {
	f := newReconfigFixture()
	if n, err := f.rc().Check(testConf{Listen: ":1", Limit: 2}); err != nil || n.Limit != 2 || f.cfg.Version() != 1 {
		t.Fatalf("Check: %+v %v, version %d", n, err, f.cfg.Version())
	}
	// Not running: stored only.
	if err := f.rc().Apply(testConf{Listen: ":1", Limit: 2}); err != nil || f.cfg.Load().Limit != 2 || len(f.calls) != 0 {
		t.Fatalf("before start: %v, limit %d, calls %v", err, f.cfg.Load().Limit, f.calls)
	}
	// Running: stored, then reconfigured with the config it replaced.
	f.running = true
	if err := f.rc().Apply(testConf{Listen: ":1", Limit: 3}); err != nil || f.cfg.Load().Limit != 3 || len(f.calls) != 1 || f.calls[0] != "xx→xxx" {
		t.Fatalf("running: %v, limit %d, calls %v", err, f.cfg.Load().Limit, f.calls)
	}
	f.failRe = errors.New("cache refused")
	if err := f.rc().Apply(testConf{Listen: ":1", Limit: 4}); err != f.failRe || f.cfg.Load().Limit != 4 {
		t.Fatalf("a failing reconfigure: %v, limit %d", err, f.cfg.Load().Limit)
	}
}

// Hooks left nil are skipped; Running nil always reconfigures.
func TestReconfigMinimal(t *testing.T) {
	cfg := NewSnapshot(&testConf{})
	var mu sync.Mutex
	n := 0
	rc := &Reconfig[testConf]{Role: "demo", Config: cfg, Lock: &mu, Reconfigure: func(_, _ testConf) error { n++; return nil }}
	if err := rc.Apply(testConf{Listen: ":9"}); err != nil || n != 1 || cfg.Load().Listen != ":9" {
		t.Fatalf("%v, %d calls, %+v", err, n, cfg.Load())
	}
	rc.Reconfigure = nil
	if err := rc.Apply(testConf{Listen: ":8"}); err != nil || cfg.Load().Listen != ":8" {
		t.Fatalf("%v %+v", err, cfg.Load())
	}
}

func TestNeedRestart(t *testing.T) {
	if NeedRestart(nil) != nil || NeedRestart([]string{}) != nil {
		t.Fatal("no keys, yet an error")
	}
	if err := NeedRestart([]string{"edge.listen", "edge.fill_workers"}); err == nil ||
		err.Error() != "these keys need a restart: [edge.listen edge.fill_workers]" {
		t.Fatalf("%v", err)
	}
}

// Concurrent Applies are serialised: every Reconfigure sees the config
// the previous one stored.
func TestReconfigConcurrent(t *testing.T) {
	f := newReconfigFixture()
	f.running = true
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() { _ = f.rc().Apply(testConf{Listen: ":1", Limit: 2 + i}) })
	}
	wg.Wait()
	if len(f.calls) != 8 || f.cfg.Version() != 9 {
		t.Fatalf("%d reconfigures, version %d", len(f.calls), f.cfg.Version())
	}
	prev := "x" // the initial limit, 1
	for _, c := range f.calls {
		old, n, _ := strings.Cut(c, "→")
		if old != prev {
			t.Fatalf("reconfigures %v: %s does not follow %s", f.calls, c, prev)
		}
		prev = n
	}
}
