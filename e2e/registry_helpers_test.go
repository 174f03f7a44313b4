package e2e

import (
	"bufio"
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gowebpki/jcs"

	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/httpx/client"
	"github.com/ronhq/ron/roles/registry/registryapi"
	"github.com/ronhq/ron/roles/registry/registryapi/descriptor"
)

// Limits of the registry tests (docs/registry.md §2, §6, §10). They bound
// polls; a healthy run meets each in milliseconds.
const (
	// regWriteReadyLimit bounds restart → /registry/status write_ready
	// (recovery, tail verification and the first checkpoint come first).
	regWriteReadyLimit = 20 * time.Second
	// regCheckpointLimit bounds the wait for the checkpoint to cover HEAD.
	regCheckpointLimit = 10 * time.Second
	// regStreamLimit bounds an SSE consumer seeing a version, or its
	// stream ending once the node is killed.
	regStreamLimit = 10 * time.Second
	// regWatchLimit bounds registryapi.HTTPClient.Watch catching up after a
	// restart: its reconnect backoff grows to 5 s (docs/registry.md §9).
	regWatchLimit = 20 * time.Second
	// regCommitLimit bounds a sequential writer's run of commits.
	regCommitLimit = 30 * time.Second
	// regRetryEvery paces a client loop's retry of a transient answer
	// (429, 502, 503, 504 or a cut connection).
	regRetryEvery = 20 * time.Millisecond
	// regScopes are the write scopes of the tests' token.
	regScopes = "registry:propose,registry:approve,registry:commit"
)

// regKey is one signer's key, read from a `ron registry keygen` file (the
// dev signer's key file has the same shape).
type regKey struct {
	id     string
	pubkey string // std base64 of the 32-byte public key
	priv   ed25519.PrivateKey
}

// regKeyFile is the JSON of a signer key file (docs/registry.md §9).
type regKeyFile struct {
	SchemaVersion string `json:"schema_version"`
	ID            string `json:"id"`
	Algo          string `json:"algo"`
	Pubkey        string `json:"pubkey"`
	PrivateKey    string `json:"private_key"`
}

// readRegKey reads a signer key file and checks that its seed gives its pubkey.
func readRegKey(t testing.TB, path string) regKey {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("signer key: %v", err)
	}
	var f regKeyFile
	if err := json.Unmarshal(raw, &f); err != nil {
		t.Fatalf("signer key %s: %v", path, err)
	}
	seed, err := base64.StdEncoding.DecodeString(f.PrivateKey)
	if err != nil || len(seed) != ed25519.SeedSize || f.Algo != "ed25519" || f.SchemaVersion == "" {
		t.Fatalf("signer key %s: not an ed25519 key file: %s", path, raw)
	}
	priv := ed25519.NewKeyFromSeed(seed)
	if got := base64.StdEncoding.EncodeToString(priv.Public().(ed25519.PublicKey)); got != f.Pubkey {
		t.Fatalf("signer key %s: pubkey %s, the seed gives %s", path, f.Pubkey, got)
	}
	return regKey{id: f.ID, pubkey: f.Pubkey, priv: priv}
}

// devSignerKey reads a dev-mode node's signer key (docs/registry.md §6).
func devSignerKey(t testing.TB, n *node) regKey {
	t.Helper()
	return readRegKey(t, filepath.Join(n.dataDir, "keys", "registry-dev-signer.key"))
}

// keygen runs `ron registry keygen --id ID --out DIR/FILE` and checks the
// printed signer item and the file's mode (0600).
func keygen(t testing.TB, dir, id string) regKey {
	t.Helper()
	path := filepath.Join(dir, strings.NewReplacer(":", "_", "#", "_").Replace(id)+".key")
	res := ron(t, cliOpts{}, "registry", "keygen", "--id", id, "--out", path)
	if res.code != 0 {
		t.Fatalf("ron registry keygen --id %s: exit %d: %s", id, res.code, res.stderr)
	}
	var item struct{ Kind, ID, Algo, Pubkey string }
	if err := json.Unmarshal([]byte(res.stdout), &item); err != nil {
		t.Fatalf("keygen printed %q: %v", res.stdout, err)
	}
	k := readRegKey(t, path)
	if item.Kind != "signer" || item.ID != id || item.Algo != "ed25519" || item.Pubkey != k.pubkey {
		t.Fatalf("keygen printed %+v, want the signer item of %s (pubkey %s)", item, id, k.pubkey)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("key file %s: mode %v (%v), want 0600", path, fi.Mode().Perm(), err)
	}
	return k
}

// writeTrustRoots writes the trust-roots file {schema_version, signers,
// quorum:{m,n}} of keys into dir and returns its path.
func writeTrustRoots(t testing.TB, dir string, keys []regKey, m int) string {
	t.Helper()
	type signer struct {
		ID     string `json:"id"`
		Algo   string `json:"algo"`
		Pubkey string `json:"pubkey"`
	}
	var signers []signer
	for _, k := range keys {
		signers = append(signers, signer{ID: k.id, Algo: "ed25519", Pubkey: k.pubkey})
	}
	raw, err := json.MarshalIndent(map[string]any{"schema_version": "1.0.0", "signers": signers,
		"quorum": map[string]int{"m": m, "n": len(keys)}}, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "trust-roots.json")
	if err := os.WriteFile(path, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// registryInit runs `ron registry init --trust-roots FILE` on dataDir and
// returns the genesis payload_b3 and the log's note verifier key.
func registryInit(t testing.TB, dataDir, trustRoots string) (genesisB3, verifierKey string) {
	t.Helper()
	res := ron(t, cliOpts{}, "registry", "init", "--trust-roots", trustRoots, "--data-dir", dataDir, "-o", "json")
	if res.code != 0 {
		t.Fatalf("ron registry init: exit %d: %s", res.code, res.stderr)
	}
	var out struct {
		PayloadB3   string `json:"payload_b3"`
		VerifierKey string `json:"verifier_key"`
	}
	if err := json.Unmarshal([]byte(res.stdout), &out); err != nil || out.PayloadB3 == "" || out.VerifierKey == "" {
		t.Fatalf("ron registry init printed %q (%v), want {payload_b3, verifier_key}", res.stdout, err)
	}
	return out.PayloadB3, out.VerifierKey
}

// regClient is the tests' registry client: one attempt per call (the
// callers retry, so they know which calls were in flight) and a breaker
// that never opens, so a restarted node is used at once.
func regClient(n *node, tok string) *registryapi.HTTPClient {
	never := func(client.Counts) bool { return false }
	return registryapi.NewHTTPClient("http://"+n.registry, func(context.Context) (string, error) { return tok, nil },
		client.Options{Role: "e2e", Retries: -1, Breaker: client.BreakerOptions{Trip: never}})
}

// regBaseURL is the registry listener's base URL.
func (n *node) regBaseURL() string { return "http://" + n.registry }

// regGet fetches one version's artifact (failing the test on any error).
func regGet(t testing.TB, c registryapi.Client, v uint64) descriptor.Artifact {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), cliLimit)
	defer cancel()
	art, _, err := c.Get(ctx, v)
	if err != nil {
		t.Fatalf("GET /registry/%d: %v", v, err)
	}
	return art
}

// regHead fetches HEAD (failing the test on any error).
func regHead(t testing.TB, c registryapi.Client) registryapi.Head {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), cliLimit)
	defer cancel()
	h, err := c.Head(ctx)
	if err != nil {
		t.Fatalf("GET /registry/head: %v", err)
	}
	return h
}

// baseItems are the items of version 0's payload (signers and quorum),
// which every set the tests propose carries on.
func baseItems(t testing.TB, c registryapi.Client) []json.RawMessage {
	t.Helper()
	var p struct {
		Items []json.RawMessage `json:"items"`
	}
	if err := json.Unmarshal(regGet(t, c, 0).Payload, &p); err != nil || len(p.Items) == 0 {
		t.Fatalf("genesis payload items: %v (%d items)", err, len(p.Items))
	}
	return p.Items
}

// regStatus reads GET /registry/status.
func regStatus(n *node) (registryapi.Status, error) {
	var st registryapi.Status
	resp, err := httpClient.Get(n.regBaseURL() + "/registry/status")
	if err != nil {
		return st, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return st, fmt.Errorf("GET /registry/status: %d", resp.StatusCode)
	}
	return st, json.NewDecoder(resp.Body).Decode(&st)
}

// waitWriteReady polls /registry/status until the registry takes writes.
func waitWriteReady(t testing.TB, n *node) registryapi.Status {
	t.Helper()
	var st registryapi.Status
	var last error
	ok := pollUntil(regWriteReadyLimit, func() bool {
		st, last = regStatus(n)
		return last == nil && st.WriteReady
	})
	if !ok {
		t.Fatalf("registry not write-ready after %s: status %+v, err %v", regWriteReadyLimit, st, last)
	}
	return st
}

// checkpointSize reads GET /registry/log/checkpoint and returns its size
// (the note's second line).
func checkpointSize(n *node) (uint64, error) {
	resp, err := httpClient.Get(n.regBaseURL() + "/registry/log/checkpoint")
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("GET /registry/log/checkpoint: %d %q (%v)", resp.StatusCode, body, err)
	}
	lines := strings.SplitN(string(body), "\n", 3)
	if len(lines) < 3 {
		return 0, fmt.Errorf("checkpoint %q: fewer than three lines", body)
	}
	return strconv.ParseUint(lines[1], 10, 64)
}

// waitCheckpointCovers polls the checkpoint until its size is head+1.
func waitCheckpointCovers(t testing.TB, n *node, head uint64) {
	t.Helper()
	var size uint64
	var last error
	ok := pollUntil(regCheckpointLimit, func() bool {
		size, last = checkpointSize(n)
		return last == nil && size == head+1
	})
	if !ok {
		t.Fatalf("checkpoint size %d (err %v) after %s, want %d (HEAD %d + 1)", size, last, regCheckpointLimit, head+1, head)
	}
}

// regProposal is one proposal a writer made: its id, payload_b3 and the
// version its payload names.
type regProposal struct {
	id      string
	b3      string
	version uint64
}

// regAck is a commit acknowledged with 201.
type regAck struct {
	version     uint64
	b3          string
	committedAt string
}

// isCode reports whether err carries status and envelope code.
func isCode(err error, status int, code string) bool {
	var he *httpx.Error
	return errors.As(err, &he) && he.Status == status && he.Code == code
}

// transient reports whether retrying may help: 429, 502 (unreachable),
// 503, 504, or a connection cut in the middle of an answer.
func transient(err error) bool {
	var he *httpx.Error
	if errors.As(err, &he) {
		switch he.Status {
		case http.StatusTooManyRequests, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
			return true
		}
		return false
	}
	return errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}

// errCode names err for the retry counts: its envelope code or its text.
func errCode(err error) string {
	var he *httpx.Error
	if errors.As(err, &he) {
		return strconv.Itoa(he.Status) + " " + he.Code
	}
	return err.Error()
}

// pause waits d or until ctx ends (a retry's pacing, never a sync point);
// it reports whether ctx is still alive.
func pause(ctx context.Context, d time.Duration) bool {
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-tm.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// nextPayload is the canonical DescriptorSet following head: the base
// items plus one service item naming the writer and its round, so every
// proposal differs. The hash is computed here (zeebo/blake3 over
// gowebpki/jcs), independently of the product's.
func nextPayload(name string, seq int, nonce uint32, items []json.RawMessage, head registryapi.Head) (regProposal, []byte, error) {
	svc, err := json.Marshal(map[string]any{"kind": "service", "id": name, "seq": seq, "nonce": nonce})
	if err != nil {
		return regProposal{}, nil, err
	}
	raw, err := json.Marshal(map[string]any{
		"version":    head.Version + 1,
		"prev_hash":  head.PayloadB3,
		"created_at": time.Now().UTC().Format(time.RFC3339Nano),
		"items":      append(slices.Clip(items), svc),
		"note":       fmt.Sprintf("e2e %s round %d", name, seq),
	})
	if err != nil {
		return regProposal{}, nil, err
	}
	canonical, err := jcs.Transform(raw)
	if err != nil {
		return regProposal{}, nil, err
	}
	b3 := idOf(canonical)
	return regProposal{id: "p_" + b3[3:35], b3: b3, version: head.Version + 1}, canonical, nil
}

// newRand is a seeded generator for stream i of a test.
func newRand(seed uint64, i int) *rand.Rand {
	return rand.New(rand.NewPCG(seed, uint64(i)+1))
}

// regWriter drives propose → approve (need signatures) → commit rounds
// against one registry, retrying transient answers, and records what it
// learns: every commit acknowledged with 201, every proposal whose commit
// it sent, the ones answered 409, and the one whose commit is in flight
// when it stops. It never touches a testing.T, so a loop can run it in its
// own goroutine; its fields are read only after run returns.
type regWriter struct {
	name  string
	c     registryapi.Client
	items []json.RawMessage // the signer and quorum items every set carries
	keys  []regKey
	need  int // approvals per proposal (the quorum's m)
	rng   *rand.Rand
	// killed reports that the node was killed on purpose: from then on any
	// failure ends the writer instead of failing it.
	killed func() bool
	seq    int

	acks     []regAck
	sent     map[string]regProposal // payload_b3 → proposal whose commit was sent
	refused  map[string]bool        // payload_b3 of commits answered 409 chain_mismatch
	inflight *regProposal           // commit sent, no final answer yet
	retries  map[string]int         // transient answers retried, by code
}

func newRegWriter(name string, c registryapi.Client, items []json.RawMessage, keys []regKey, need int, rng *rand.Rand) *regWriter {
	return &regWriter{name: name, c: c, items: items, keys: keys, need: need, rng: rng,
		sent: map[string]regProposal{}, refused: map[string]bool{}, retries: map[string]int{}}
}

// halted reports whether the writer should stop quietly.
func (w *regWriter) halted(ctx context.Context) bool {
	return ctx.Err() != nil || (w.killed != nil && w.killed())
}

// run makes rounds until ctx ends or the node is killed; it returns the
// first unexpected answer of a live node.
func (w *regWriter) run(ctx context.Context) error {
	for !w.halted(ctx) {
		if _, err := w.round(ctx); err != nil {
			if w.halted(ctx) {
				return nil
			}
			return err
		}
	}
	return nil
}

// commitN makes rounds until n more commits were acknowledged.
func (w *regWriter) commitN(ctx context.Context, n int) error {
	for want := len(w.acks) + n; len(w.acks) < want; {
		if _, err := w.round(ctx); err != nil {
			return err
		}
	}
	return nil
}

// round proposes the set following HEAD, approves it and commits it. It
// reports whether the commit was acknowledged; losing a race for the
// version (409 chain_mismatch) ends the round without error.
func (w *regWriter) round(ctx context.Context) (bool, error) {
	var head registryapi.Head
	if err := w.retry(ctx, func() (err error) { head, err = w.c.Head(ctx); return err }); err != nil {
		return false, fmt.Errorf("%s: GET /registry/head: %w", w.name, err)
	}
	w.seq++
	p, payload, err := nextPayload(w.name, w.seq, w.rng.Uint32(), w.items, head)
	if err != nil {
		return false, err
	}
	if ok, err := w.propose(ctx, p, payload); !ok || err != nil {
		return false, err
	}
	if ok, err := w.approve(ctx, p); !ok || err != nil {
		return false, err
	}
	return w.commit(ctx, p)
}

// retry calls fn until it succeeds, fails for good, or the writer halts.
func (w *regWriter) retry(ctx context.Context, fn func() error) error {
	for {
		err := fn()
		if err == nil || !transient(err) || w.halted(ctx) {
			return err
		}
		w.retries[errCode(err)]++
		if !pause(ctx, regRetryEvery) {
			return err
		}
	}
}

// propose posts p; false when HEAD moved on (409 chain_mismatch).
func (w *regWriter) propose(ctx context.Context, p regProposal, payload []byte) (bool, error) {
	req := descriptor.ProposeRequest{SchemaVersion: "1.0.0", Payload: payload, PayloadB3: p.b3}
	var got registryapi.Proposed
	err := w.retry(ctx, func() (err error) { got, err = w.c.Propose(ctx, req); return err })
	switch {
	case err == nil && (got.ProposalID != p.id || got.PayloadB3 != p.b3):
		return false, fmt.Errorf("%s: POST /registry/proposals (version %d, %s): 202 %+v, want proposal_id %s", w.name, p.version, p.b3, got, p.id)
	case err == nil:
		return true, nil
	case isCode(err, http.StatusConflict, httpx.CodeChainMismatch):
		return false, nil
	}
	return false, fmt.Errorf("%s: POST /registry/proposals (version %d, %s): %w; want 202 or 409 chain_mismatch", w.name, p.version, p.b3, err)
}

// approve posts w.need approvals by randomly chosen keys; false when the
// proposal went stale. A 409 duplicate_approval is a retry that landed.
func (w *regWriter) approve(ctx context.Context, p regProposal) (bool, error) {
	var res registryapi.ApprovalResult
	for i, k := range w.rng.Perm(len(w.keys))[:w.need] {
		ap := descriptor.Sign(w.keys[k].priv, w.keys[k].id, p.b3, time.Now())
		err := w.retry(ctx, func() (err error) { res, err = w.c.Approve(ctx, p.id, ap); return err })
		switch {
		case err == nil && res.Approvals != i+1:
			return false, fmt.Errorf("%s: POST /registry/approvals/%s by %s: 200 %+v, want approvals %d", w.name, p.id, ap.SignerID, res, i+1)
		case err == nil, isCode(err, http.StatusConflict, httpx.CodeDuplicateApproval):
		case isCode(err, http.StatusConflict, httpx.CodeChainMismatch):
			return false, nil
		default:
			return false, fmt.Errorf("%s: POST /registry/approvals/%s by %s: %w; want 200, 409 duplicate_approval or chain_mismatch", w.name, p.id, ap.SignerID, err)
		}
	}
	return true, nil
}

// commit posts the commit of p, retrying transient answers (commit is
// idempotent); p stays in flight until a final answer arrives.
func (w *regWriter) commit(ctx context.Context, p regProposal) (bool, error) {
	w.sent[p.b3] = p
	w.inflight = &p
	var got registryapi.Committed
	err := w.retry(ctx, func() (err error) { got, err = w.c.Commit(ctx, p.id); return err })
	switch {
	case err == nil && (got.Version != p.version || got.PayloadB3 != p.b3):
		return false, fmt.Errorf("%s: POST /registry/commit/%s: 201 %+v, want version %d payload_b3 %s", w.name, p.id, got, p.version, p.b3)
	case err == nil:
		w.acks = append(w.acks, regAck{version: got.Version, b3: got.PayloadB3, committedAt: got.CommittedAt})
		w.inflight = nil
		return true, nil
	case isCode(err, http.StatusConflict, httpx.CodeChainMismatch):
		w.refused[p.b3] = true
		w.inflight = nil
		return false, nil
	}
	return false, fmt.Errorf("%s: POST /registry/commit/%s (version %d): %w; want 201 or 409 chain_mismatch", w.name, p.id, p.version, err)
}

// sseEvent is one registry.update event as the stream sent it.
type sseEvent struct {
	id     string
	update registryapi.Update
}

// sseConsumer reads one GET /registry/stream connection. Its goroutine
// (registry-e2e-sse) parses frames until the stream ends or close is
// called.
type sseConsumer struct {
	t      *testing.T
	mu     sync.Mutex
	events []sseEvent
	bad    []string // frames that are not well-formed registry.update events
	ended  error    // why the stream ended (set before done closes)
	done   chan struct{}
	cancel context.CancelFunc
}

// sseHTTP is the streams' client: no overall timeout (a stream is long),
// its own transport so the test can release it.
var sseHTTP = &http.Client{Transport: &http.Transport{DisableCompression: true}}

// openStream opens GET /registry/stream{query} with Last-Event-ID lastID
// ("" = none), checks the 200 text/event-stream answer and its first
// frame ("retry: 2000"), and starts reading.
func openStream(t *testing.T, n *node, lastID, query string) *sseConsumer {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, n.regBaseURL()+"/registry/stream"+query, nil)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	req.Header.Set("Accept", "text/event-stream")
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	resp, err := sseHTTP.Do(req)
	if err != nil {
		cancel()
		t.Fatalf("GET /registry/stream%s (Last-Event-ID %q): %v", query, lastID, err)
	}
	if ct := resp.Header.Get("Content-Type"); resp.StatusCode != http.StatusOK || !strings.HasPrefix(ct, "text/event-stream") {
		resp.Body.Close()
		cancel()
		t.Fatalf("GET /registry/stream: %d %q, want 200 text/event-stream", resp.StatusCode, ct)
	}
	s := &sseConsumer{t: t, done: make(chan struct{}), cancel: cancel}
	sc := bufio.NewScanner(resp.Body)
	if !sc.Scan() || sc.Text() != "retry: 2000" {
		resp.Body.Close()
		cancel()
		t.Fatalf("stream's first line %q (%v), want \"retry: 2000\"", sc.Text(), sc.Err())
	}
	go s.read(resp.Body, sc) // registry-e2e-sse: ends with the stream or close
	t.Cleanup(s.close)
	return s
}

// read parses frames until the stream ends.
func (s *sseConsumer) read(body io.ReadCloser, sc *bufio.Scanner) {
	defer close(s.done)
	defer body.Close()
	var id, event, data string
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if id != "" || event != "" || data != "" {
				s.frame(id, event, data)
			}
			id, event, data = "", "", ""
		case strings.HasPrefix(line, ":"): // heartbeat or skipped range
		case strings.HasPrefix(line, "id: "):
			id = strings.TrimPrefix(line, "id: ")
		case strings.HasPrefix(line, "event: "):
			event = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			data += strings.TrimPrefix(line, "data: ")
		default:
			s.mu.Lock()
			s.bad = append(s.bad, "unknown line "+strconv.Quote(line))
			s.mu.Unlock()
		}
	}
	s.mu.Lock()
	s.ended = sc.Err()
	s.mu.Unlock()
}

// frame records one complete event.
func (s *sseConsumer) frame(id, event, data string) {
	var u registryapi.Update
	err := json.Unmarshal([]byte(data), &u)
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil || event != "registry.update" || id != strconv.FormatUint(u.Version, 10) {
		s.bad = append(s.bad, fmt.Sprintf("id %q event %q data %q", id, event, data))
		return
	}
	s.events = append(s.events, sseEvent{id: id, update: u})
}

// seen returns a copy of the events so far and the malformed frames.
func (s *sseConsumer) seen() ([]sseEvent, []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.events), slices.Clone(s.bad)
}

// waitVersion polls until the consumer has seen version v.
func (s *sseConsumer) waitVersion(v uint64) {
	s.t.Helper()
	ok := pollUntil(regStreamLimit, func() bool {
		ev, _ := s.seen()
		return len(ev) > 0 && ev[len(ev)-1].update.Version >= v
	})
	if !ok {
		ev, bad := s.seen()
		s.t.Fatalf("stream consumer did not see version %d within %s: %d events %v, malformed %q", v, regStreamLimit, len(ev), versionsOf(ev), bad)
	}
}

// waitEnd waits for the stream to end on its own (the node died).
func (s *sseConsumer) waitEnd() {
	s.t.Helper()
	tm := time.NewTimer(regStreamLimit)
	defer tm.Stop()
	select {
	case <-s.done:
	case <-tm.C:
		s.t.Fatalf("stream still open %s after the node was killed", regStreamLimit)
	}
}

// close ends the stream and waits for the reader.
func (s *sseConsumer) close() {
	s.cancel()
	<-s.done
	sseHTTP.CloseIdleConnections()
}

// versionsOf lists the events' versions.
func versionsOf(ev []sseEvent) []uint64 {
	out := make([]uint64, len(ev))
	for i, e := range ev {
		out[i] = e.update.Version
	}
	return out
}

// checkStream checks that events are exactly versions from..to in order,
// each matching GET /registry/{v} (payload_b3, committed_at).
func checkStream(t *testing.T, c registryapi.Client, what string, events []sseEvent, from, to uint64) {
	t.Helper()
	if uint64(len(events)) != to-from+1 {
		t.Errorf("%s: versions %v, want %d..%d without a gap", what, versionsOf(events), from, to)
		return
	}
	for i, e := range events {
		want := from + uint64(i)
		if e.update.Version != want {
			t.Errorf("%s: event %d is version %d, want %d (versions %v)", what, i, e.update.Version, want, versionsOf(events))
			return
		}
		art := regGet(t, c, want)
		if e.update.PayloadB3 != art.PayloadB3 || e.update.CommittedAt != art.CommittedAt {
			t.Errorf("%s: event %+v, GET /registry/%d has payload_b3 %s committed_at %s", what, e.update, want, art.PayloadB3, art.CommittedAt)
		}
	}
}
