package indexsink

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/httpx/client"
	"github.com/ronhq/ron/roles/index"
	"github.com/ronhq/ron/roles/index/indexapi"
	"github.com/ronhq/ron/roles/storage/announcing"
	"github.com/ronhq/ron/runtime"
)

func TestNewRejects(t *testing.T) {
	addrFn := func() string { return addr }
	for _, tc := range []struct {
		name string
		opt  Options
		want string
	}{
		{"no target", Options{Node: node, Addr: addrFn}, "no local index"},
		{"empty node", Options{URLs: []string{"http://i:5304"}, Addr: addrFn}, "node id"},
		{"bad node", Options{URLs: []string{"http://i:5304"}, Node: "a b", Addr: addrFn}, "node id"},
		{"long node", Options{URLs: []string{"http://i:5304"}, Node: strings.Repeat("n", 65), Addr: addrFn}, "node id"},
		{"bad region", Options{URLs: []string{"http://i:5304"}, Node: node, Region: func() string { return "eu/1" }, Addr: addrFn}, "region"},
		{"nil addr", Options{URLs: []string{"http://i:5304"}, Node: node}, "Addr"},
		{"relative url", Options{URLs: []string{"i:5304/x"}, Node: node, Addr: addrFn}, "scheme"},
		{"ftp url", Options{URLs: []string{"ftp://i"}, Node: node, Addr: addrFn}, "scheme"},
		{"userinfo", Options{URLs: []string{"http://u:p@i"}, Node: node, Addr: addrFn}, "userinfo"},
		{"query", Options{URLs: []string{"http://i/?a=1"}, Node: node, Addr: addrFn}, "query"},
		{"fragment", Options{URLs: []string{"http://i/#f"}, Node: node, Addr: addrFn}, "fragment"},
		{"no host", Options{URLs: []string{"http:///x"}, Node: node, Addr: addrFn}, "host"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := New(tc.opt)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("New = %v, %v; want error with %q", s, err, tc.want)
			}
		})
	}
	if _, err := New(Options{Node: node, Addr: addrFn}); !errors.Is(err, ErrNoTarget) {
		t.Fatalf("no target: %v", err)
	}
}

// TestLocalIndexGetsRecords: records reach a real in-process index with
// node, addr (evaluated per batch), region, type and whole-second TTLs; TTL
// 0 withdraws.
func TestLocalIndexGetsRecords(t *testing.T) {
	ri := newRealIndex(t)
	var addrCalls atomic.Int32
	s := newSink(t, Options{Local: ri.local, URLs: []string{"http://ignored:1"}, Region: func() string { return "eu-1" },
		Addr: func() string { addrCalls.Add(1); return addr }})
	if got := s.Target(); got != "local index" {
		t.Fatalf("Target = %q", got)
	}
	batch := recs(3, 1500*time.Millisecond, "image/png")
	batch[2].TTL = 100000 * time.Second
	if err := announce(s, batch); err != nil {
		t.Fatal(err)
	}
	if addrCalls.Load() != 1 {
		t.Fatalf("Addr called %d times for one batch", addrCalls.Load())
	}
	for i, want := range []int64{2, 2, 86400} {
		p := ri.providers(t, batch[i].ID)
		if len(p) != 1 || p[0].Node != node || p[0].Addr != addr || p[0].Region != "eu-1" ||
			p[0].Type != "image/png" || p[0].ExpiresInS != want {
			t.Fatalf("record %d: %+v", i, p)
		}
	}
	if err := announce(s, []announcing.Record{{ID: batch[0].ID}}); err != nil {
		t.Fatal(err)
	}
	if _, err := ri.local.Providers(context.Background(), batch[0].ID, "", 0); httpx.AsError(err).Status != 404 {
		t.Fatalf("withdrawn record still listed: %v", err)
	}
	if err := announce(s, nil); err != nil || addrCalls.Load() != 2 {
		t.Fatalf("empty batch: %v (addr calls %d)", err, addrCalls.Load())
	}
}

// TestHTTPIndexGetsRecords: the same over HTTP to a real index, with a
// minted index:write token; a token from another key is refused with 401,
// which the announcer does not retry.
func TestHTTPIndexGetsRecords(t *testing.T) {
	ri := newRealIndex(t)
	s := newSink(t, Options{URLs: []string{ri.url + "/"}, Token: MintToken(ri.keys)})
	if got := s.Target(); got != "index_urls (1)" {
		t.Fatalf("Target = %q", got)
	}
	batch := recs(2, 600*time.Second, "")
	if err := announce(s, batch); err != nil {
		t.Fatal(err)
	}
	p := ri.providers(t, batch[1].ID)
	if len(p) != 1 || p[0].Node != node || p[0].Addr != addr || p[0].ExpiresInS != 600 || p[0].Type != "" {
		t.Fatalf("providers %+v", p)
	}
	other := newRealIndex(t)
	wrong := newSink(t, Options{URLs: []string{ri.url}, Token: MintToken(other.keys)})
	err := announce(wrong, batch)
	if he := httpx.AsError(err); he.Status != http.StatusUnauthorized {
		t.Fatalf("foreign token: %v", err)
	}
}

func TestTokenSentAndStaticOverride(t *testing.T) {
	f := newFakeIndex(t, http.StatusOK)
	s := newSink(t, Options{URLs: []string{f.url}, Token: staticToken("minted")})
	if err := announce(s, recs(1, time.Minute, "")); err != nil {
		t.Fatal(err)
	}
	if got := f.lastAuth(); got != "Bearer minted" {
		t.Fatalf("Authorization %q", got)
	}
	if err := s.Retarget([]string{f.url}, "configured"); err != nil {
		t.Fatal(err)
	}
	if err := announce(s, recs(1, time.Minute, "")); err != nil || f.lastAuth() != "Bearer configured" {
		t.Fatalf("after Retarget: %v, %q", err, f.lastAuth())
	}
	if err := s.Retarget([]string{f.url}, ""); err != nil {
		t.Fatal(err)
	}
	if err := announce(s, recs(1, time.Minute, "")); err != nil || f.lastAuth() != "Bearer minted" {
		t.Fatalf("token cleared: %v, %q", err, f.lastAuth())
	}
	b := f.bodies[0].Records[0]
	if b["node"] != node || b["addr"] != addr || b["ttl_s"] != float64(60) || !strings.HasPrefix(b["b3"].(string), "b3:") {
		t.Fatalf("record sent %v", b)
	}
	failing := newSink(t, Options{URLs: []string{f.url}, Token: func(context.Context) (string, error) {
		return "", errors.New("no key")
	}})
	if err := announce(failing, recs(1, time.Minute, "")); err == nil || f.count() != 3 {
		t.Fatalf("token error: %v (hits %d)", err, f.count())
	}
}

// TestFailover: URLs are tried in order starting from the last one that
// worked; the first success wins; a 4xx is not retried by the client.
func TestFailover(t *testing.T) {
	a, b := newFakeIndex(t, http.StatusServiceUnavailable), newFakeIndex(t, http.StatusOK)
	s := newSink(t, Options{URLs: []string{a.url, b.url}})
	if err := announce(s, recs(1, time.Minute, "")); err != nil {
		t.Fatal(err)
	}
	if a.count() != 1 || b.count() != 1 {
		t.Fatalf("hits a=%d b=%d, want 1, 1 (no client retries)", a.count(), b.count())
	}
	if err := announce(s, recs(1, time.Minute, "")); err != nil || a.count() != 1 || b.count() != 2 {
		t.Fatalf("sticky target: %v, hits a=%d b=%d", err, a.count(), b.count())
	}
	a.setStatus(http.StatusOK)
	b.setStatus(http.StatusBadRequest)
	if err := announce(s, recs(1, time.Minute, "")); err != nil || a.count() != 2 || b.count() != 3 {
		t.Fatalf("back to a: %v, hits a=%d b=%d", err, a.count(), b.count())
	}
	a.setStatus(http.StatusBadRequest)
	err := announce(s, recs(1, time.Minute, ""))
	var he *httpx.Error
	if !errors.As(err, &he) || he.Status != http.StatusBadRequest || a.count() != 3 || b.count() != 4 {
		t.Fatalf("all 400: %v, hits a=%d b=%d", err, a.count(), b.count())
	}
}

// TestOpenBreakerSkipped: once both targets' breakers are open (5
// consecutive failures each), a batch fails at once without any request,
// with the breaker's 503.
func TestOpenBreakerSkipped(t *testing.T) {
	a, b := newFakeIndex(t, http.StatusBadGateway), newFakeIndex(t, http.StatusServiceUnavailable)
	s := newSink(t, Options{URLs: []string{a.url, b.url}})
	for range 5 {
		if err := announce(s, recs(1, time.Minute, "")); err == nil {
			t.Fatal("announce succeeded")
		}
	}
	ha, hb := a.count(), b.count()
	err := announce(s, recs(1, time.Minute, ""))
	if !errors.Is(err, client.ErrBreakerOpen) || httpx.AsError(err).Status != http.StatusServiceUnavailable {
		t.Fatalf("err %v", err)
	}
	if a.count() != ha || b.count() != hb {
		t.Fatal("an open breaker let a request through")
	}
}

func TestUnreachableFailsOver(t *testing.T) {
	f := newFakeIndex(t, http.StatusOK)
	s := newSink(t, Options{URLs: []string{"http://127.0.0.1:1", f.url}})
	if err := announce(s, recs(1, time.Minute, "")); err != nil || f.count() != 1 {
		t.Fatalf("err %v, hits %d", err, f.count())
	}
}

func TestRetarget(t *testing.T) {
	a, b := newFakeIndex(t, http.StatusOK), newFakeIndex(t, http.StatusOK)
	s := newSink(t, Options{URLs: []string{a.url}})
	for _, tc := range []struct {
		urls []string
		want string
	}{
		{nil, "no local index"},
		{[]string{}, "no local index"},
		{[]string{"http://x", "mailto:x"}, "scheme"},
		{[]string{"https://u@x"}, "userinfo"},
	} {
		if err := s.CheckRetarget(tc.urls); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("CheckRetarget(%q) = %v", tc.urls, err)
		}
		if err := s.Retarget(tc.urls, "x"); err == nil {
			t.Errorf("Retarget(%q) accepted", tc.urls)
		}
	}
	if s.Target() != "index_urls (1)" {
		t.Fatalf("failed Retarget changed the sink: %s", s.Target())
	}
	if err := announce(s, recs(1, time.Minute, "")); err != nil || a.count() != 1 {
		t.Fatalf("a: %v, a=%d", err, a.count())
	}
	if err := s.Retarget([]string{b.url, a.url}, ""); err != nil || s.Target() != "index_urls (2)" {
		t.Fatalf("Retarget: %v, %s", err, s.Target())
	}
	if err := announce(s, recs(1, time.Minute, "")); err != nil || a.count() != 2 || b.count() != 0 {
		t.Fatalf("kept a as last good target: %v, a=%d b=%d", err, a.count(), b.count())
	}
	if err := s.Retarget([]string{b.url}, ""); err != nil {
		t.Fatal(err)
	}
	if err := announce(s, recs(1, time.Minute, "")); err != nil || a.count() != 2 || b.count() != 1 {
		t.Fatalf("dropped a: %v, a=%d b=%d", err, a.count(), b.count())
	}
	local := newSink(t, Options{Local: index.NewLocalClient(nil)})
	if err := local.CheckRetarget(nil); err != nil {
		t.Fatalf("local sink needs no URL: %v", err)
	}
}

// slowIndex is a local index whose Announce answers err.
type slowIndex struct {
	indexapi.Client
	err error
}

func (s slowIndex) Announce(context.Context, []indexapi.Announcement) (int, int, error) {
	return 0, 0, s.err
}

func TestTimeoutsCounted(t *testing.T) {
	for _, tc := range []struct {
		name  string
		err   error
		count float64
	}{
		{"deadline", context.DeadlineExceeded, 1},
		{"504 envelope", httpx.NewError(http.StatusGatewayTimeout, httpx.CodeTimeout, "timeout"), 1},
		{"other error", errors.New("boom"), 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := runtime.NewMetrics(nil)
			s := newSink(t, Options{Local: slowIndex{err: tc.err}, Metrics: m})
			if err := announce(s, recs(1, time.Minute, "")); !errors.Is(err, tc.err) {
				t.Fatalf("err %v", err)
			}
			if got := m.Values()[runtime.MetricName("io_timeouts_total", "role", "storage", "op", "index_rpc")]; got != tc.count {
				t.Fatalf("index_rpc timeouts %v", got)
			}
		})
	}
}
