package rolebase

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/runtime"
	"github.com/ronhq/ron/runtime/module"
)

type cfg struct {
	Listen string
	Port   int // a live key
	Addr2  string
}

func newBase(t *testing.T, listen string) *Base[cfg] {
	t.Helper()
	return New("demo", cfg{Listen: listen}, &module.Env{Log: zerolog.Nop(), Metrics: runtime.NewMetrics(nil)},
		func(c cfg) string { return c.Listen })
}

func TestBaseListenerLifecycle(t *testing.T) {
	b := newBase(t, "127.0.0.1:0")
	if b.Name() != "demo" || b.TaskGroup() == nil {
		t.Fatal("name or task group missing")
	}
	if b.Addr() != "127.0.0.1:0" || b.Handler() != nil || b.Serving() {
		t.Fatalf("before Listen: addr %q, handler %v", b.Addr(), b.Handler())
	}
	if rd, unready := b.Unready(); !unready || rd.Missing[0] != "demo" {
		t.Fatalf("a role not serving is ready: %+v", rd)
	}
	b.NewServer(httpx.ServerOptions{})
	if err := b.Listen(); err != nil {
		t.Fatal(err)
	}
	if _, port, _ := net.SplitHostPort(b.Addr()); port == "0" || b.Handler() == nil {
		t.Fatalf("after Listen: addr %q", b.Addr())
	}
	if _, unready := b.Unready(); unready {
		t.Fatal("a serving role is unready")
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- b.Serve(ctx) }() // Serve: owned by this test, awaited below
	b.Drain()
	if !b.Draining() {
		t.Fatal("Drain did not mark the role draining")
	}
	if _, unready := b.Unready(); !unready {
		t.Fatal("a draining role is ready")
	}
	sctx, scancel := context.WithTimeout(context.Background(), time.Second)
	defer scancel()
	b.Shutdown(sctx)
	cancel()
	if err := <-served; err != nil {
		t.Fatalf("Serve after shutdown: %v", err)
	}
}

func TestBaseListenErrorNamesTheRole(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	b := newBase(t, l.Addr().String())
	b.NewServer(httpx.ServerOptions{})
	if err := b.Listen(); err == nil || !strings.HasPrefix(err.Error(), "demo: listen "+l.Addr().String()+": ") {
		t.Fatalf("Listen on a taken port: %v", err)
	}
	if b.Serving() || b.Handler() != nil {
		t.Fatal("a failed Listen left the role serving")
	}
}

func TestBaseReload(t *testing.T) {
	b := newBase(t, "127.0.0.1:0")
	var applied []int
	b.OnReload(runtime.Reconfig[cfg]{
		Validate: func(c cfg) error {
			if c.Port < 0 {
				return errors.New("port: negative")
			}
			return nil
		},
		RestartOnly: func(cur, n cfg) []string {
			if cur.Listen != n.Listen {
				return []string{"demo.listen"}
			}
			return nil
		},
		Reconfigure: func(_, n cfg) error { applied = append(applied, n.Port); return nil },
	})
	if err := b.Apply(cfg{Listen: "127.0.0.1:0", Port: 1}); err != nil || len(applied) != 0 || b.Config().Port != 1 {
		t.Fatalf("before serving a reload only stores: %v %v %+v", err, applied, b.Config())
	}
	b.NewServer(httpx.ServerOptions{})
	if err := b.Listen(); err != nil {
		t.Fatal(err)
	}
	defer b.Shutdown(context.Background())
	if err := b.Apply(cfg{Listen: "127.0.0.1:0", Port: 2}); err != nil || len(applied) != 1 || applied[0] != 2 {
		t.Fatalf("a serving role is reconfigured: %v %v", err, applied)
	}
	for _, c := range []struct {
		in   any
		want string
	}{
		{"nope", "demo: Apply got string"},
		{cfg{Listen: "127.0.0.1:0", Port: -1}, "port: negative"},
		{cfg{Listen: "127.0.0.1:9", Port: 3}, "these keys need a restart: [demo.listen]"},
	} {
		if err := b.CheckApply(c.in); err == nil || err.Error() != c.want {
			t.Errorf("CheckApply(%v) = %v, want %q", c.in, err, c.want)
		}
		if err := b.Apply(c.in); err == nil {
			t.Errorf("Apply(%v) accepted", c.in)
		}
	}
	if b.Config().Port != 2 || len(applied) != 1 {
		t.Fatalf("a refused reload changed something: %+v %v", b.Config(), applied)
	}
}
