package httpapi

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/rs/zerolog"
	"go.uber.org/goleak"

	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/httpx/auth"
	"github.com/ronhq/ron/httpx/client"
	"github.com/ronhq/ron/internal/pipenet"
	"github.com/ronhq/ron/roles/registry/committer"
	"github.com/ronhq/ron/roles/registry/registryapi"
	"github.com/ronhq/ron/roles/registry/registryapi/descriptor"
	"github.com/ronhq/ron/roles/registry/segment"
	"github.com/ronhq/ron/roles/registry/tiles"
	"github.com/ronhq/ron/runtime"
	"github.com/ronhq/ron/store/kv"
	"github.com/ronhq/ron/store/kv/memkv"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// baseURL is the registry's address over the in-memory pipe listener.
const baseURL = "http://registry.test"

// testKey is a deterministic Ed25519 key (seed = 32 bytes of b).
func testKey(b byte) ed25519.PrivateKey {
	return ed25519.NewKeyFromSeed(bytes.Repeat([]byte{b}, ed25519.SeedSize))
}

// signerID is the id of testKey(b).
func signerID(b byte) string { return fmt.Sprintf("org:test#k%d", b) }

// holdDB wraps registry.db so a test can make the next Update wait.
type holdDB struct {
	kv.DB
	mu   sync.Mutex
	hold chan struct{}
}

func (h *holdDB) Update(ctx context.Context, fn func(kv.Tx) error) error {
	h.mu.Lock()
	hold := h.hold
	h.hold = nil
	h.mu.Unlock()
	if hold != nil {
		select {
		case <-hold:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return h.DB.Update(ctx, fn)
}

// holdNext makes the next Update wait until the returned channel closes.
func (h *holdDB) holdNext() chan struct{} {
	ch := make(chan struct{})
	h.mu.Lock()
	h.hold = ch
	h.mu.Unlock()
	return ch
}

// env is a registry API over a real committer (memkv + segment.MemFS), a
// tile tree and an HTTP server on a pipe listener. Build it inside a
// synctest bubble.
type env struct {
	t      *testing.T
	m      *runtime.Metrics
	keys   *auth.Keyring
	log    *segment.Log
	db     *holdDB
	tree   *tiles.Tree
	c      *committer.Committer
	a      *API
	g      *runtime.TaskGroup
	set    atomic.Pointer[Settings]
	minIdx atomic.Int64 // < 0: the log's min_index
	status registryapi.Status

	ln     *pipenet.Listener
	srv    *http.Server
	served chan struct{}
	hc     *http.Client
}

// newEnv builds an env with genesis signers 1..3 and quorum 2 of 3,
// checkpointed, with the committer running.
func newEnv(t *testing.T) *env {
	t.Helper()
	e := &env{t: t, m: runtime.NewMetrics(nil)}
	s := DefaultSettings()
	e.set.Store(&s)
	e.minIdx.Store(-1)
	var err error
	if e.keys, err = auth.GenerateKeyring(); err != nil {
		t.Fatal(err)
	}
	e.openStores()
	e.openAPI()
	e.g = runtime.NewTaskGroup(registryapi.RoleName, zerolog.Nop(), e.m)
	e.g.Go("registry-committer", e.c.Run)
	e.serve()
	synctest.Wait()
	e.checkpoint()
	return e
}

// openStores opens the log, registry.db, the committer (appending genesis)
// and the tile tree.
func (e *env) openStores() {
	ctx := context.Background()
	log, rec, err := segment.Open("/reg/log", segment.Options{FS: segment.NewMemFS(), SegmentRecords: 256,
		Check: committer.CheckRecord, DurableHead: -1})
	if err != nil {
		e.t.Fatal(err)
	}
	e.log, e.db = log, &holdDB{DB: memkv.New()}
	e.c, err = committer.Open(ctx, committer.Options{Log: log, DB: e.db, Limits: e.limits, Now: time.Now,
		Metrics: e.m, Logger: zerolog.Nop(), OnCommit: func(c registryapi.Committed) { e.a.Hub().Notify(c) }},
		e.genesis(), rec)
	if err != nil {
		e.t.Fatal(err)
	}
	key, err := tiles.NewLogKey("")
	if err != nil {
		e.t.Fatal(err)
	}
	if e.tree, err = tiles.OpenTree(ctx, memkv.New(), key); err != nil {
		e.t.Fatal(err)
	}
}

// limits are the committer's limits, following the API settings.
func (e *env) limits() committer.Limits {
	s := e.settings()
	l := committer.DefaultLimits()
	l.Limits, l.CommitTimeout = s.Limits, s.CommitTimeout
	return l
}

// openAPI builds the API over the stores.
func (e *env) openAPI() {
	e.a = New(Options{Committer: e.c, Tree: e.tree, Log: e.log, Keys: e.keys,
		Settings: e.settings, Status: func() registryapi.Status { return e.status },
		MinIndex: func() uint64 {
			if v := e.minIdx.Load(); v >= 0 {
				return uint64(v)
			}
			return e.log.MinIndex()
		},
		Now: time.Now, Metrics: e.m, Logger: zerolog.Nop()})
}

func (e *env) settings() Settings { return e.set.Load().withDefaults() }

// update changes the live settings.
func (e *env) update(fn func(*Settings)) {
	s := *e.set.Load()
	fn(&s)
	e.set.Store(&s)
}

// serve mounts the API behind httpx's middleware on the pipe listener.
func (e *env) serve() {
	hs := httpx.NewServer(httpx.ServerOptions{Role: registryapi.RoleName, Log: zerolog.Nop(), Metrics: e.m.Set(),
		Limits: httpx.DefaultIngress().Limits(), Streaming: Streaming})
	e.a.Mount(hs.Echo())
	e.ln = pipenet.New("registry.test:80")
	e.srv = &http.Server{Handler: hs.Echo(), ReadHeaderTimeout: httpx.ReadHeaderTimeout}
	e.served = make(chan struct{})
	go func() { // test server: ends at close
		defer close(e.served)
		_ = e.srv.Serve(e.ln)
	}()
	e.hc = &http.Client{Transport: &http.Transport{DialContext: e.ln.DialContext, DisableCompression: true}}
}

// close stops everything the env started.
func (e *env) close() {
	e.a.Hub().Close()
	_ = e.srv.Close()
	<-e.served
	e.hc.CloseIdleConnections()
	time.Sleep(time.Second) // bubble time: lets net/http's lingering-close waits (500 ms) end
	e.g.Stop(context.Background())
	if err := e.log.Close(); err != nil {
		e.t.Fatal(err)
	}
}

// run builds an env in a synctest bubble, runs fn and closes the env.
func run(t *testing.T, fn func(t *testing.T, e *env)) {
	t.Helper()
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t)
		defer e.close()
		fn(t, e)
	})
}

// genesis is version 0 with signers 1..3 and quorum 2 of 3.
func (e *env) genesis() *descriptor.Set {
	var tr descriptor.TrustRoots
	for b := byte(1); b <= 3; b++ {
		pub := testKey(b).Public().(ed25519.PublicKey)
		tr.Signers = append(tr.Signers, descriptor.Signer{ID: signerID(b), Algo: descriptor.AlgoEd25519,
			Pubkey: pub, PubkeyB64: base64.StdEncoding.EncodeToString(pub)})
	}
	tr.Quorum = descriptor.Quorum{M: 2, N: 3}
	g, err := descriptor.Genesis(tr, time.Now())
	if err != nil {
		e.t.Fatal(err)
	}
	return g
}

// payload is a DescriptorSet at version with prev: signers 1..3, quorum
// 2 of 3, the note, created now.
func payload(version uint64, prev, note string) []byte {
	items := []any{}
	for b := byte(1); b <= 3; b++ {
		pub := testKey(b).Public().(ed25519.PublicKey)
		items = append(items, map[string]any{"kind": "signer", "id": signerID(b), "algo": "ed25519",
			"pubkey": base64.StdEncoding.EncodeToString(pub)})
	}
	items = append(items, map[string]any{"kind": "quorum", "id": "quorum", "m": 2, "n": 3})
	raw, _ := json.Marshal(map[string]any{"version": version, "prev_hash": prev,
		"created_at": descriptor.FormatTime(time.Now()), "note": note, "items": items})
	return raw
}

// nextPayload is a payload extending the current HEAD, and its b3.
func (e *env) nextPayload(note string) ([]byte, string) {
	h := e.c.Head()
	raw := payload(h.Version+1, h.PayloadB3, note)
	return raw, e.parse(raw).B3
}

// parse validates a payload.
func (e *env) parse(raw []byte) *descriptor.Set {
	e.t.Helper()
	s, err := descriptor.ParseSet(raw, descriptor.DefaultLimits(), time.Now())
	if err != nil {
		e.t.Fatal(err)
	}
	return s
}

// proposeBody is a POST /registry/proposals body for payload.
func proposeBody(payload []byte) []byte {
	b, _ := json.Marshal(map[string]any{"schema_version": "1.0.0", "payload": json.RawMessage(payload)})
	return b
}

// sign is signer k's approval of b3.
func sign(k byte, b3 string) descriptor.Approval {
	return descriptor.Sign(testKey(k), signerID(k), b3, time.Now())
}

// cycle commits a set extending HEAD through the committer directly
// (propose, approvals 1 and 2, commit with corr id "corr-<note>").
func (e *env) cycle(note string) registryapi.Committed {
	e.t.Helper()
	ctx := context.Background()
	raw, _ := e.nextPayload(note)
	set := e.parse(raw)
	id := descriptor.ProposalID(set.B3)
	if _, err := e.c.Propose(ctx, set, "corr-p"); err != nil {
		e.t.Fatal(err)
	}
	for _, k := range []byte{1, 2} {
		if _, err := e.c.Approve(ctx, id, sign(k, set.B3), "corr-a"); err != nil {
			e.t.Fatal(err)
		}
	}
	cm, err := e.c.Commit(ctx, id, "corr-"+note)
	if err != nil {
		e.t.Fatal(err)
	}
	return cm
}

// commitN runs n cycles and checkpoints.
func (e *env) commitN(n int) {
	e.t.Helper()
	for i := range n {
		e.cycle(fmt.Sprint("n", e.c.Head().Version+1, "-", i))
	}
	e.checkpoint()
}

// checkpoint appends every committed version the tree lacks (the role's
// checkpointer in miniature).
func (e *env) checkpoint() {
	e.t.Helper()
	size, head := e.tree.Size(), e.c.Head().Version
	if size > head {
		return
	}
	var leaves [][]byte
	if err := e.log.Scan(size, head, func(r segment.Record) error {
		leaves = append(leaves, r.Artifact)
		return nil
	}); err != nil {
		e.t.Fatal(err)
	}
	if _, err := e.tree.Append(context.Background(), leaves); err != nil {
		e.t.Fatal(err)
	}
}

// token mints a bearer token with scopes.
func (e *env) token(scopes ...string) string {
	e.t.Helper()
	tok, _, err := e.keys.Mint(auth.MintOptions{Scopes: scopes, TTL: time.Hour, Now: time.Now()})
	if err != nil {
		e.t.Fatal(err)
	}
	return tok
}

// allScopes are the scopes the HTTP client's token carries.
var allScopes = []string{registryapi.ScopePropose, registryapi.ScopeApprove, registryapi.ScopeCommit, registryapi.ScopeRead}

// request sends one request (headers as name, value pairs) and returns the
// response with its body read.
func (e *env) request(method, path string, body []byte, hdr ...string) (*http.Response, []byte) {
	e.t.Helper()
	resp := e.open(method, path, body, hdr...)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		e.t.Fatal(err)
	}
	return resp, b
}

// open sends one request and returns the response with its body open.
func (e *env) open(method, path string, body []byte, hdr ...string) *http.Response {
	e.t.Helper()
	var r io.Reader
	if body != nil {
		r = bytes.NewReader(body)
	}
	req, err := http.NewRequest(method, baseURL+path, r)
	if err != nil {
		e.t.Fatal(err)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Add(hdr[i], hdr[i+1])
	}
	resp, err := e.hc.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	return resp
}

// post sends a JSON POST with a token of scope.
func (e *env) post(path string, body []byte, scope string) (*http.Response, []byte) {
	return e.request(http.MethodPost, path, body, "Content-Type", "application/json",
		"Authorization", "Bearer "+e.token(scope))
}

// httpClient is an HTTPClient of the env with every scope, no retries and
// a breaker that never opens.
func (e *env) httpClient() *registryapi.HTTPClient {
	mint := func(context.Context) (string, error) {
		tok, _, err := e.keys.Mint(auth.MintOptions{Scopes: allScopes, TTL: time.Hour, Now: time.Now()})
		return tok, err
	}
	return registryapi.NewHTTPClient(baseURL, mint, client.Options{
		HTTP: e.hc, Retries: -1, Breaker: client.BreakerOptions{Trip: func(client.Counts) bool { return false }}})
}

// metric returns series name{role="registry",labels}.
func (e *env) metric(name string, labels ...string) float64 {
	return e.m.Values()[runtime.MetricName(name, append([]string{"role", registryapi.RoleName}, labels...)...)]
}

// want describes an expected *httpx.Error; only the listed details are
// compared (via fmt.Sprint), retry only when non-zero.
type want struct {
	status  int
	code    string
	details map[string]any
	retry   int
}

// checkErr compares err with w; label names the case in failures.
func checkErr(t *testing.T, label string, err error, w want) {
	t.Helper()
	var he *httpx.Error
	if !errors.As(err, &he) {
		t.Fatalf("%s: error %v (%T), want %d %s", label, err, err, w.status, w.code)
	}
	if he.Status != w.status || he.Code != w.code {
		t.Fatalf("%s: got %d %s (%v), want %d %s", label, he.Status, he.Code, he, w.status, w.code)
	}
	for k, v := range w.details {
		if got, ok := he.Details[k]; !ok || fmt.Sprint(got) != fmt.Sprint(v) {
			t.Fatalf("%s: details[%s] = %v, want %v (all: %v)", label, k, got, v, he.Details)
		}
	}
	if w.retry != 0 && he.RetryAfter != w.retry {
		t.Fatalf("%s: retry after %d, want %d", label, he.RetryAfter, w.retry)
	}
}

// checkResp compares an error response with w, Retry-After header included.
func checkResp(t *testing.T, label string, resp *http.Response, body []byte, w want) {
	t.Helper()
	he := httpx.DecodeError(resp.StatusCode, body)
	if w.retry != 0 {
		if got := resp.Header.Get("Retry-After"); got != fmt.Sprint(w.retry) {
			t.Fatalf("%s: Retry-After %q, want %d", label, got, w.retry)
		}
	}
	checkErr(t, label, he, w)
}
