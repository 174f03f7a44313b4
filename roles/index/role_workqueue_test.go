package index

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ronhq/ron/httpx/auth"
	"github.com/ronhq/ron/roles/index/indexapi"
	"github.com/ronhq/ron/store"
)

// bubbleRole is a role with its store, work queue and routes built but no
// listener, for tests inside a synctest bubble: requests go straight to the
// router.
type bubbleRole struct {
	*Role
	t *testing.T
}

// newBubbleRole builds a role for cfg (modified by mod) in memory.
func newBubbleRole(t *testing.T, mod func(*Config)) *bubbleRole {
	t.Helper()
	cfg := roleTestConfig()
	if mod != nil {
		mod(&cfg)
	}
	r := New(roleOptions(t, cfg))
	if err := r.openStore(t.Context(), cfg); err != nil {
		t.Fatal(err)
	}
	if err := r.build(cfg); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		r.work.abort()
		_ = r.closeStore()
	})
	return &bubbleRole{Role: r, t: t}
}

// serve sends one request from remote (default 192.0.2.1:1234) with an
// optional bearer token and JSON body.
func (b *bubbleRole) serve(method, path, remote, token, body string) *httptest.ResponseRecorder {
	b.t.Helper()
	var hr *http.Request
	if body != "" {
		hr = httptest.NewRequest(method, path, strings.NewReader(body))
		hr.Header.Set("Content-Type", "application/json")
	} else {
		hr = httptest.NewRequest(method, path, nil)
	}
	if remote != "" {
		hr.RemoteAddr = remote
	}
	if token != "" {
		hr.Header.Set("Authorization", "Bearer "+token)
	}
	rec := httptest.NewRecorder()
	b.Server().Echo().ServeHTTP(rec, hr)
	return rec
}

// holdWorker takes one worker slot as a running request would.
func (b *bubbleRole) holdWorker() func() {
	b.t.Helper()
	release, err := b.work.q.Enter(context.Background(), *b.work.pool.Load())
	if err != nil {
		b.t.Fatal(err)
	}
	return release
}

// metric returns one series of the role's metrics.
func (b *bubbleRole) metric(series string) float64 { return b.opt.Metrics.Values()[series] }

// mint mints a one-hour token with scopes.
func (b *bubbleRole) mint(scopes ...string) string {
	b.t.Helper()
	tok, _, err := b.opt.Keys.Mint(authMint(scopes))
	if err != nil {
		b.t.Fatal(err)
	}
	return tok
}

func wantAnswer(t *testing.T, rec *httptest.ResponseRecorder, status int, code, retryAfter string) {
	t.Helper()
	if rec.Code != status || errorCode(rec.Body.Bytes()) != code || rec.Header().Get("Retry-After") != retryAfter {
		t.Fatalf("got %d %q Retry-After %q (%s), want %d %q Retry-After %q", rec.Code,
			errorCode(rec.Body.Bytes()), rec.Header().Get("Retry-After"), rec.Body, status, code, retryAfter)
	}
}

func TestBusyWhenQueueFull(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newBubbleRole(t, func(c *Config) { c.QueueCapacity, c.Workers = 1, 1 })
		defer b.holdWorker()()
		start := time.Now()
		wantAnswer(t, b.serve("GET", "/names/a.example", "", "", ""), 429, "busy", "1")
		if time.Since(start) != 0 {
			t.Fatalf("rejected after %v, want at once", time.Since(start))
		}
		if got := b.metric(`ron_busy_rejections_total{role="index",endpoint="/names/{name}"}`); got != 1 {
			t.Fatalf("busy_rejections_total = %v", got)
		}
		if got := b.metric(`ron_queue_depth{role="index",queue="work"}`); got != 1 {
			t.Fatalf("queue depth %v", got)
		}
	})
}

func TestBusyWhenNoWorkerWithinQueueTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newBubbleRole(t, func(c *Config) { c.QueueCapacity, c.Workers, c.QueueTimeout = 4, 1, time.Second })
		defer b.holdWorker()()
		start := time.Now()
		wantAnswer(t, b.serve("GET", "/names/a.example", "", "", ""), 429, "busy", "1")
		if time.Since(start) != time.Second {
			t.Fatalf("rejected after %v, want queue_timeout", time.Since(start))
		}
	})
}

// TestBudgetStartsAtWorker: a resolve that waited 400 ms for a worker still
// gets its whole 1000 ms budget.
func TestBudgetStartsAtWorker(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newBubbleRole(t, func(c *Config) {
			c.Workers, c.QueueTimeout, c.DeadlineMS, c.HedgeMS = 1, time.Second, 1000, 100
		})
		s := b.h.settings()
		s.Peers = waitingPeers{}
		b.h.Reconfigure(s)
		release := b.holdWorker()
		go func() {
			time.Sleep(400 * time.Millisecond)
			release()
		}()
		start := time.Now()
		wantAnswer(t, b.serve("GET", "/resolve/slow.example", "", "", ""), 504, "timeout", "")
		if time.Since(start) != 1400*time.Millisecond {
			t.Fatalf("answered after %v, want 400ms queued + 1000ms budget", time.Since(start))
		}
		if got := b.metric(`ron_resolve_deadline_hit_total{role="index"}`); got != 1 {
			t.Fatalf("deadline hits %v", got)
		}
	})
}

// waitingPeers answers nothing until the lookup's context ends.
type waitingPeers struct{}

func (waitingPeers) Name(ctx context.Context, _ string) (indexapi.NameRecord, error) {
	<-ctx.Done()
	return indexapi.NameRecord{}, ctx.Err()
}

func (waitingPeers) Providers(ctx context.Context, _ store.ID) (indexapi.ProviderList, error) {
	<-ctx.Done()
	return indexapi.ProviderList{}, ctx.Err()
}

func TestPerIPRateLimit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newBubbleRole(t, func(c *Config) { c.RatelimitRPS, c.RatelimitBurst = 0.5, 1 })
		const ip, other = "198.51.100.7:4000", "198.51.100.8:4000"
		wantAnswer(t, b.serve("GET", "/names/a.example", ip, "", ""), 404, "not_found", "")
		wantAnswer(t, b.serve("GET", "/names/a.example", ip, "", ""), 429, "rate_limited", "2")
		wantAnswer(t, b.serve("GET", "/names/a.example", other, "", ""), 404, "not_found", "")
		if got := b.metric(`ron_index_rate_limited_total{role="index",reason="ip_rate"}`); got != 1 {
			t.Fatalf("rate_limited_total = %v", got)
		}
		time.Sleep(2 * time.Second)
		wantAnswer(t, b.serve("GET", "/names/a.example", ip, "", ""), 404, "not_found", "")
	})
}

// TestCapabilityBeforeBucket: refused tokens take nothing from the bucket
// and are counted as auth failures.
func TestCapabilityBeforeBucket(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newBubbleRole(t, func(c *Config) { c.RatelimitRPS, c.RatelimitBurst, c.PublicReads = 1, 1, false })
		wantAnswer(t, b.serve("GET", "/names/a.example", "", "", ""), 401, "unauthorized", "")
		wantAnswer(t, b.serve("PUT", "/names/a.example", "", b.mint(indexapi.ScopeRead), `{"b3":"`+idA+`"}`), 403, "forbidden", "")
		wantAnswer(t, b.serve("GET", "/names/a.example", "", b.mint(indexapi.ScopeRead), ""), 404, "not_found", "")
		if b.metric(`ron_index_auth_failures_total{role="index",kind="missing"}`) != 1 ||
			b.metric(`ron_index_auth_failures_total{role="index",kind="scope"}`) != 1 {
			t.Fatalf("auth failures %v", b.opt.Metrics.Values())
		}
	})
}

func TestOpsRoutesBypassAdmission(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newBubbleRole(t, func(c *Config) { c.QueueCapacity, c.Workers, c.RatelimitRPS, c.RatelimitBurst = 1, 1, 1, 1 })
		defer b.holdWorker()()
		for range 3 {
			if rec := b.serve("GET", "/healthz", "", "", ""); rec.Code != 200 {
				t.Fatalf("/healthz: %d", rec.Code)
			}
		}
	})
}

func TestWritesCounted(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newBubbleRole(t, nil)
		tok := b.mint(indexapi.ScopeWrite)
		wantAnswer(t, b.serve("PUT", "/names/a.example", "", tok, `{"b3":"`+idA+`"}`), 200, "", "")
		wantAnswer(t, b.serve("PUT", "/names/a.example", "", tok, `{"b3":"B3:x"}`), 400, "bad_request", "")
		put := httptest.NewRequest("PUT", "/names/a.example", strings.NewReader(`{"b3":"`+idA+`"}`))
		put.Header.Set("Content-Type", "application/json")
		put.Header.Set("If-Match", `"7"`)
		put.Header.Set("Authorization", "Bearer "+tok)
		rec := httptest.NewRecorder()
		b.Server().Echo().ServeHTTP(rec, put)
		wantAnswer(t, rec, 412, "precondition_failed", "")
		for series, want := range map[string]float64{
			`ron_index_writes_total{role="index",kind="name",result="ok"}`:                  1,
			`ron_index_writes_total{role="index",kind="name",result="invalid"}`:             1,
			`ron_index_writes_total{role="index",kind="name",result="precondition_failed"}`: 1,
		} {
			if got := b.metric(series); got != want {
				t.Errorf("%s = %v, want %v", series, got, want)
			}
		}
	})
}

func TestAdmissionAppliesLive(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newBubbleRole(t, func(c *Config) { c.Workers, c.QueueTimeout = 1, time.Second })
		defer b.holdWorker()()
		cfg := *b.Cfg.Load()
		cfg.Workers, cfg.CompatRoutes = 2, true
		if err := b.Apply(cfg); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		wantAnswer(t, b.serve("GET", "/names/a.example", "", "", ""), 404, "not_found", "")
		if time.Since(start) != 0 || cap(*b.work.pool.Load()) != 2 {
			t.Fatalf("new pool not used: waited %v", time.Since(start))
		}
	})
}

func TestCompatRoutesFollowTheKey(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newBubbleRole(t, nil)
		body := `{"manifest_cid":"` + idA + `"}`
		tok := b.mint(indexapi.ScopeWrite)
		wantAnswer(t, b.serve("PUT", "/v1/index/sites/blog.example/manifest", "", tok, body), 404, "not_found", "")
		cfg := *b.Cfg.Load()
		cfg.CompatRoutes = true
		if err := b.Apply(cfg); err != nil {
			t.Fatal(err)
		}
		if rec := b.serve("PUT", "/v1/index/sites/blog.example/manifest", "", tok, body); rec.Code != 202 {
			t.Fatalf("compat PUT: %d %s", rec.Code, rec.Body)
		}
	})
}

func TestDrainRefusesNewWork(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newBubbleRole(t, nil)
		b.Drain()
		wantAnswer(t, b.serve("GET", "/names/a.example", "", "", ""), 503, "draining", "1")
		if n := b.work.stop(time.Second); n != 0 {
			t.Fatalf("%d requests running", n)
		}
	})
}

// authMint is one-hour MintOptions for scopes.
func authMint(scopes []string) auth.MintOptions {
	return auth.MintOptions{Scopes: scopes, TTL: time.Hour}
}
