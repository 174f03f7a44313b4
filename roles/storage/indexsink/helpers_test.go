package indexsink

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/VictoriaMetrics/metrics"
	"github.com/rs/zerolog"
	"go.uber.org/goleak"

	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/httpx/auth"
	"github.com/ronhq/ron/roles/index"
	"github.com/ronhq/ron/roles/index/indexapi"
	"github.com/ronhq/ron/roles/index/indexdb"
	"github.com/ronhq/ron/roles/storage/announcing"
	"github.com/ronhq/ron/store"
	"github.com/ronhq/ron/store/kv/memkv"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const (
	node = "01JD2Z3Y4X5W6V7T8S9R0QPNMK"
	addr = "http://10.0.0.7:5303"
)

// realIndex is an index's handlers over a memkv database: reachable in
// process (local) and over HTTP (url).
type realIndex struct {
	keys  *auth.Keyring
	local *index.LocalClient
	url   string
}

func newRealIndex(t *testing.T) *realIndex {
	t.Helper()
	db, err := indexdb.Open(context.Background(), memkv.New(), nil)
	if err != nil {
		t.Fatal(err)
	}
	keys, err := auth.GenerateKeyring()
	if err != nil {
		t.Fatal(err)
	}
	h := index.NewHandlers(db, keys, nil)
	srv := httpx.NewServer(httpx.ServerOptions{Role: "index", Log: zerolog.Nop(), Metrics: metrics.NewSet(),
		Limits: httpx.DefaultIngress().Limits()})
	h.Mount(srv.Echo())
	ts := httptest.NewServer(srv.Echo())
	t.Cleanup(ts.Close)
	return &realIndex{keys: keys, local: index.NewLocalClient(h), url: ts.URL}
}

// providers returns id's live provider records.
func (ri *realIndex) providers(t *testing.T, id store.ID) []indexapi.ProviderInfo {
	t.Helper()
	out, err := ri.local.Providers(context.Background(), id, "", 0)
	if err != nil {
		t.Fatalf("providers of %s: %v", id.Prefix(), err)
	}
	return out.Providers
}

// fakeIndex records POST /providers calls and answers status (200 with
// counts when status is 200, else an error envelope).
type fakeIndex struct {
	mu     sync.Mutex
	status int
	hits   int
	auth   []string
	bodies []announceBody
	url    string
}

type announceBody struct {
	Records []map[string]any `json:"records"`
}

func newFakeIndex(t *testing.T, status int) *fakeIndex {
	t.Helper()
	f := &fakeIndex{status: status}
	ts := httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(ts.Close)
	f.url = ts.URL
	return f
}

func (f *fakeIndex) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var b announceBody
	_ = json.Unmarshal(body, &b)
	f.mu.Lock()
	f.hits++
	f.auth = append(f.auth, r.Header.Get("Authorization"))
	f.bodies = append(f.bodies, b)
	status := f.status
	f.mu.Unlock()
	if r.Method != http.MethodPost || r.URL.Path != "/providers" {
		status = http.StatusNotFound
	}
	if status != http.StatusOK {
		httpx.WriteError(w, "", httpx.NewError(status, "test", "fake index says %d", status))
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write([]byte(`{"accepted":1,"withdrawn":0}`))
}

func (f *fakeIndex) setStatus(s int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.status = s
}

func (f *fakeIndex) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.hits
}

func (f *fakeIndex) lastAuth() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.auth[len(f.auth)-1]
}

// newSink builds a sink, closed at cleanup.
func newSink(t *testing.T, opt Options) *Sink {
	t.Helper()
	if opt.Node == "" {
		opt.Node = node
	}
	if opt.Addr == nil {
		opt.Addr = func() string { return addr }
	}
	s, err := New(opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

func staticToken(tok string) func(context.Context) (string, error) {
	return func(context.Context) (string, error) { return tok, nil }
}

// recs returns n records of distinct ids with ttl and type.
func recs(n int, ttl time.Duration, ctype string) []announcing.Record {
	out := make([]announcing.Record, n)
	for i := range out {
		out[i] = announcing.Record{ID: store.Sum([]byte{byte(i), byte(i >> 8), 7}), Type: ctype, TTL: ttl}
	}
	return out
}

// announce calls s.Announce with a 1 s deadline, as the announcer does.
func announce(s *Sink, batch []announcing.Record) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	return s.Announce(ctx, batch)
}
