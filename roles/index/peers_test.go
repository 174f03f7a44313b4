package index

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/httpx/client"
	"github.com/ronhq/ron/httpx/client/hedge"
	"github.com/ronhq/ron/roles/index/indexapi"
	"github.com/ronhq/ron/roles/index/ownership"
	"github.com/ronhq/ron/store"
)

// peerServer is a fake index peer that records the requests it saw.
type peerServer struct {
	srv *httptest.Server
	mu  sync.Mutex
	req []*http.Request
}

func (p *peerServer) requests() []*http.Request {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.req)
}

// newPeerServer starts a peer answering with h; it is closed at cleanup.
func newPeerServer(t *testing.T, h http.HandlerFunc) *peerServer {
	t.Helper()
	p := &peerServer{}
	p.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.mu.Lock()
		p.req = append(p.req, r.Clone(r.Context()))
		p.mu.Unlock()
		h(w, r)
	}))
	t.Cleanup(p.srv.Close)
	return p
}

// slowPeer answers only when the caller gives up.
func slowPeer(w http.ResponseWriter, r *http.Request) {
	select {
	case <-r.Context().Done():
	case <-time.After(5 * time.Second):
		w.WriteHeader(http.StatusServiceUnavailable)
	}
}

func notFoundPeer(w http.ResponseWriter, _ *http.Request) {
	httpx.WriteError(w, "", httpx.NewError(http.StatusNotFound, httpx.CodeNotFound, "not here"))
}

func jsonPeer(v any) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(v)
	}
}

// newTestPeers builds a HedgedPeers over servers with test-sized budgets.
func newTestPeers(t *testing.T, urls ...string) *HedgedPeers {
	t.Helper()
	hp, err := NewHedgedPeers(urls,
		hedge.Options{Alpha: 3, Beta: 2, HedgeAfter: 150 * time.Millisecond, Deadline: 2 * time.Second},
		client.Options{Timeout: 3 * time.Second, Retries: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(hp.Close)
	return hp
}

// checkLocal asserts every request a server saw asked path with local=1.
func checkLocal(t *testing.T, path string, ps ...*peerServer) {
	t.Helper()
	for _, p := range ps {
		for _, r := range p.requests() {
			if r.URL.Path != path || r.URL.Query().Get("local") != "1" || r.Method != http.MethodGet {
				t.Errorf("peer %s saw %s %s, want GET %s?local=1", p.srv.URL, r.Method, r.URL, path)
			}
		}
	}
}

func TestHedgedPeersNameFromGoodPeer(t *testing.T) {
	want := indexapi.NameRecord{Name: "site", B3: idA, Version: 4, UpdatedAt: "2026-01-02T03:04:05Z"}
	slow := newPeerServer(t, slowPeer)
	nf := newPeerServer(t, notFoundPeer)
	good := newPeerServer(t, jsonPeer(want))
	hp := newTestPeers(t, slow.srv.URL, nf.srv.URL, good.srv.URL)

	start := time.Now()
	got, err := hp.Name(t.Context(), "site")
	if err != nil || got != want {
		t.Fatalf("Name = %+v, %v; want %+v", got, err, want)
	}
	if el := time.Since(start); el > time.Second {
		t.Errorf("Name took %v: waited for the slow peer", el)
	}
	// All three legs start at once (α = 3); a losing leg may be cancelled
	// before its request reaches the server, so only the winner is certain.
	for _, p := range []*peerServer{slow, nf} {
		if n := len(p.requests()); n > 1 {
			t.Errorf("peer %s asked %d times, want at most 1", p.srv.URL, n)
		}
	}
	if n := len(good.requests()); n != 1 {
		t.Errorf("good peer asked %d times, want 1", n)
	}
	checkLocal(t, "/names/site", slow, nf, good)
}

func TestHedgedPeersNameVersion(t *testing.T) {
	want := indexapi.NameRecord{Name: "site", B3: idB, Version: 2, UpdatedAt: "2026-01-02T03:04:05Z"}
	good := newPeerServer(t, jsonPeer(want))
	nf := newPeerServer(t, notFoundPeer)
	hp := newTestPeers(t, nf.srv.URL, good.srv.URL)
	got, err := hp.Name(t.Context(), "site@2")
	if err != nil || got != want {
		t.Fatalf("Name = %+v, %v; want %+v", got, err, want)
	}
	checkLocal(t, "/names/site@2", nf, good)
}

func TestHedgedPeersProvidersFromGoodPeer(t *testing.T) {
	id, err := store.ParseID(idA)
	if err != nil {
		t.Fatal(err)
	}
	want := indexapi.ProviderList{B3: idA, Providers: []indexapi.ProviderInfo{{Node: "s1", Addr: "http://s1:5301",
		Region: "eu", Type: manifestType, LastSeenS: 3, ExpiresInS: 500}}}
	slow := newPeerServer(t, slowPeer)
	nf := newPeerServer(t, notFoundPeer)
	empty := newPeerServer(t, jsonPeer(indexapi.ProviderList{B3: idA, Providers: []indexapi.ProviderInfo{}}))
	good := newPeerServer(t, jsonPeer(want))
	hp := newTestPeers(t, slow.srv.URL, nf.srv.URL, empty.srv.URL, good.srv.URL)

	got, err := hp.Providers(t.Context(), id)
	if err != nil || got.B3 != want.B3 || len(got.Providers) != 1 || got.Providers[0] != want.Providers[0] {
		t.Fatalf("Providers = %+v, %v; want %+v", got, err, want)
	}
	checkLocal(t, "/providers/"+idA, slow, nf, empty, good)
}

func TestHedgedPeersAllNotFound(t *testing.T) {
	id, _ := store.ParseID(idA)
	a := newPeerServer(t, notFoundPeer)
	b := newPeerServer(t, notFoundPeer)
	c := newPeerServer(t, jsonPeer(indexapi.ProviderList{B3: idA, Providers: []indexapi.ProviderInfo{}})) // 200, none: unsatisfied
	hp := newTestPeers(t, a.srv.URL, b.srv.URL, c.srv.URL)

	if _, err := hp.Providers(t.Context(), id); !errors.Is(err, hedge.ErrNotFound) {
		t.Errorf("Providers error = %v, want ErrNotFound", err)
	}
	hp2 := newTestPeers(t, a.srv.URL, b.srv.URL)
	if _, err := hp2.Name(t.Context(), "site"); !errors.Is(err, hedge.ErrNotFound) {
		t.Errorf("Name error = %v, want ErrNotFound", err)
	}
	checkLocal(t, "/providers/"+idA, c)
}

func TestHedgedPeersAllDown(t *testing.T) {
	var urls []string
	for range 3 {
		s := httptest.NewServer(http.NotFoundHandler())
		urls = append(urls, s.URL)
		s.Close() // connection refused from now on
	}
	hp := newTestPeers(t, urls...)
	id, _ := store.ParseID(idA)
	_, err := hp.Name(t.Context(), "site")
	if !errors.Is(err, hedge.ErrUnavailable) || errors.Is(err, hedge.ErrNotFound) {
		t.Errorf("Name error = %v, want ErrUnavailable", err)
	}
	if _, err := hp.Providers(t.Context(), id); !errors.Is(err, hedge.ErrUnavailable) {
		t.Errorf("Providers error = %v, want ErrUnavailable", err)
	}
}

func TestHedgedPeersInvalidAnswerIsFailure(t *testing.T) {
	// A record for another name is a failure, not an answer.
	wrong := newPeerServer(t, jsonPeer(indexapi.NameRecord{Name: "other", B3: idA, Version: 1, UpdatedAt: "x"}))
	hp := newTestPeers(t, wrong.srv.URL)
	if _, err := hp.Name(t.Context(), "site"); !errors.Is(err, hedge.ErrUnavailable) {
		t.Errorf("Name error = %v, want ErrUnavailable", err)
	}
	// Expired provider records are rejected too.
	id, _ := store.ParseID(idA)
	exp := newPeerServer(t, jsonPeer(indexapi.ProviderList{B3: idA, Providers: []indexapi.ProviderInfo{{Node: "s1", ExpiresInS: 0}}}))
	nf := newPeerServer(t, notFoundPeer)
	hp2 := newTestPeers(t, exp.srv.URL, nf.srv.URL)
	if _, err := hp2.Providers(t.Context(), id); !errors.Is(err, hedge.ErrNotFound) {
		t.Errorf("Providers error = %v, want ErrNotFound (the 404 counts, the expired answer fails)", err)
	}
}

func TestHedgedPeersNoPeers(t *testing.T) {
	hp := newTestPeers(t)
	if _, err := hp.Name(t.Context(), "site"); !errors.Is(err, hedge.ErrUnavailable) {
		t.Errorf("Name error = %v, want ErrUnavailable", err)
	}
}

func TestNewHedgedPeersValidatesURLs(t *testing.T) {
	for _, u := range []string{"", "10.0.0.1:5304", "ftp://x", "http://", "http://u:p@h:1",
		"http://h:1/?a=b", "http://h:1#f", "::bad"} {
		if _, err := NewHedgedPeers([]string{u}, hedge.Options{}, client.Options{}); err == nil {
			t.Errorf("NewHedgedPeers(%q) accepted", u)
		}
	}
	if _, err := NewHedgedPeers([]string{"http://h:1", "http://h:1/"}, hedge.Options{}, client.Options{}); err == nil ||
		!strings.Contains(err.Error(), "twice") {
		t.Errorf("duplicate peers: err = %v", err)
	}
	hp, err := NewHedgedPeers([]string{"http://h:1/", "https://h2"}, hedge.Options{}, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer hp.Close()
	if hp.Len() != 2 {
		t.Errorf("Len = %d, want 2", hp.Len())
	}
}

func TestHedgedPeersRendezvousOrder(t *testing.T) {
	hp, err := NewHedgedPeers([]string{"http://a:1", "http://b:1", "http://c:1", "http://d:1"},
		hedge.Options{}, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer hp.Close()
	key := ownership.NameKey("site")
	first := hp.order(key)
	again := hp.order(key)
	moved := false
	for i := range first {
		if first[i].url != again[i].url {
			t.Fatalf("order not deterministic: %v vs %v", first[i].url, again[i].url)
		}
	}
	for _, k := range []string{"a", "b", "c", "d", "e", "f"} {
		if hp.order(ownership.NameKey(k))[0].url != first[0].url {
			moved = true
		}
	}
	if !moved {
		t.Error("every key picked the same first candidate")
	}
}
