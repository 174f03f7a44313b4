package edge

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/roles/index/indexapi"
	"github.com/ronhq/ron/runtime/cluster"
	"github.com/ronhq/ron/runtime/cluster/rendezvous"
	"github.com/ronhq/ron/store"
)

// memberIndex is an index member answering GET /providers/{b3} with one
// provider, or 503 when down; it records the Authorization of each call.
type memberIndex struct {
	provider string
	down     bool

	mu    sync.Mutex
	auths []string
}

func (m *memberIndex) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	m.mu.Lock()
	m.auths = append(m.auths, r.Header.Get("Authorization"))
	m.mu.Unlock()
	raw, ok := strings.CutPrefix(r.URL.Path, "/providers/")
	if m.down || !ok {
		httpx.WriteError(w, "", httpx.NewError(http.StatusServiceUnavailable, httpx.CodeUpstreamUnavailable, "down"))
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(indexapi.ProviderList{B3: raw, Providers: []indexapi.ProviderInfo{{Node: "s1", Addr: m.provider}}})
}

func (m *memberIndex) calls() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]string(nil), m.auths...)
}

// TestFillFromMemberIndex (docs/edge.md §3, docs/cluster.md §7): with no co-located
// index and no index_url, a cluster edge finds providers through an alive
// index member (with the minted token), falling back past one that fails.
func TestFillFromMemberIndex(t *testing.T) {
	data := []byte(strings.Repeat("member index fill ", 500))
	id := store.Sum(data)
	storage := httptest.NewServer(newFakeStorage(data))
	t.Cleanup(storage.Close)
	good, bad := &memberIndex{provider: storage.URL}, &memberIndex{down: true}
	goodSrv, badSrv := httptest.NewServer(good), httptest.NewServer(bad)
	t.Cleanup(goodSrv.Close)
	t.Cleanup(badSrv.Close)
	member := func(id, url string) cluster.Member {
		return cluster.Member{ID: id, Roles: []string{"index"}, URLs: map[string]string{"index": url}, State: cluster.StateAlive}
	}
	goodID, badID := "i-a", "i-b" // the failing member ranks first for id
	if rendezvous.Score(badID, id[:]) < rendezvous.Score(goodID, id[:]) {
		goodID, badID = badID, goodID
	}
	st := cluster.NewStatic(cluster.NewView("edge-1", []cluster.Member{member(goodID, goodSrv.URL), member(badID, badSrv.URL),
		{ID: "s1", Roles: []string{"storage"}, URLs: map[string]string{"storage": storage.URL}, State: cluster.StateAlive}}, time.Time{}))
	h := startRole(t, func(_ *Config, o *Options) { o.Cluster = st })
	resp, body := h.get(t, http.MethodGet, "/o/"+id.String())
	if resp.StatusCode != http.StatusOK || body != string(data) {
		t.Fatalf("fill: %d %.80q", resp.StatusCode, body)
	}
	if n := len(bad.calls()); n != 1 {
		t.Fatalf("failing member asked %d times, want once", n)
	}
	calls := good.calls()
	if len(calls) != 1 || !strings.HasPrefix(calls[0], "Bearer ") {
		t.Fatalf("good member calls %q, want one with a bearer", calls)
	}
	if got := h.r.src.describe; !strings.Contains(strings.Join(got, ","), "index (cluster members)") {
		t.Fatalf("sources %v", got)
	}
}

// TestNoMemberIndexWithoutCluster: outside a cluster, an edge without an
// index has no providers.
func TestNoMemberIndexWithoutCluster(t *testing.T) {
	s := newSources(sourceOptions{cfg: DefaultConfig(), token: func() string { return "" }, maxProviders: func() int { return 3 }})
	defer s.close()
	if s.members != nil || s.providers != nil {
		t.Fatal("providers without an index")
	}
}
