package edge

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/httpx/auth"
	"github.com/ronhq/ron/roles/index/indexapi"
	"github.com/ronhq/ron/runtime/module"
	"github.com/ronhq/ron/store"
)

// fakeIndex answers Providers from a list or with an error.
type fakeIndex struct {
	indexapi.Client // other methods are not used
	addrs           []string
	err             error
	limit           int
}

func (f *fakeIndex) Providers(_ context.Context, id store.ID, _ string, limit int) (indexapi.ProviderList, error) {
	f.limit = limit
	if f.err != nil {
		return indexapi.ProviderList{}, f.err
	}
	l := indexapi.ProviderList{B3: id.String()}
	for _, a := range f.addrs {
		l.Providers = append(l.Providers, indexapi.ProviderInfo{Addr: a})
	}
	return l, nil
}

// TestProviderURLs (docs/edge.md §3): up to max_providers providers, without the
// storage source already asked; an index that knows none is no error.
func TestProviderURLs(t *testing.T) {
	id := store.Sum([]byte("x"))
	ix := &fakeIndex{addrs: []string{"http://self:5303/", "http://a:5303", "", "http://b:5303/", "http://c:5303", "http://d:5303"}}
	s := &sources{index: ix, storageURL: func() string { return "http://self:5303" }, maxProviders: func() int { return 3 }}
	got, err := s.providerURLs(t.Context(), id)
	if err != nil || !slices.Equal(got, []string{"http://a:5303", "http://b:5303", "http://c:5303"}) || ix.limit != 4 {
		t.Fatalf("providers %v, %v (limit %d)", got, err, ix.limit)
	}
	ix.err = httpx.NewError(http.StatusNotFound, httpx.CodeNotFound, "no providers")
	if got, err := s.providerURLs(t.Context(), id); err != nil || len(got) != 0 {
		t.Fatalf("index 404: %v, %v", got, err)
	}
	ix.err = httpx.NewError(http.StatusBadGateway, httpx.CodeUpstreamUnavailable, "down")
	if _, err := s.providerURLs(t.Context(), id); !errors.Is(err, ix.err) {
		t.Fatalf("index failure: %v", err)
	}
	s.maxProviders = func() int { return 64 }
	ix.err = nil
	if _, err := s.providerURLs(t.Context(), id); err != nil || ix.limit != 64 {
		t.Fatalf("limit %d, want the index's maximum 64", ix.limit)
	}
}

// TestSourceChoice (docs/edge.md §3): the co-located storage is the in-process source
// (its requests carry the link principal), else storage_url with a
// bearer; the co-located index, else index_url, gives providers.
func TestSourceChoice(t *testing.T) {
	var seen *auth.Claims
	storage := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen = auth.ClaimsFromContext(r.Context())
		w.WriteHeader(http.StatusNoContent)
	})
	cfg := DefaultConfig()
	local := newSources(sourceOptions{cfg: cfg, token: func() string { return "tok" }, maxProviders: func() int { return 3 },
		local: Locals{Storage: func() http.Handler { return storage }, IndexClient: func() indexapi.Client { return &fakeIndex{} }}})
	defer local.close()
	if local.storage == nil || local.storage.BaseURL != inProcessBase || local.providers == nil || !slices.Equal(local.describe, []string{"storage (in-process)", "index (in-process)"}) {
		t.Fatalf("co-located sources %+v %v", local.storage, local.describe)
	}
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, local.storage.BaseURL+someID, nil)
	local.storage.Prepare(req)
	resp, err := local.storage.Client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if seen == nil || seen.ID != LinkPrincipalID || !seen.Allows("storage:read") || seen.Allows("storage:write") {
		t.Fatalf("in-process principal %+v", seen)
	}

	cfg.StorageURL, cfg.IndexURL = "http://10.0.0.2:5303/", "http://10.0.0.3:5304"
	remote := newSources(sourceOptions{cfg: cfg, token: func() string { return "tok" }, maxProviders: func() int { return 3 }})
	defer remote.close()
	if remote.storage.BaseURL != "http://10.0.0.2:5303" || remote.httpIndex == nil || remote.providers == nil {
		t.Fatalf("remote sources %+v", remote.storage)
	}
	req = httptest.NewRequest(http.MethodGet, "http://10.0.0.2:5303"+someID, nil)
	remote.storage.Prepare(req)
	if req.Header.Get("Authorization") != "Bearer tok" {
		t.Fatalf("Authorization %q", req.Header.Get("Authorization"))
	}
	none := newSources(sourceOptions{cfg: DefaultConfig(), token: func() string { return "" }, maxProviders: func() int { return 3 }})
	defer none.close()
	if none.storage != nil || none.providers != nil {
		t.Fatal("sources without storage or index")
	}
	req = httptest.NewRequest(http.MethodGet, "http://x"+someID, nil)
	withBearer(func() string { return "" })(req)
	if req.Header.Get("Authorization") != "" {
		t.Fatal("an empty token was sent")
	}
}

// TestLazyStorageNotStarted: before the co-located storage has started,
// the in-process source answers 503 not_ready.
func TestLazyStorageNotStarted(t *testing.T) {
	rec := httptest.NewRecorder()
	lazyHandler(func() http.Handler { return nil }).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, someID, nil))
	if rec.Code != http.StatusServiceUnavailable || rec.Header().Get("Retry-After") == "" {
		t.Fatalf("%d %v", rec.Code, rec.Header())
	}
}

// TestMintedToken (docs/edge.md §3): one scope caveat "storage:read index:read", cached
// (renewal at half life is auth.TokenSource's, tested there); upstream_token
// wins when set.
func TestMintedToken(t *testing.T) {
	keys, err := auth.GenerateKeyring()
	if err != nil {
		t.Fatal(err)
	}
	m := newMinter(keys, zerolog.Nop())
	tok := m.token()
	claims, err := keys.Verify(tok, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(claims.Scopes, []string{"storage:read", "index:read"}) || claims.Expires.IsZero() {
		t.Fatalf("claims %+v", claims)
	}
	if m.token() != tok {
		t.Fatal("token not cached")
	}
	if newMinter(nil, zerolog.Nop()).token() != "" {
		t.Fatal("a token without a root key")
	}

	r := New(Options{Config: DefaultConfig(), Env: module.Env{Keys: keys, Log: zerolog.Nop()}})
	s, _ := newSettings(DefaultConfig())
	r.set.Store(s)
	if _, err := keys.Verify(r.token(), time.Now()); err != nil {
		t.Fatalf("role token: %v", err)
	}
	cfg := DefaultConfig()
	cfg.UpstreamToken = "configured"
	s, _ = newSettings(cfg)
	r.set.Store(s)
	if r.token() != "configured" {
		t.Fatalf("upstream_token not used: %q", r.token())
	}
}
