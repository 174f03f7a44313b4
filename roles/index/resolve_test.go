package index

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ronhq/ron/httpx/client/hedge"
	"github.com/ronhq/ron/roles/index/cache"
	"github.com/ronhq/ron/roles/index/indexapi"
	"github.com/ronhq/ron/store"
)

const idC = "b3:0000000000000000000000000000000000000000000000000000000000000001"

// fakePeers is a PeerSource with canned answers.
type fakePeers struct {
	mu        sync.Mutex
	names     map[string]indexapi.NameRecord
	providers map[string][]indexapi.ProviderInfo
	err       error // returned by every call when set
	block     bool  // wait for ctx to end, then fail with hedge.ErrTimeout
	nameCalls int
	provCalls int
}

func (f *fakePeers) Name(ctx context.Context, key string) (indexapi.NameRecord, error) {
	f.mu.Lock()
	f.nameCalls++
	r, ok := f.names[key]
	err, block := f.err, f.block
	f.mu.Unlock()
	if block {
		<-ctx.Done()
		return indexapi.NameRecord{}, hedge.ErrTimeout
	}
	if err != nil {
		return indexapi.NameRecord{}, err
	}
	if !ok {
		return indexapi.NameRecord{}, hedge.ErrNotFound
	}
	return r, nil
}

func (f *fakePeers) Providers(ctx context.Context, id store.ID) (indexapi.ProviderList, error) {
	f.mu.Lock()
	f.provCalls++
	ps, ok := f.providers[id.String()]
	err, block := f.err, f.block
	f.mu.Unlock()
	if block {
		<-ctx.Done()
		return indexapi.ProviderList{}, hedge.ErrTimeout
	}
	if err != nil {
		return indexapi.ProviderList{}, err
	}
	if !ok {
		return indexapi.ProviderList{}, hedge.ErrNotFound
	}
	return indexapi.ProviderList{B3: id.String(), Providers: ps}, nil
}

func (f *fakePeers) calls() (int, int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.nameCalls, f.provCalls
}

// newResolveEnv is an env with a cache on the test clock and fake peers.
func newResolveEnv(t *testing.T) (*env, *fakePeers) {
	t.Helper()
	e := newEnv(t)
	c, err := cache.New[[]byte](cache.Config{Entries: 100, Now: e.clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	f := &fakePeers{names: map[string]indexapi.NameRecord{}, providers: map[string][]indexapi.ProviderInfo{}}
	e.h.set(func(s *Settings) { s.Cache, s.Peers = c, f })
	return e, f
}

func (e *env) resolve(key string, hdr map[string]string) resp {
	e.t.Helper()
	return e.do(req{method: "GET", path: "/resolve/" + key, hdr: hdr})
}

func decodeResolve(t *testing.T, r resp) indexapi.ResolveAnswer {
	t.Helper()
	var a indexapi.ResolveAnswer
	if err := jsonUnmarshal(r.body, &a); err != nil {
		t.Fatalf("body %q: %v", r.body, err)
	}
	return a
}

func TestResolveLocalName(t *testing.T) {
	e, f := newResolveEnv(t)
	expect(t, e.put("blog.example", idA, nil), 200, "")
	expect(t, e.announce(batch(rec(idA, "s1", `,"type":"application/vnd.ron.manifest+json"`))), 200, "")
	r := e.resolve("blog.example", nil)
	expect(t, r, 200, "")
	a := decodeResolve(t, r)
	if a.Key != "blog.example" || a.Target != idA || a.Kind != "manifest" || a.NameVersion == nil || *a.NameVersion != 1 ||
		a.Source != indexapi.SourceLocal || len(a.Providers) != 1 || a.Partial {
		t.Fatalf("answer %+v", a)
	}
	if cc := r.hdr.Get("Cache-Control"); cc != ccProviders {
		t.Fatalf("Cache-Control %q", cc)
	}
	// Second call comes from the resolve cache.
	a = decodeResolve(t, e.resolve("blog.example", nil))
	if a.Source != indexapi.SourceCache || a.Target != idA {
		t.Fatalf("cached answer %+v", a)
	}
	// no-cache bypasses it.
	a = decodeResolve(t, e.resolve("blog.example", map[string]string{"Cache-Control": "no-cache"}))
	if a.Source != indexapi.SourceLocal {
		t.Fatalf("no-cache answer %+v", a)
	}
	// name@version has name_version too.
	a = decodeResolve(t, e.resolve("blog.example@1", nil))
	if a.Target != idA || a.NameVersion == nil || *a.NameVersion != 1 {
		t.Fatalf("versioned answer %+v", a)
	}
	if n, p := f.calls(); n != 0 || p != 0 {
		t.Fatalf("peers asked %d/%d", n, p)
	}
}

func TestResolveB3KeyAndKind(t *testing.T) {
	e, _ := newResolveEnv(t)
	expect(t, e.announce(batch(rec(idA, "s1", `,"type":"text/plain"`), rec(idB, "s2", ""))), 200, "")
	a := decodeResolve(t, e.resolve(idA, nil))
	if a.Target != idA || a.Kind != "blob" || a.NameVersion != nil || a.Source != indexapi.SourceLocal {
		t.Fatalf("answer %+v", a)
	}
	r := e.resolve(idB, nil)
	if a := decodeResolve(t, r); a.Kind != "unknown" || strings.Contains(string(r.body), "name_version") {
		t.Fatalf("answer %s", r.body)
	}
	if k := kindOf([]indexapi.ProviderInfo{{Type: "x/y"}, {Type: manifestType}}); k != "manifest" {
		t.Fatalf("kind %q", k)
	}
	if k := kindOf(nil); k != "unknown" {
		t.Fatalf("kind %q", k)
	}
}

func TestResolveStatuses(t *testing.T) {
	e, f := newResolveEnv(t)
	// b3 with no providers anywhere → 404.
	expect(t, e.resolve(idC, nil), 404, "not_found")
	// name absent everywhere → 404.
	expect(t, e.resolve("nope.example", nil), 404, "not_found")
	// deleted locally → 404 without asking peers.
	expect(t, e.put("gone.example", idA, nil), 200, "")
	expect(t, e.do(req{method: "DELETE", path: "/names/gone.example", token: e.writer}), 200, "")
	n0, _ := f.calls()
	expect(t, e.resolve("gone.example", nil), 404, "not_found")
	if n, _ := f.calls(); n != n0 {
		t.Fatal("peers asked for a local tombstone")
	}
	// found name without providers → 200 providers [].
	expect(t, e.put("empty.example", idB, nil), 200, "")
	r := e.resolve("empty.example", nil)
	expect(t, r, 200, "")
	if !strings.Contains(string(r.body), `"providers":[]`) || decodeResolve(t, r).Kind != "unknown" {
		t.Fatalf("body %s", r.body)
	}
	if cc := r.hdr.Get("Cache-Control"); cc != ccProvidersEmpty {
		t.Fatalf("Cache-Control %q", cc)
	}
	// The cached copy is sent as stored: same answer, source cache, same
	// Cache-Control.
	r2 := e.resolve("empty.example", nil)
	want := strings.Replace(string(r.body), `"source":"local"`, `"source":"cache"`, 1)
	if string(r2.body) != want || r2.hdr.Get("Cache-Control") != ccProvidersEmpty ||
		r2.hdr.Get("Content-Type") != "application/json" {
		t.Fatalf("cached answer %q %v, want %q", r2.body, r2.hdr, want)
	}
	// malformed keys → 400.
	for _, k := range []string{"b3:xyz", "Blog.example", "blog.example@0", "blog.example@x"} {
		expect(t, e.resolve(k, nil), 400, "bad_request")
	}
}

func TestResolveUnavailable(t *testing.T) {
	e, f := newResolveEnv(t)
	f.err = &hedge.UnavailableError{}
	r := e.resolve(idC, nil)
	expect(t, r, 503, "upstream_unavailable")
	if r.hdr.Get("Retry-After") != "1" {
		t.Fatalf("Retry-After %q", r.hdr.Get("Retry-After"))
	}
	expect(t, e.resolve("far.example", nil), 503, "upstream_unavailable")
	// Errors are not cached: peers are asked again.
	f.mu.Lock()
	f.err = nil
	f.providers[idC] = []indexapi.ProviderInfo{{Node: "p1", Addr: "http://p1", Type: "text/plain"}}
	f.mu.Unlock()
	expect(t, e.resolve(idC, nil), 200, "")
}

// TestResolveTimeout runs on synctest's fake clock: a blocked peer lookup
// ends exactly when the default 1200 ms budget is spent.
func TestResolveTimeout(t *testing.T) {
	synctest.Test(t, testResolveTimeout)
}

func testResolveTimeout(t *testing.T) {
	e, f := newResolveEnv(t)
	f.block = true
	start := time.Now()
	expect(t, e.resolve(idC, nil), 504, "timeout")
	if d := time.Since(start); d != DefaultResolveBudget {
		t.Fatalf("504 after %v, want exactly the %v budget", d, DefaultResolveBudget)
	}
	expect(t, e.resolve("far.example", nil), 504, "timeout")
	// A name found locally whose provider lookup ran out of budget: partial.
	expect(t, e.put("here.example", idC, nil), 200, "")
	r := e.resolve("here.example", nil)
	expect(t, r, 200, "")
	if a := decodeResolve(t, r); !a.Partial || len(a.Providers) != 0 || r.hdr.Get("Cache-Control") != ccNoCache {
		t.Fatalf("answer %s", r.body)
	}
	// Partial answers are not cached.
	f.mu.Lock()
	f.block = false
	f.providers[idC] = []indexapi.ProviderInfo{{Node: "p1", Addr: "http://p1"}}
	f.mu.Unlock()
	if a := decodeResolve(t, e.resolve("here.example", nil)); a.Partial || len(a.Providers) != 1 || a.Source != indexapi.SourcePeer {
		t.Fatalf("answer %+v", a)
	}
}

func TestResolveFromPeers(t *testing.T) {
	e, f := newResolveEnv(t)
	f.names["far.example"] = indexapi.NameRecord{Name: "far.example", B3: idC, Version: 4}
	f.providers[idC] = []indexapi.ProviderInfo{{Node: "p1", Addr: "http://p1", Type: manifestType}}
	a := decodeResolve(t, e.resolve("far.example", nil))
	if a.Source != indexapi.SourcePeer || a.Target != idC || *a.NameVersion != 4 || a.Kind != "manifest" {
		t.Fatalf("answer %+v", a)
	}
	if a := decodeResolve(t, e.resolve("far.example", nil)); a.Source != indexapi.SourceCache {
		t.Fatalf("answer %+v", a)
	}
	n, p := f.calls()
	// no-cache asks the peers again.
	if a := decodeResolve(t, e.resolve("far.example", map[string]string{"Cache-Control": "no-cache"})); a.Source != indexapi.SourcePeer {
		t.Fatalf("answer %+v", a)
	}
	if n2, p2 := f.calls(); n2 != n+1 || p2 != p+1 {
		t.Fatalf("calls %d/%d after %d/%d", n2, p2, n, p)
	}
	// Negative caching: a peer miss is remembered for neg_cache_ttl.
	expect(t, e.resolve("none.example", nil), 404, "not_found")
	n, _ = f.calls()
	expect(t, e.resolve("none.example", nil), 404, "not_found")
	if n2, _ := f.calls(); n2 != n {
		t.Fatal("negative answer not cached")
	}
	e.clk.Advance(3 * time.Second)
	expect(t, e.resolve("none.example", nil), 404, "not_found")
	if n2, _ := f.calls(); n2 != n+1 {
		t.Fatal("negative answer outlived neg_cache_ttl")
	}
	// Positive entries expire after cache_ttl.
	e.clk.Advance(11 * time.Second)
	if a := decodeResolve(t, e.resolve("far.example", nil)); a.Source != indexapi.SourcePeer {
		t.Fatalf("answer %+v", a)
	}
}

func TestResolveLocalOnly(t *testing.T) {
	e, f := newResolveEnv(t)
	f.names["far.example"] = indexapi.NameRecord{Name: "far.example", B3: idC, Version: 4}
	f.providers[idC] = []indexapi.ProviderInfo{{Node: "p1", Addr: "http://p1"}}
	expect(t, e.resolve("far.example?local=1", nil), 404, "not_found")
	expect(t, e.resolve(idC+"?local=1", nil), 404, "not_found")
	if n, p := f.calls(); n != 0 || p != 0 {
		t.Fatalf("peers asked %d/%d", n, p)
	}
	// local=1 neither reads nor fills the cache.
	expect(t, e.resolve("far.example", nil), 200, "")
	expect(t, e.resolve("far.example?local=1", nil), 404, "not_found")
	expect(t, e.put("mine.example", idA, nil), 200, "")
	if a := decodeResolve(t, e.resolve("mine.example?local=1", nil)); a.Source != indexapi.SourceLocal {
		t.Fatalf("answer %+v", a)
	}
	if e.h.settings().Cache.Len() != 3 { // r:far.example, n:far.example, p:<idC>
		t.Fatalf("cache holds %d entries", e.h.settings().Cache.Len())
	}
}

func TestResolveNoPeersConfigured(t *testing.T) {
	e := newEnv(t) // no cache, no peers
	expect(t, e.resolve(idC, nil), 404, "not_found")
	expect(t, e.put("blog.example", idA, nil), 200, "")
	if a := decodeResolve(t, e.resolve("blog.example", nil)); a.Source != indexapi.SourceLocal || len(a.Providers) != 0 {
		t.Fatalf("answer %+v", a)
	}
}

func TestResolveInvalidation(t *testing.T) {
	e, _ := newResolveEnv(t)
	expect(t, e.put("blog.example", idA, nil), 200, "")
	expect(t, e.announce(batch(rec(idA, "s1", ""))), 200, "")
	if a := decodeResolve(t, e.resolve("blog.example", nil)); a.Target != idA {
		t.Fatalf("answer %+v", a)
	}
	_ = decodeResolve(t, e.resolve("blog.example@1", nil))
	if a := decodeResolve(t, e.resolve(idA, nil)); a.Source != indexapi.SourceLocal || len(a.Providers) != 1 {
		t.Fatalf("answer %+v", a)
	}
	if a := decodeResolve(t, e.resolve(idA, nil)); a.Source != indexapi.SourceCache {
		t.Fatalf("answer %+v", a)
	}

	// SetName (through LocalClient: the shared do* path) drops r:<name>
	// and r:<name>@<v>.
	lc := NewLocalClient(e.h)
	b, _ := store.ParseID(idB)
	if _, err := lc.SetName(context.Background(), "blog.example", b, indexapi.Cond{}); err != nil {
		t.Fatal(err)
	}
	if a := decodeResolve(t, e.resolve("blog.example", nil)); a.Source != indexapi.SourceLocal || a.Target != idB || *a.NameVersion != 2 {
		t.Fatalf("after SetName %+v", a)
	}
	if a := decodeResolve(t, e.resolve("blog.example@1", nil)); a.Source != indexapi.SourceLocal {
		t.Fatalf("after SetName @1 %+v", a)
	}

	// Announce drops r:<b3>.
	expect(t, e.announce(batch(rec(idA, "s2", `,"type":"`+manifestType+`"`))), 200, "")
	if a := decodeResolve(t, e.resolve(idA, nil)); a.Source != indexapi.SourceLocal || len(a.Providers) != 2 || a.Kind != "manifest" {
		t.Fatalf("after Announce %+v", a)
	}

	// DeleteName drops r:<name>.
	_ = decodeResolve(t, e.resolve("blog.example", nil))
	if _, err := lc.DeleteName(context.Background(), "blog.example", indexapi.Cond{}); err != nil {
		t.Fatal(err)
	}
	expect(t, e.resolve("blog.example", nil), 404, "not_found")
}

func TestPeerErrorMapping(t *testing.T) {
	if nf, _ := peerError(hedge.ErrNotFound); !nf {
		t.Fatal("not found")
	}
	if _, err := peerError(context.DeadlineExceeded); err == nil || !strings.Contains(err.Error(), "budget") {
		t.Fatalf("timeout %v", err)
	}
	if _, err := peerError(errors.New("x")); err == nil || !strings.Contains(err.Error(), "no peer") {
		t.Fatalf("other %v", err)
	}
}
