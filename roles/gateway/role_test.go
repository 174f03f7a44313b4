package gateway

import (
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/ronhq/ron/store"
)

// TestDrain (docs/gateway.md §8): at Drain every queued request and every new one answers
// 503 draining, readiness turns false, and the request holding a slot
// still completes.
func TestDrain(t *testing.T) {
	g := startSaturated(t, func(*Config) {})
	held := g.hold()
	queued := g.queue(1, 1)[0]
	g.r.Drain()
	a := <-queued
	if a.err != nil {
		t.Fatal(a.err)
	}
	wantLimit(t, "queued request at Drain", a, 503, "draining", "", "", 0)
	wantLimit(t, "request after Drain", g.do("GET", "/o/"+store.Sum([]byte("late")).String(), nil), 503, "draining", "", "", 0)
	wantLimit(t, "write after Drain", g.do("POST", "/o", []byte("x"), "Authorization", g.bearer("", "storage:write")),
		503, "draining", "", "", 0)
	if rd := g.r.Ready(t.Context()); rd.Ready() || len(rd.Missing) == 0 {
		t.Errorf("Ready after Drain = %+v, want not ready", rd)
	}
	g.finish(t, held)
	if n := g.storage.count(); n != 1 {
		t.Errorf("storage received %d requests, want only the one admitted before Drain", n)
	}
}

// TestApplyRestartOnlyKeys (docs/gateway.md §7): a reload changing listen or an upstream
// URL is refused naming the key; nothing of it applies.
func TestApplyRestartOnlyKeys(t *testing.T) {
	s := newStub(nil)
	cfg := baseConfig()
	cfg.StorageURL = s.listen(t)
	h := startGateway(t, cfg, Locals{})
	for _, row := range []struct {
		key    string
		change func(*Config)
	}{
		{"storage_url", func(c *Config) { c.StorageURL = "http://127.0.0.1:1" }},
		{"index_url", func(c *Config) { c.IndexURL = "http://127.0.0.1:1" }},
		{"edge_url", func(c *Config) { c.EdgeURL = "http://127.0.0.1:1" }},
		{"registry_url", func(c *Config) { c.RegistryURL = "http://127.0.0.1:1" }},
		{"listen", func(c *Config) { c.Listen = "127.0.0.1:1" }},
	} {
		n := cfg
		row.change(&n)
		n.AnonRPS = 0 // would suspend anonymous reads if applied
		err := h.r.Apply(n)
		if err == nil || !strings.Contains(err.Error(), row.key) {
			t.Errorf("Apply changing %s: %v, want an error naming it", row.key, err)
		}
	}
	if err := h.r.Apply("not a config"); err == nil {
		t.Error("Apply accepted a value that is not a gateway Config")
	}
	if a := h.do("GET", "/o/"+store.Sum([]byte("x")).String(), nil); a.status != http.StatusOK {
		t.Errorf("GET after refused reloads: %s, want 200 (nothing applied)", a)
	}
}

// TestApplyTenantLimits (docs/gateway.md §7): new tenant limits take effect on Apply,
// for listed tenants and for the anonymous defaults.
func TestApplyTenantLimits(t *testing.T) {
	s := newStub(nil)
	cfg := baseConfig()
	cfg.StorageURL = s.listen(t)
	cfg.Tenants = []TenantConfig{{ID: "acme", RPS: ptr(1e6)}}
	h := startGateway(t, cfg, Locals{})
	path := "/o/" + store.Sum([]byte("x")).String()
	acme := h.bearer("acme", "storage:read")
	if a := h.do("GET", path, nil, "Authorization", acme); a.status != http.StatusOK {
		t.Fatalf("acme before the reload: %s", a)
	}

	n := cfg
	n.Tenants = []TenantConfig{{ID: "acme", RPS: ptr(0.0)}}
	n.AnonRPS, n.AnonBurst = 0.01, 1
	if err := h.r.Apply(n); err != nil {
		t.Fatalf("Apply: %v", err)
	}
	env := want(t, "acme after rps 0", h.do("GET", path, nil, "Authorization", acme), 403, "forbidden")
	if env.Error.Details["reason"] != "tenant_suspended" {
		t.Errorf("details %v, want reason tenant_suspended", env.Error.Details)
	}
	h.do("GET", path, nil) // may take the bucket's last token
	wantLimit(t, "anonymous after anon_rps 0.01", h.do("GET", path, nil), 429, "rate_limited", "limit", "tenant_rps", 0)

	if err := h.r.Apply(cfg); err != nil {
		t.Fatalf("Apply back: %v", err)
	}
	if a := h.do("GET", path, nil, "Authorization", acme); a.status != http.StatusOK {
		t.Errorf("acme after restoring rps: %s", a)
	}
}

// TestStopReleasesProviderConnections: Stop leaves no connection open to
// a provider (nor to any other upstream).
func TestStopReleasesProviderConnections(t *testing.T) {
	obj := object{data: blob(9, 3000), ctype: "text/plain"}
	var open atomic.Int32
	ps := httptest.NewUnstartedServer(newStub(serveObjects(false, obj)))
	ps.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		switch s {
		case http.StateNew:
			open.Add(1)
		case http.StateClosed, http.StateHijacked:
			open.Add(-1)
		}
	}
	ps.Start()
	t.Cleanup(ps.Close)
	f := startProviders(t, func(string) map[store.ID][]string {
		return map[store.ID][]string{store.Sum(obj.data): {ps.URL}}
	})
	if a := f.do("GET", "/o/"+store.Sum(obj.data).String(), nil); a.status != http.StatusOK {
		t.Fatalf("GET via provider: %s", a)
	}
	f.stop()
	eventually(t, "connections to the provider closed after Stop", func() bool { return open.Load() == 0 })
}
