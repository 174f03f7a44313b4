package gateway

import (
	"bytes"
	"net/http"
	"testing"
	"time"

	"github.com/ronhq/ron/httpx/auth"
	"github.com/ronhq/ron/runtime"
	"github.com/ronhq/ron/store"
)

// ptr returns a pointer to v (optional TenantConfig fields).
func ptr[T any](v T) *T { return &v }

// TestTenantAdmission (docs/gateway.md §3.3, docs/gateway.md §3.4): the anonymous bucket empties into 429
// tenant_rps, a suspended tenant is 403 tenant_suspended, a token naming
// two tenants is 403; each refusal is counted by reason.
func TestTenantAdmission(t *testing.T) {
	s := newStub(nil)
	cfg := baseConfig()
	cfg.StorageURL = s.listen(t)
	cfg.AnonRPS, cfg.AnonBurst = 0.01, 1 // one request, then a token every 100 s
	cfg.Tenants = []TenantConfig{{ID: "frozen", RPS: ptr(0.0)}}
	h := startGateway(t, cfg, Locals{})
	path := "/o/" + store.Sum([]byte("x")).String()
	twoTenants, err := auth.Attenuate(h.token("acme", "storage:read"), auth.TenantCaveat("other"))
	if err != nil {
		t.Fatal(err)
	}

	if a := h.do("GET", path, nil); a.status != http.StatusOK {
		t.Fatalf("first anonymous GET: %s", a)
	}
	wantLimit(t, "second anonymous GET", h.do("GET", path, nil), 429, "rate_limited", "limit", "tenant_rps", 0)
	env := want(t, "suspended tenant", h.do("GET", path, nil, "Authorization", h.bearer("frozen", "storage:read")),
		403, "forbidden")
	if env.Error.Details["reason"] != "tenant_suspended" {
		t.Errorf("suspended tenant: details %v, want reason tenant_suspended", env.Error.Details)
	}
	want(t, "two tenant caveats", h.do("GET", path, nil, "Authorization", "Bearer "+twoTenants), 403, "forbidden")
	want(t, "invalid token", h.do("GET", path, nil, "Authorization", "Bearer x"+twoTenants), 401, "unauthorized")

	for _, c := range []struct{ reason, tenant string }{
		{"tenant_rps", "anon"}, {"tenant_suspended", "frozen"}, {"forbidden", "other"}, {"unauthorized", "other"},
	} {
		if got := h.metric("gateway_rejected_total", "reason", c.reason, "tenant", c.tenant); got != 1 {
			t.Errorf(`ron_gateway_rejected_total{reason=%q,tenant=%q} = %v, want 1`, c.reason, c.tenant, got)
		}
	}
	if n := s.count(); n != 1 {
		t.Errorf("storage received %d requests, want only the admitted one", n)
	}
}

// saturated is a gateway whose storage holds every request until release
// is closed, with one scheduler slot.
type saturated struct {
	*harness
	storage *stub
	release chan struct{}
}

func startSaturated(t *testing.T, tune func(*Config)) saturated {
	release := make(chan struct{})
	s := newStub(blocking(release))
	cfg := baseConfig()
	cfg.StorageURL = s.listen(t)
	cfg.SchedInflight = 1
	cfg.ForwardTimeout, cfg.MaxQueueWait = testWait, testWait
	tune(&cfg)
	g := saturated{startGateway(t, cfg, Locals{}), s, release}
	t.Cleanup(g.unblock)
	return g
}

// unblock lets the held requests finish (idempotent).
func (g saturated) unblock() {
	select {
	case <-g.release:
	default:
		close(g.release)
	}
}

// hold sends a GET that takes the one slot and waits until storage holds it.
func (g saturated) hold() <-chan answer {
	c := g.async(g.req("GET", "/o/"+store.Sum([]byte("held")).String(), nil))
	g.storage.waitArrival(g.t)
	return c
}

// queue sends n GETs and waits until the scheduler holds want waiting.
func (g saturated) queue(n, want int) []<-chan answer {
	var out []<-chan answer
	for range n {
		out = append(out, g.async(g.req("GET", "/o/"+store.Sum([]byte("queued")).String(), nil)))
	}
	eventually(g.t, "requests waiting in the scheduler", func() bool { return g.r.sched.Waiting() == want })
	return out
}

// finish releases storage and checks that every answer is 200.
func (g saturated) finish(t *testing.T, answers ...<-chan answer) {
	t.Helper()
	g.unblock()
	for _, c := range answers {
		if a := <-c; a.status != http.StatusOK {
			t.Errorf("held or queued request: %s, want 200", a)
		}
	}
}

// TestShedWritesWhileQueued (docs/gateway.md §8): once shed_writes_at × queue_cap requests
// wait, writes are 503 degraded with Retry-After 2 and readiness reports
// the gateway degraded and shedding writes; both clear after
// shed_clear_after once the queue has emptied.
func TestShedWritesWhileQueued(t *testing.T) {
	g := startSaturated(t, func(c *Config) { c.QueueCap, c.ShedWritesAt, c.ShedClearAfter = 4, 0.5, 20*time.Millisecond })
	held := g.hold()
	queued := g.queue(2, 2)
	// The scheduler reports its waiting count to the shedder after queueing.
	eventually(t, "write shedding on", g.r.shed.Writes)
	a := g.do("POST", "/o", []byte("x"), "Authorization", g.bearer("", "storage:write"))
	wantLimit(t, "write while shedding", a, 503, "degraded", "limit", "shed_writes", 2)
	rd := g.r.Ready(t.Context())
	if len(rd.Missing) != 0 || len(rd.Degraded) != 1 || rd.Degraded[0] != "gateway" ||
		rd.Shedding == nil || *rd.Shedding != (runtime.Shedding{Writes: true}) {
		t.Errorf("Ready while shedding = %+v (shedding %+v), want degraded [gateway], writes shed", rd, rd.Shedding)
	}
	if got := g.metric("gateway_shedding", "class", "writes"); got != 1 {
		t.Errorf(`ron_gateway_shedding{class="writes"} = %v, want 1`, got)
	}
	if got := g.metric("gateway_rejected_total", "reason", "shed_writes", "tenant", "default"); got != 1 {
		t.Errorf(`ron_gateway_rejected_total{reason="shed_writes"} = %v, want 1`, got)
	}
	g.finish(t, append(queued, held)...)
	eventually(t, "write shedding to clear", func() bool { return g.r.Ready(t.Context()).Ready() })
	a = g.do("POST", "/o", []byte("x"), "Authorization", g.bearer("", "storage:write"))
	if a.status != http.StatusOK {
		t.Errorf("write after shedding cleared: %s, want 200", a)
	}
}

// TestTenantQueueFull (docs/gateway.md §3.5): a tenant arriving at its full queue gets 429
// tenant_queue with Retry-After 1.
func TestTenantQueueFull(t *testing.T) {
	g := startSaturated(t, func(c *Config) { c.TenantQueueCap = 1 })
	held := g.hold()
	queued := g.queue(1, 1)
	a := g.do("GET", "/o/"+store.Sum([]byte("more")).String(), nil)
	wantLimit(t, "GET at a full tenant queue", a, 429, "rate_limited", "limit", "tenant_queue", 1)
	if got := g.metric("gateway_rejected_total", "reason", "tenant_queue", "tenant", "anon"); got != 1 {
		t.Errorf(`ron_gateway_rejected_total{reason="tenant_queue",tenant="anon"} = %v, want 1`, got)
	}
	g.finish(t, append(queued, held)...)
}

// TestDropOldest (docs/gateway.md §3.5, docs/gateway.md §8): an arrival at a full scheduler queue drops the
// oldest waiting request with 503 busy and queues the new one; readiness
// then reports reads shedding.
func TestDropOldest(t *testing.T) {
	g := startSaturated(t, func(c *Config) { c.QueueCap = 1 })
	held := g.hold()
	oldest := g.queue(1, 1)[0]
	newest := g.async(g.req("GET", "/o/"+store.Sum([]byte("newest")).String(), nil))
	a := <-oldest
	if a.err != nil {
		t.Fatal(a.err)
	}
	env := want(t, "oldest waiting request", a, 503, "busy")
	if a.header.Get("Retry-After") != "1" || env.Error.Details["limit"] == nil {
		t.Errorf("dropped: Retry-After %q details %v, want 1 and a limit", a.header.Get("Retry-After"), env.Error.Details)
	}
	if rd := g.r.Ready(t.Context()); rd.Shedding == nil || !rd.Shedding.Reads {
		t.Errorf("Ready after a drop = %+v, want reads shedding", rd)
	}
	for _, c := range []struct {
		name   string
		labels []string
	}{
		{"ron_gateway_rejected_total", []string{"reason", "sched_drop", "tenant", "anon"}},
		{"ron_queue_dropped_total", []string{"queue", "sched"}},
	} {
		if got := g.metric(c.name, c.labels...); got != 1 {
			t.Errorf("%s%v = %v, want 1", c.name, c.labels, got)
		}
	}
	g.finish(t, held, newest)
}

// TestQueueWaitDeadline (docs/gateway.md §3.5): a waiting request whose deadline
// (Request-Timeout, counted from arrival) passes is removed with 503 busy
// (queue_wait).
func TestQueueWaitDeadline(t *testing.T) {
	g := startSaturated(t, func(*Config) {})
	held := g.hold()
	a := g.do("GET", "/o/"+store.Sum([]byte("impatient")).String(), nil, "Request-Timeout", "0.1")
	wantLimit(t, "request whose deadline passed in the queue", a, 503, "busy", "limit", "queue_wait", 1)
	for _, c := range []struct {
		name   string
		labels []string
	}{
		{"ron_gateway_rejected_total", []string{"reason", "queue_wait", "tenant", "anon"}},
		{"ron_io_timeouts_total", []string{"op", "queue_wait"}},
	} {
		if got := g.metric(c.name, c.labels...); got != 1 {
			t.Errorf("%s%v = %v, want 1", c.name, c.labels, got)
		}
	}
	g.finish(t, held)
}

// TestByteQuota (docs/gateway.md §3.6): an upload over a tenant's byte bucket is paced and
// completes; one whose next chunk would wait longer than forward_timeout is
// 429 tenant_bytes.
func TestByteQuota(t *testing.T) {
	s := newStub(nil)
	cfg := baseConfig()
	cfg.StorageURL = s.listen(t)
	cfg.Tenants = []TenantConfig{{ID: "pacer", MaxBytesPerS: 1 << 20}, {ID: "trickle", MaxBytesPerS: 1}}
	h := startGateway(t, cfg, Locals{})

	// The byte bucket holds max(max_bytes_per_s, 1 MiB): 192 KiB past it
	// take at least 187 ms at 1 MiB/s.
	body := bytes.Repeat([]byte("p"), 1<<20+192<<10)
	start := time.Now()
	a := h.do("PUT", "/o/"+store.Sum(body).String(), body, "Authorization", h.bearer("pacer", "storage:write"))
	took := time.Since(start)
	if a.status != http.StatusOK {
		t.Fatalf("paced upload: %s", a)
	}
	if got := s.requests()[0]; got.bodyErr != nil || !bytes.Equal(got.body, body) {
		t.Errorf("storage received %d bytes (%v), want the whole %d", len(got.body), got.bodyErr, len(body))
	}
	if took < 100*time.Millisecond {
		t.Errorf("upload of 192 KiB over the bucket took %s: not paced at 1 MiB/s", took)
	}

	body = bytes.Repeat([]byte("t"), 1<<20+64<<10)
	a = h.do("POST", "/o", body, "Authorization", h.bearer("trickle", "storage:write"))
	wantLimit(t, "upload past a 1 B/s quota", a, 429, "rate_limited", "limit", "tenant_bytes", 0)
	if got := h.metric("gateway_rejected_total", "reason", "tenant_bytes", "tenant", "trickle"); got != 1 {
		t.Errorf(`ron_gateway_rejected_total{reason="tenant_bytes",tenant="trickle"} = %v, want 1`, got)
	}
	eventually(t, "storage to receive the second upload", func() bool { return s.count() == 2 })
	for _, r := range s.settled(t)[1:] {
		if r.bodyErr == nil {
			t.Errorf("storage received a complete body of %d bytes past the quota", len(r.body))
		}
	}
}
