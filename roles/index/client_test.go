package index

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/httpx/client"
	"github.com/ronhq/ron/roles/index/cache"
	"github.com/ronhq/ron/roles/index/indexapi"
	"github.com/ronhq/ron/roles/index/indexdb"
	"github.com/ronhq/ron/store"
)

// clientCase is one row of the table run against LocalClient and
// HTTPClient alike.
type clientCase struct {
	name string
	run  func(t *testing.T, c indexapi.Client, e *env)
}

func mustID(t *testing.T, s string) store.ID {
	t.Helper()
	id, err := store.ParseID(s)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// wantErr checks err's envelope: status, code and details (nil = none).
func wantErr(t *testing.T, err error, status int, code string, details map[string]any) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want %d %s", status, code)
	}
	var he *httpx.Error
	if !asHTTPX(err, &he) {
		t.Fatalf("error %T %v is not an *httpx.Error", err, err)
	}
	if he.Status != status || he.Code != code || !reflect.DeepEqual(he.Details, details) {
		t.Fatalf("got %d %s %#v (%v), want %d %s %#v", he.Status, he.Code, he.Details, err, status, code, details)
	}
}

// asHTTPX requires err itself (not only its chain) to yield an *httpx.Error.
func asHTTPX(err error, he **httpx.Error) bool {
	e := httpx.AsError(err)
	*he = e
	return e.Code != httpx.CodeInternal || e.Status != http.StatusInternalServerError
}

// result holds a call's value and error until get checks it.
type result[T any] struct {
	v   T
	err error
}

func check[T any](v T, err error) result[T] { return result[T]{v, err} }

func (r result[T]) get(t *testing.T) T {
	t.Helper()
	if r.err != nil {
		t.Fatal(r.err)
	}
	return r.v
}

func ann(id store.ID, node string, ttl time.Duration) indexapi.Announcement {
	return indexapi.Announcement{ID: id, Node: node, Addr: "http://" + node + ":5303", TTL: ttl}
}

var clientCases = []clientCase{
	{"set get cas", func(t *testing.T, c indexapi.Client, _ *env) {
		ctx := context.Background()
		a, b := mustID(t, idA), mustID(t, idB)
		r := check(c.SetName(ctx, "blog.example", a, indexapi.Cond{})).get(t)
		if r.Version != 1 || r.B3 != idA || r.Name != "blog.example" || r.UpdatedAt != "2026-11-22T10:00:00.000Z" {
			t.Fatalf("set: %+v", r)
		}
		if g := check(c.GetName(ctx, "blog.example")).get(t); g != r {
			t.Fatalf("get %+v, want %+v", g, r)
		}
		r = check(c.SetName(ctx, "blog.example", b, indexapi.IfMatch(1))).get(t)
		if r.Version != 2 || r.B3 != idB {
			t.Fatalf("cas: %+v", r)
		}
		_, err := c.SetName(ctx, "blog.example", a, indexapi.IfMatch(1))
		wantErr(t, err, 412, httpx.CodePreconditionFailed, map[string]any{"current_version": float64(2)})
		_, err = c.SetName(ctx, "other.example", a, indexapi.IfLive())
		wantErr(t, err, 412, httpx.CodePreconditionFailed, map[string]any{"current_version": nil})
		_, err = c.SetName(ctx, "blog.example", a, indexapi.IfMatch(0))
		wantErr(t, err, 400, httpx.CodeBadRequest, nil)
		r = check(c.SetName(ctx, "blog.example", b, indexapi.IfLive())).get(t)
		if r.Version != 3 {
			t.Fatalf("if-live: %+v", r)
		}
	}},
	{"create only", func(t *testing.T, c indexapi.Client, _ *env) {
		ctx := context.Background()
		r := check(c.SetName(ctx, "new.example", mustID(t, idA), indexapi.IfAbsent())).get(t)
		if r.Version != 1 {
			t.Fatalf("create: %+v", r)
		}
		_, err := c.SetName(ctx, "new.example", mustID(t, idB), indexapi.IfAbsent())
		wantErr(t, err, 412, httpx.CodePreconditionFailed, map[string]any{"current_version": float64(1)})
	}},
	{"delete and 404", func(t *testing.T, c indexapi.Client, e *env) {
		ctx := context.Background()
		check(c.SetName(ctx, "gone.example", mustID(t, idA), indexapi.Cond{})).get(t)
		_, err := c.DeleteName(ctx, "gone.example", indexapi.IfMatch(7))
		wantErr(t, err, 412, httpx.CodePreconditionFailed, map[string]any{"current_version": float64(1)})
		_, err = c.DeleteName(ctx, "gone.example", indexapi.IfAbsent())
		wantErr(t, err, 400, httpx.CodeBadRequest, nil)
		e.clk.Advance(1500 * time.Millisecond)
		d := check(c.DeleteName(ctx, "gone.example", indexapi.IfMatch(1))).get(t)
		if d != (indexapi.NameDeletion{Name: "gone.example", Version: 2, Deleted: true, UpdatedAt: "2026-11-22T10:00:01.500Z"}) {
			t.Fatalf("delete: %+v", d)
		}
		_, err = c.GetName(ctx, "gone.example")
		wantErr(t, err, 404, httpx.CodeNotFound, map[string]any{"reason": "deleted", "version": float64(2)})
		_, err = c.DeleteName(ctx, "gone.example", indexapi.Cond{})
		wantErr(t, err, 404, httpx.CodeNotFound, map[string]any{"reason": "deleted"})
		_, err = c.DeleteName(ctx, "never.example", indexapi.Cond{})
		wantErr(t, err, 404, httpx.CodeNotFound, nil)
		_, err = c.GetName(ctx, "never.example")
		wantErr(t, err, 404, httpx.CodeNotFound, nil)
		r := check(c.SetName(ctx, "gone.example", mustID(t, idB), indexapi.IfAbsent())).get(t)
		if r.Version != 3 {
			t.Fatalf("re-create continues numbering: %+v", r)
		}
	}},
	{"name at version", func(t *testing.T, c indexapi.Client, _ *env) {
		ctx := context.Background()
		check(c.SetName(ctx, "v.example", mustID(t, idA), indexapi.Cond{})).get(t)
		check(c.SetName(ctx, "v.example", mustID(t, idB), indexapi.Cond{})).get(t)
		check(c.DeleteName(ctx, "v.example", indexapi.Cond{})).get(t)
		r := check(c.GetNameVersion(ctx, "v.example", 1)).get(t)
		if r.Version != 1 || r.B3 != idA {
			t.Fatalf("@1: %+v", r)
		}
		_, err := c.GetNameVersion(ctx, "v.example", 3)
		wantErr(t, err, 404, httpx.CodeNotFound, map[string]any{"reason": "deleted"})
		_, err = c.GetNameVersion(ctx, "v.example", 4)
		wantErr(t, err, 404, httpx.CodeNotFound, nil)
		_, err = c.GetNameVersion(ctx, "v.example", 0)
		wantErr(t, err, 400, httpx.CodeBadRequest, nil)
		for range indexdb.HistoryLen {
			check(c.SetName(ctx, "v.example", mustID(t, idA), indexapi.Cond{})).get(t)
		}
		_, err = c.GetNameVersion(ctx, "v.example", 1)
		wantErr(t, err, 404, httpx.CodeNotFound, map[string]any{"reason": "pruned"})
	}},
	{"history", func(t *testing.T, c indexapi.Client, _ *env) {
		ctx := context.Background()
		check(c.SetName(ctx, "h.example", mustID(t, idA), indexapi.Cond{})).get(t)
		check(c.SetName(ctx, "h.example", mustID(t, idB), indexapi.Cond{})).get(t)
		check(c.DeleteName(ctx, "h.example", indexapi.Cond{})).get(t)
		h := check(c.History(ctx, "h.example")).get(t)
		if h.Name != "h.example" || len(h.Versions) != 3 {
			t.Fatalf("history: %+v", h)
		}
		v3, v2, v1 := h.Versions[0], h.Versions[1], h.Versions[2]
		if v3.Version != 3 || !v3.Deleted || v3.B3 != nil || v2.Version != 2 || v2.B3 == nil || *v2.B3 != idB ||
			v1.Version != 1 || *v1.B3 != idA {
			t.Fatalf("history: %+v", h)
		}
		_, err := c.History(ctx, "none.example")
		wantErr(t, err, 404, httpx.CodeNotFound, nil)
	}},
	{"bad names", func(t *testing.T, c indexapi.Client, _ *env) {
		ctx := context.Background()
		for _, n := range []string{"Blog.example", "a_b", "a b", "a/b", "x@1", "", "-a", "a..b", "é.example"} {
			_, err := c.GetName(ctx, n)
			wantErr(t, err, 400, httpx.CodeBadRequest, nil)
			_, err = c.GetNameVersion(ctx, n, 1)
			wantErr(t, err, 400, httpx.CodeBadRequest, nil)
			_, err = c.SetName(ctx, n, mustID(t, idA), indexapi.Cond{})
			wantErr(t, err, 400, httpx.CodeBadRequest, nil)
			_, err = c.DeleteName(ctx, n, indexapi.Cond{})
			wantErr(t, err, 400, httpx.CodeBadRequest, nil)
			_, err = c.History(ctx, n)
			wantErr(t, err, 400, httpx.CodeBadRequest, nil)
		}
	}},
	{"announce and providers", func(t *testing.T, c indexapi.Client, e *env) {
		ctx := context.Background()
		id := mustID(t, idA)
		_, err := c.Providers(ctx, id, "", 0)
		wantErr(t, err, 404, httpx.CodeNotFound, nil)
		n1 := ann(id, "n1", time.Minute)
		n2 := ann(id, "n2", 10*time.Minute)
		n2.Region, n2.Type = "eu-west", "application/json"
		acc, wd := must2(t)(c.Announce(ctx, []indexapi.Announcement{n1, n2}))
		if acc != 2 || wd != 0 {
			t.Fatalf("announce: %d %d", acc, wd)
		}
		e.clk.Advance(2 * time.Second)
		pl := check(c.Providers(ctx, id, "", 0)).get(t)
		want := indexapi.ProviderList{B3: idA, Providers: []indexapi.ProviderInfo{
			{Node: "n1", Addr: "http://n1:5303", LastSeenS: 2, ExpiresInS: 58},
			{Node: "n2", Addr: "http://n2:5303", Region: "eu-west", Type: "application/json", LastSeenS: 2, ExpiresInS: 598},
		}}
		if !reflect.DeepEqual(pl, want) {
			t.Fatalf("providers %+v, want %+v", pl, want)
		}
		pl = check(c.Providers(ctx, id, "eu-west", 1)).get(t)
		if len(pl.Providers) != 1 || pl.Providers[0].Node != "n2" {
			t.Fatalf("region first, limit 1: %+v", pl)
		}
		for _, lim := range []int{-1, 65} {
			_, err = c.Providers(ctx, id, "", lim)
			wantErr(t, err, 400, httpx.CodeBadRequest, nil)
		}
		acc, wd = must2(t)(c.Announce(ctx, []indexapi.Announcement{ann(id, "n1", 0)}))
		if acc != 0 || wd != 1 {
			t.Fatalf("withdraw: %d %d", acc, wd)
		}
		pl = check(c.Providers(ctx, id, "", 0)).get(t)
		if len(pl.Providers) != 1 || pl.Providers[0].Node != "n2" {
			t.Fatalf("after withdraw: %+v", pl)
		}
		e.clk.Advance(10 * time.Minute)
		_, err = c.Providers(ctx, id, "", 0)
		wantErr(t, err, 404, httpx.CodeNotFound, nil)
	}},
	{"bad records", func(t *testing.T, c indexapi.Client, _ *env) {
		ctx := context.Background()
		id := mustID(t, idA)
		good := ann(id, "n1", time.Minute)
		bad := func(mut func(*indexapi.Announcement)) []indexapi.Announcement {
			b := good
			mut(&b)
			return []indexapi.Announcement{good, good, b}
		}
		for _, tc := range []struct {
			recs  []indexapi.Announcement
			field string
		}{
			{bad(func(a *indexapi.Announcement) { a.Node = "bad node" }), "node"},
			{bad(func(a *indexapi.Announcement) { a.Addr = "ftp://x" }), "addr"},
			{bad(func(a *indexapi.Announcement) { a.Addr = "http://u@x" }), "addr"},
			{bad(func(a *indexapi.Announcement) { a.TTL = -time.Second }), "ttl_s"},
			{bad(func(a *indexapi.Announcement) { a.TTL = 86401 * time.Second }), "ttl_s"},
			{bad(func(a *indexapi.Announcement) { a.TTL = 1500 * time.Millisecond }), "ttl_s"},
			{bad(func(a *indexapi.Announcement) { a.Region = "eu west" }), "region"},
		} {
			_, _, err := c.Announce(ctx, tc.recs)
			wantErr(t, err, 400, httpx.CodeBadRequest, map[string]any{"index": float64(2), "field": tc.field})
		}
		// All or nothing: nothing of the failed batches was applied.
		_, err := c.Providers(ctx, id, "", 0)
		wantErr(t, err, 404, httpx.CodeNotFound, nil)
	}},
	{"batch size", func(t *testing.T, c indexapi.Client, _ *env) {
		ctx := context.Background()
		id := mustID(t, idA)
		recs := make([]indexapi.Announcement, indexdb.MaxBatch+1)
		for i := range recs {
			recs[i] = ann(id, fmt.Sprintf("node-%04d", i), time.Minute)
		}
		_, _, err := c.Announce(ctx, recs)
		wantErr(t, err, 400, httpx.CodeBadRequest, map[string]any{"field": "records"})
		_, _, err = c.Announce(ctx, nil)
		wantErr(t, err, 400, httpx.CodeBadRequest, map[string]any{"field": "records"})
		acc, _ := must2(t)(c.Announce(ctx, recs[:indexdb.MaxBatch]))
		if acc != indexdb.MaxBatch {
			t.Fatalf("accepted %d", acc)
		}
		pl := check(c.Providers(ctx, id, "", 64)).get(t)
		if len(pl.Providers) != indexdb.MaxProvidersPerObject {
			t.Fatalf("kept %d", len(pl.Providers))
		}
	}},
}

// idNone is an object id no provider holds.
const idNone = "b3:00000000000000000000000000000000000000000000000000000000000000ff"

// resolveCases are the table's GET /resolve/{key} rows.
var resolveCases = []clientCase{
	{"resolve name", func(t *testing.T, c indexapi.Client, e *env) {
		ctx := context.Background()
		check(c.SetName(ctx, "site.example", mustID(t, idA), indexapi.Cond{})).get(t)
		m := ann(mustID(t, idA), "n1", time.Minute)
		m.Type = manifestType
		must2(t)(c.Announce(ctx, []indexapi.Announcement{m, ann(mustID(t, idA), "n2", time.Minute)}))
		e.clk.Advance(time.Second)
		a := check(c.Resolve(ctx, "site.example", false)).get(t)
		v := uint64(1)
		want := indexapi.ResolveAnswer{Key: "site.example", Target: idA, Kind: "manifest", NameVersion: &v, Source: indexapi.SourceLocal,
			Providers: []indexapi.ProviderInfo{
				{Node: "n1", Addr: "http://n1:5303", Type: manifestType, LastSeenS: 1, ExpiresInS: 59},
				{Node: "n2", Addr: "http://n2:5303", LastSeenS: 1, ExpiresInS: 59},
			}}
		if !reflect.DeepEqual(a, want) {
			t.Fatalf("resolve %+v, want %+v", a, want)
		}
	}},
	{"resolve b3", func(t *testing.T, c indexapi.Client, _ *env) {
		ctx := context.Background()
		b := ann(mustID(t, idB), "n1", time.Minute)
		b.Type = "text/plain"
		must2(t)(c.Announce(ctx, []indexapi.Announcement{b}))
		a := check(c.Resolve(ctx, idB, false)).get(t)
		if a.Key != idB || a.Target != idB || a.Kind != "blob" || a.NameVersion != nil || len(a.Providers) != 1 ||
			a.Source != indexapi.SourceLocal {
			t.Fatalf("resolve b3: %+v", a)
		}
		_, err := c.Resolve(ctx, idNone, false)
		wantErr(t, err, 404, httpx.CodeNotFound, nil)
	}},
	{"resolve name at version", func(t *testing.T, c indexapi.Client, _ *env) {
		ctx := context.Background()
		check(c.SetName(ctx, "v.example", mustID(t, idA), indexapi.Cond{})).get(t)
		check(c.SetName(ctx, "v.example", mustID(t, idB), indexapi.Cond{})).get(t)
		a := check(c.Resolve(ctx, "v.example@1", false)).get(t)
		v := uint64(1)
		want := indexapi.ResolveAnswer{Key: "v.example@1", Target: idA, Kind: "unknown", NameVersion: &v,
			Providers: []indexapi.ProviderInfo{}, Source: indexapi.SourceLocal}
		if !reflect.DeepEqual(a, want) {
			t.Fatalf("resolve @1 %+v, want %+v (a found name without providers is 200)", a, want)
		}
		_, err := c.Resolve(ctx, "v.example@3", false)
		wantErr(t, err, 404, httpx.CodeNotFound, nil)
	}},
	{"resolve not found", func(t *testing.T, c indexapi.Client, _ *env) {
		_, err := c.Resolve(context.Background(), "never.example", false)
		wantErr(t, err, 404, httpx.CodeNotFound, nil)
	}},
	{"resolve malformed key", func(t *testing.T, c indexapi.Client, _ *env) {
		for _, k := range []string{"", "Blog.example", "a_b", "a/b", "a b", "-a", "b3:", "b3:XYZ", "B3:" + idA[3:],
			strings.ToUpper(idA), idA + "0", "x@0", "x@01", "x@", "x@-1", "@1", "a..b@1"} {
			_, err := c.Resolve(context.Background(), k, false)
			wantErr(t, err, 400, httpx.CodeBadRequest, nil)
		}
	}},
	{"resolve deleted name", func(t *testing.T, c indexapi.Client, _ *env) {
		ctx := context.Background()
		check(c.SetName(ctx, "gone.example", mustID(t, idA), indexapi.Cond{})).get(t)
		check(c.DeleteName(ctx, "gone.example", indexapi.Cond{})).get(t)
		_, err := c.Resolve(ctx, "gone.example", false)
		wantErr(t, err, 404, httpx.CodeNotFound, map[string]any{"reason": "deleted", "version": float64(2)})
		_, err = c.Resolve(ctx, "gone.example@2", false)
		wantErr(t, err, 404, httpx.CodeNotFound, map[string]any{"reason": "deleted"})
		a := check(c.Resolve(ctx, "gone.example@1", false)).get(t)
		if a.Target != idA {
			t.Fatalf("an older live version still resolves: %+v", a)
		}
	}},
	{"resolve no-cache", func(t *testing.T, c indexapi.Client, e *env) {
		ctx := context.Background()
		rc, err := cache.New[[]byte](cache.Config{Entries: 100, Now: e.clk.Now})
		if err != nil {
			t.Fatal(err)
		}
		e.h.set(func(s *Settings) { s.Cache = rc })
		must2(t)(c.Announce(ctx, []indexapi.Announcement{ann(mustID(t, idA), "n1", time.Minute)}))
		for i, tc := range []struct {
			noCache bool
			source  string
		}{{false, indexapi.SourceLocal}, {false, indexapi.SourceCache}, {true, indexapi.SourceLocal}, {false, indexapi.SourceCache}} {
			if a := check(c.Resolve(ctx, idA, tc.noCache)).get(t); a.Source != tc.source {
				t.Fatalf("call %d (no-cache %t): source %q, want %q", i, tc.noCache, a.Source, tc.source)
			}
		}
	}},
}

func must2(t *testing.T) func(a, b int, err error) (int, int) {
	return func(a, b int, err error) (int, int) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return a, b
	}
}

// TestClientTable runs one table against LocalClient and HTTPClient (over
// the real middleware chain and a loopback listener).
func TestClientTable(t *testing.T) {
	impls := []struct {
		name string
		make func(t *testing.T, e *env) indexapi.Client
	}{
		{"local", func(_ *testing.T, e *env) indexapi.Client { return NewLocalClient(e.h) }},
		{"http", func(t *testing.T, e *env) indexapi.Client {
			ts := httptest.NewServer(e.srv.Echo())
			hc := indexapi.NewHTTPClient(ts.URL, func(context.Context) (string, error) { return e.writer, nil },
				client.Options{Retries: -1})
			t.Cleanup(func() { hc.Close(); ts.Close() })
			return hc
		}},
	}
	for _, tc := range append(clientCases, resolveCases...) {
		for _, impl := range impls {
			t.Run(tc.name+"/"+impl.name, func(t *testing.T) {
				e := newEnv(t)
				tc.run(t, impl.make(t, e), e)
			})
		}
	}
}

// TestHTTPClientNeedsToken: the HTTP side checks the write scope the local
// side trusts.
func TestHTTPClientNeedsToken(t *testing.T) {
	e := newEnv(t)
	ts := httptest.NewServer(e.srv.Echo())
	defer ts.Close()
	hc := indexapi.NewHTTPClient(ts.URL, nil, client.Options{})
	defer hc.Close()
	_, err := hc.SetName(context.Background(), "a.example", mustID(t, idA), indexapi.Cond{})
	wantErr(t, err, 401, httpx.CodeUnauthorized, nil)
}

// TestLocalClientContext maps a cancelled context like the HTTP client.
func TestLocalClientContext(t *testing.T) {
	e := newEnv(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := NewLocalClient(e.h).SetName(ctx, "a.example", mustID(t, idA), indexapi.Cond{})
	wantErr(t, err, 503, httpx.CodeUpstreamUnavailable, nil)
}
