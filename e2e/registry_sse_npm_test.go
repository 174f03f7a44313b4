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
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ronhq/ron/httpx/client"
	"github.com/ronhq/ron/internal/tooltest"
	"github.com/ronhq/ron/roles/registry/registryapi"
	"github.com/ronhq/ron/roles/registry/registryapi/descriptor"
	"github.com/ronhq/ron/roles/registry/regstore"
)

// Limits of the npm EventSource test. They bound polls and waits; a healthy
// run meets each in a few seconds at most.
const (
	// npmSSERunLimit is the node client's own timeout (--timeout-ms) for the
	// whole run; the process is killed a little after it.
	npmSSERunLimit = 90 * time.Second
	// npmSSEEventLimit bounds the client seeing a version, including a
	// reconnect after the restart: retry 2 s, then Last-Event-ID replay.
	npmSSEEventLimit = 20 * time.Second
	// npmWriteReadyLimit bounds start or restart → /registry/status
	// write_ready.
	npmWriteReadyLimit = 20 * time.Second
	// npmCommitLimit bounds one phase of commits.
	npmCommitLimit = 30 * time.Second
	// npmInstallCmd installs the Node modules the test runs.
	npmInstallCmd = "npm ci --prefix scripts/node"
)

// TestRegistrySSENpmEventSource: a real WHATWG client (npm eventsource,
// scripts/node/sse-client.mjs) follows /registry/stream while versions are
// committed, the node is killed with SIGKILL mid-stream and restarted on
// the same ports and data dir, and more versions are committed. The
// client, reconnecting on its own after the server's `retry: 2000` with
// Last-Event-ID, sees every version from genesis to the last exactly once,
// in order, each with the payload_b3 GET /registry/{v} serves
// (docs/registry.md §2).
func TestRegistrySSENpmEventSource(t *testing.T) {
	script := npmScript(t, "sse-client.mjs", "eventsource")
	const (
		killAt = 5  // kill once the client has seen this version
		cap1   = 20 // the writer never commits beyond it before the kill
		final  = 30 // HEAD at the end; the client exits after final+1 events
	)
	n := startNode(t, nodeOpts{args: []string{"--roles", "registry"}})
	npmWaitWriteReady(t, n)
	es := startNpmSSE(t, script, "http://"+n.registry, final+1)
	es.waitVersion(t, 0)
	w := newNpmWriter(t, n)

	acked := w.commitUntilKilled(t, n, es, killAt, cap1)
	n2 := n.restart()
	npmWaitWriteReady(t, n2)
	w.checkAcked(t, acked)
	w.commitThrough(t, final)
	if code := es.wait(t); code != 0 {
		t.Fatalf("sse-client.mjs exited %d, want 0 after %d events; stderr:\n%s", code, final+1, es.stderr.String())
	}
	events := es.seen(t)
	checkNpmEvents(t, w, events, final)
	if opens := strings.Count(es.stderr.String(), "sse-client: open"); opens < 2 {
		t.Errorf("the client opened the stream %d times, want ≥ 2 (one reconnect across the restart):\n%s", opens, es.stderr.String())
	}
}

// checkNpmEvents wants versions 0…final exactly once, in order, each event
// id equal to its version and each payload_b3 equal to GET /registry/{v}'s.
func checkNpmEvents(t *testing.T, w *npmWriter, events []npmSSEEvent, final uint64) {
	t.Helper()
	if len(events) != int(final)+1 {
		t.Errorf("the client saw %d events, want %d (versions 0…%d): %v", len(events), final+1, final, npmVersions(events))
	}
	for i, ev := range events {
		if ev.Version != uint64(i) || ev.ID != strconv.FormatUint(ev.Version, 10) {
			t.Fatalf("event %d: id %q version %d, want version %d exactly once in order: %v", i, ev.ID, ev.Version, i, npmVersions(events))
		}
		if want := w.get(t, ev.Version).PayloadB3; ev.PayloadB3 != want {
			t.Errorf("version %d: event payload_b3 %s, GET /registry/%d has %s", ev.Version, ev.PayloadB3, ev.Version, want)
		}
	}
}

func npmVersions(events []npmSSEEvent) []uint64 {
	out := make([]uint64, len(events))
	for i, ev := range events {
		out[i] = ev.Version
	}
	return out
}

// npmScript returns the absolute path of scripts/node/<name>, skipping the
// test when node or the npm module it needs is not installed.
func npmScript(t *testing.T, name, module string) string {
	t.Helper()
	if _, err := exec.LookPath("node"); err != nil {
		tooltest.Missing(t, "node is not on PATH (Node.js 18+, then %s)", npmInstallCmd)
	}
	dir, err := filepath.Abs(filepath.Join("..", "scripts", "node"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", module)); err != nil {
		tooltest.Missing(t, "npm module %s is not installed: run %s", module, npmInstallCmd)
	}
	return filepath.Join(dir, name)
}

// npmWaitWriteReady polls GET /registry/status until write_ready.
func npmWaitWriteReady(t *testing.T, n *node) {
	t.Helper()
	var last string
	ok := pollUntil(npmWriteReadyLimit, func() bool {
		var st registryapi.Status
		r, err := httpClient.Get("http://" + n.registry + "/registry/status")
		if err != nil {
			last = err.Error()
			return false
		}
		defer r.Body.Close()
		if err := json.NewDecoder(r.Body).Decode(&st); err != nil {
			last = fmt.Sprintf("%d: %v", r.StatusCode, err)
			return false
		}
		last = fmt.Sprintf("%d %+v", r.StatusCode, st)
		return st.WriteReady
	})
	if !ok {
		t.Fatalf("registry not write-ready after %s; last /registry/status: %s", npmWriteReadyLimit, last)
	}
}

// npmSSEEvent is one line sse-client.mjs prints.
type npmSSEEvent struct {
	ID        string `json:"id"`
	Version   uint64 `json:"version"`
	PayloadB3 string `json:"payload_b3"`
}

// npmSSE is one running sse-client.mjs: its stdout lines, collected by a
// reader goroutine that ends when the process closes stdout.
type npmSSE struct {
	cmd    *exec.Cmd
	stderr *lockedBuffer
	done   chan struct{} // closed when stdout reached EOF

	mu    sync.Mutex
	lines []string

	waitOnce sync.Once
	code     int
	waitErr  error
}

// startNpmSSE starts `node script base --count count --timeout-ms …`; the
// process is killed at test end if still running.
func startNpmSSE(t *testing.T, script, base string, count int) *npmSSE {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), npmSSERunLimit+exitLimit)
	s := &npmSSE{stderr: &lockedBuffer{}, done: make(chan struct{})}
	s.cmd = exec.CommandContext(ctx, "node", script, base, "--count", strconv.Itoa(count),
		"--timeout-ms", strconv.FormatInt(npmSSERunLimit.Milliseconds(), 10))
	s.cmd.Env = cleanEnv()
	s.cmd.Stderr = s.stderr
	out, err := s.cmd.StdoutPipe()
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	if err := s.cmd.Start(); err != nil {
		cancel()
		t.Fatalf("start node %s: %v", script, err)
	}
	go s.read(out) // sse-client reader: ends at the process's EOF
	t.Cleanup(func() {
		cancel()
		s.reap()
		if t.Failed() {
			t.Logf("---- sse-client.mjs stderr ----\n%s---- end ----", s.stderr.String())
		}
	})
	return s
}

// read collects stdout lines until EOF.
func (s *npmSSE) read(out io.Reader) {
	defer close(s.done)
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		s.mu.Lock()
		s.lines = append(s.lines, sc.Text())
		s.mu.Unlock()
	}
}

// reap waits for the reader and the process once; it returns the exit code.
func (s *npmSSE) reap() int {
	s.waitOnce.Do(func() {
		<-s.done
		err := s.cmd.Wait()
		var ee *exec.ExitError
		switch {
		case errors.As(err, &ee):
			s.code = ee.ExitCode()
		case err != nil:
			s.code, s.waitErr = -1, err
		}
	})
	return s.code
}

// wait waits up to npmSSEEventLimit for the client to exit and returns its
// exit code.
func (s *npmSSE) wait(t *testing.T) int {
	t.Helper()
	tm := time.NewTimer(npmSSEEventLimit)
	defer tm.Stop()
	select {
	case <-s.done:
	case <-tm.C:
		t.Fatalf("sse-client.mjs still running %s after the last commit; saw %v", npmSSEEventLimit, npmVersions(s.seen(t)))
	}
	code := s.reap()
	if s.waitErr != nil {
		t.Fatalf("sse-client.mjs: %v", s.waitErr)
	}
	return code
}

// seen parses the lines printed so far.
func (s *npmSSE) seen(t *testing.T) []npmSSEEvent {
	t.Helper()
	s.mu.Lock()
	lines := slices.Clone(s.lines)
	s.mu.Unlock()
	out := make([]npmSSEEvent, 0, len(lines))
	for _, l := range lines {
		var ev npmSSEEvent
		if err := json.Unmarshal([]byte(l), &ev); err != nil {
			t.Fatalf("sse-client.mjs printed %q: %v", l, err)
		}
		out = append(out, ev)
	}
	return out
}

// has reports whether the client printed version v.
func (s *npmSSE) has(t *testing.T, v uint64) bool {
	return slices.Contains(npmVersions(s.seen(t)), v)
}

// waitVersion polls until the client printed version v.
func (s *npmSSE) waitVersion(t *testing.T, v uint64) {
	t.Helper()
	poll(t, npmSSEEventLimit, fmt.Sprintf("sse-client.mjs to print version %d", v), func() bool { return s.has(t, v) })
}

// npmWriter commits versions with the dev signer: propose the set after
// HEAD (genesis's items plus one service item), approve, commit.
type npmWriter struct {
	c     *registryapi.HTTPClient
	id    string
	key   ed25519.PrivateKey
	items []json.RawMessage
	seq   atomic.Int64
}

// newNpmWriter reads n's dev signer key and genesis items. Its client
// makes one attempt per call and its breaker never opens, so the restarted
// node (same address) is used at once.
func newNpmWriter(t *testing.T, n *node) *npmWriter {
	t.Helper()
	tok := n.token("registry:propose,registry:approve,registry:commit")
	never := func(client.Counts) bool { return false }
	w := &npmWriter{c: registryapi.NewHTTPClient("http://"+n.registry, func(context.Context) (string, error) { return tok, nil },
		client.Options{Role: "e2e", Retries: -1, Breaker: client.BreakerOptions{Trip: never}})}
	t.Cleanup(w.c.Close)
	w.id, w.key = npmDevSigner(t, n)
	var p struct {
		Items []json.RawMessage `json:"items"`
	}
	if err := json.Unmarshal(w.get(t, 0).Payload, &p); err != nil || len(p.Items) == 0 {
		t.Fatalf("genesis items: %v (%d items)", err, len(p.Items))
	}
	w.items = p.Items
	return w
}

// npmDevSigner reads <data>/keys/registry-dev-signer.key.
func npmDevSigner(t *testing.T, n *node) (string, ed25519.PrivateKey) {
	t.Helper()
	raw, err := os.ReadFile(regstore.DevSignerPath(n.dataDir))
	if err != nil {
		t.Fatalf("dev signer key: %v", err)
	}
	var f struct {
		ID         string `json:"id"`
		Pubkey     string `json:"pubkey"`
		PrivateKey string `json:"private_key"`
	}
	if err := json.Unmarshal(raw, &f); err != nil {
		t.Fatalf("dev signer key: %v", err)
	}
	seed, err := base64.StdEncoding.DecodeString(f.PrivateKey)
	if err != nil || len(seed) != ed25519.SeedSize {
		t.Fatalf("dev signer key: private_key is not a base64 seed (%v)", err)
	}
	key := ed25519.NewKeyFromSeed(seed)
	if base64.StdEncoding.EncodeToString(key.Public().(ed25519.PublicKey)) != f.Pubkey {
		t.Fatal("dev signer key: pubkey does not match private_key")
	}
	return f.ID, key
}

// get fetches version v (the client checks it hashes to its payload_b3).
func (w *npmWriter) get(t *testing.T, v uint64) descriptor.Artifact {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), npmCommitLimit)
	defer cancel()
	art, _, err := w.c.Get(ctx, v)
	if err != nil {
		t.Fatalf("GET /registry/%d: %v", v, err)
	}
	return art
}

// commitNext proposes, approves and commits the set following HEAD.
func (w *npmWriter) commitNext(ctx context.Context) (registryapi.Committed, error) {
	head, err := w.c.Head(ctx)
	if err != nil {
		return registryapi.Committed{}, err
	}
	payload, b3, err := w.nextPayload(head)
	if err != nil {
		return registryapi.Committed{}, err
	}
	p, err := w.c.Propose(ctx, descriptor.ProposeRequest{SchemaVersion: "1.0.0", Payload: payload, PayloadB3: b3})
	if err != nil {
		return registryapi.Committed{}, fmt.Errorf("propose version %d: %w", head.Version+1, err)
	}
	if _, err := w.c.Approve(ctx, p.ProposalID, descriptor.Sign(w.key, w.id, b3, time.Now())); err != nil {
		return registryapi.Committed{}, fmt.Errorf("approve %s: %w", p.ProposalID, err)
	}
	c, err := w.c.Commit(ctx, p.ProposalID)
	if err == nil && (c.Version != head.Version+1 || c.PayloadB3 != b3) {
		err = fmt.Errorf("commit %s: 201 %+v, want version %d payload_b3 %s", p.ProposalID, c, head.Version+1, b3)
	}
	return c, err
}

// nextPayload is the canonical set following head and its payload_b3.
func (w *npmWriter) nextPayload(head registryapi.Head) ([]byte, string, error) {
	seq := w.seq.Add(1)
	svc, err := json.Marshal(map[string]any{"kind": "service", "id": "npm-sse", "seq": seq})
	if err != nil {
		return nil, "", err
	}
	raw, err := json.Marshal(map[string]any{"version": head.Version + 1, "prev_hash": head.PayloadB3,
		"created_at": time.Now().UTC().Format(time.RFC3339Nano), "items": append(slices.Clip(w.items), svc),
		"note": fmt.Sprintf("npm eventsource e2e round %d", seq)})
	if err != nil {
		return nil, "", err
	}
	canonical, err := descriptor.Canonicalize(raw)
	if err != nil {
		return nil, "", err
	}
	return canonical, descriptor.PayloadB3(canonical), nil
}

// commitUntilKilled commits in a background loop (never beyond version
// maxVersion) and kills n with SIGKILL as soon as the client has printed
// version killAt, so the kill lands mid-stream and usually mid-commit. It
// returns the commits acknowledged with 201 before the kill.
func (w *npmWriter) commitUntilKilled(t *testing.T, n *node, es *npmSSE, killAt, maxVersion uint64) []registryapi.Committed {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), npmCommitLimit)
	defer cancel()
	var killed atomic.Bool
	done := make(chan struct{})
	var acks []registryapi.Committed
	var loopErr error
	go func() { // npm-writer: ends at maxVersion, on the first error, or at ctx's end
		defer close(done)
		for len(acks) == 0 || acks[len(acks)-1].Version < maxVersion {
			c, err := w.commitNext(ctx)
			if err != nil {
				if !killed.Load() {
					loopErr = err
				}
				return
			}
			acks = append(acks, c)
		}
	}()
	poll(t, npmSSEEventLimit, fmt.Sprintf("sse-client.mjs to print version %d", killAt), func() bool {
		return es.has(t, killAt) || npmClosed(done)
	})
	killed.Store(true)
	n.kill9()
	<-done // bounded by ctx: every call of the loop carries it
	if loopErr != nil {
		t.Fatalf("writer before the kill: %v", loopErr)
	}
	if len(acks) < int(killAt) {
		t.Fatalf("writer ended with %d commits before the client saw version %d", len(acks), killAt)
	}
	t.Logf("killed with %d commits acknowledged (last version %d)", len(acks), acks[len(acks)-1].Version)
	return acks
}

func npmClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// checkAcked wants every commit acknowledged before the kill present after
// the restart with the same payload_b3.
func (w *npmWriter) checkAcked(t *testing.T, acked []registryapi.Committed) {
	t.Helper()
	for _, a := range acked {
		if got := w.get(t, a.Version).PayloadB3; got != a.PayloadB3 {
			t.Fatalf("version %d after the restart: payload_b3 %s, acknowledged %s", a.Version, got, a.PayloadB3)
		}
	}
}

// commitThrough commits until HEAD is final; HEAD must be below it first.
func (w *npmWriter) commitThrough(t *testing.T, final uint64) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), npmCommitLimit)
	defer cancel()
	head, err := w.c.Head(ctx)
	if err != nil {
		t.Fatalf("GET /registry/head after the restart: %v", err)
	}
	if head.Version >= final {
		t.Fatalf("HEAD %d after the restart, want < %d", head.Version, final)
	}
	t.Logf("HEAD %d after the restart; committing through %d", head.Version, final)
	for v := head.Version; v < final; v++ {
		if _, err := w.commitNext(ctx); err != nil {
			t.Fatalf("commit after the restart (HEAD %d): %v", v, err)
		}
	}
}
