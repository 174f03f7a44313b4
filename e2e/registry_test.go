package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gowebpki/jcs"

	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/roles/registry/registryapi"
	"github.com/ronhq/ron/roles/registry/registryapi/descriptor"
)

// Shape of TestRegistryKill9 (docs/registry.md §10): kill -9 at 20 random
// moments during a commit storm from 8 concurrent clients.
const (
	killCycles   = 20
	killWriters  = 8
	killMinDelay = 500 * time.Millisecond
	killMaxDelay = 3 * time.Second
)

// testSeed is E2E_REGISTRY_SEED when set (to replay a run), else the clock.
func testSeed(t *testing.T) uint64 {
	t.Helper()
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("E2E_REGISTRY_SEED"); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("E2E_REGISTRY_SEED=%q: %v", s, err)
		}
		seed = v
	}
	t.Logf("seed %d (replay with E2E_REGISTRY_SEED=%d)", seed, seed)
	return seed
}

// TestRegistryKill9: with M=2 of N=3 trust roots, killWriters writers
// propose, approve and commit while the node is SIGKILLed at a random moment
// and restarted, killCycles times. After every restart each
// 201-acknowledged commit is present unchanged, HEAD is at least the last one, every other version was
// a commit in flight (whose retry now answers that 201), the independent
// verifier passes with the pinned log key, and the checkpoint covers HEAD.
func TestRegistryKill9(t *testing.T) {
	t.Parallel()
	start := time.Now()
	seed := testSeed(t)
	w := newKillWorld(t, seed)
	defer w.c.Close()
	for i := range killCycles {
		w.cycle(i)
		if t.Failed() {
			t.Fatalf("cycle %d failed (seed %d)", i, seed)
		}
	}
	if len(w.acked) < killCycles {
		t.Errorf("%d commits acknowledged in %d cycles: the writers barely progressed", len(w.acked), killCycles)
	}
	w.initRefusedWhileRunning()
	t.Logf("%d cycles: HEAD %d, %d commits acknowledged, %d in-flight commits resolved after restarts, %s",
		killCycles, w.checked, len(w.acked), w.resolved, time.Since(start).Round(time.Millisecond))
}

// killWorld is TestRegistryKill9's node, writers and bookkeeping.
type killWorld struct {
	t       *testing.T
	n       *node
	c       *registryapi.HTTPClient
	vkey    string // the log's note verifier key, from init
	writers []*regWriter
	killed  atomic.Bool
	rng     *rand.Rand // the kill schedule
	// acked holds every commit acknowledged with 201, by version.
	acked map[uint64]regAck
	// checked is the highest version matched to a proposal so far.
	checked  uint64
	resolved int    // in-flight commits found in the log after a restart
	trust    string // the trust-roots file
}

// newKillWorld makes three keys with `ron registry keygen`, the trust
// roots (m=2), runs `ron registry init` on a fresh data dir and starts the
// registry role alone on fixed ports.
func newKillWorld(t *testing.T, seed uint64) *killWorld {
	t.Helper()
	keyDir := t.TempDir()
	var keys []regKey
	for i := 1; i <= 3; i++ {
		keys = append(keys, keygen(t, keyDir, fmt.Sprintf("org:e2e#k%d", i)))
	}
	trust := writeTrustRoots(t, keyDir, keys, 2)
	data := t.TempDir()
	genesisB3, vkey := registryInit(t, data, trust)
	n := startNode(t, nodeOpts{dataDir: data, ports: freePorts(t), args: []string{"--roles", "registry"}})
	w := &killWorld{t: t, n: n, vkey: vkey, acked: map[uint64]regAck{}, trust: trust}
	w.c = regClient(n, n.token(regScopes))
	st := waitWriteReady(t, n)
	if st.Head.Version != 0 || st.Head.PayloadB3 != genesisB3 || st.Quorum != (registryapi.Quorum{M: 2, N: 3}) || st.DevSigner {
		t.Fatalf("fresh registry: status %+v, want HEAD 0 = %s, quorum 2 of 3, no dev signer", st, genesisB3)
	}
	if key := do(t, http.MethodGet, n.regBaseURL()+"/registry/log/key", nil, nil); strings.TrimSpace(string(key.body)) != vkey {
		t.Fatalf("GET /registry/log/key: %d %q, want the verifier key init printed, %q", key.status, key.body, vkey)
	}
	items := baseItems(t, w.c)
	for i := range killWriters {
		wr := newRegWriter(fmt.Sprintf("e2e-writer-%d", i), w.c, items, keys, 2, newRand(seed, i))
		wr.killed = w.killed.Load
		w.writers = append(w.writers, wr)
	}
	w.rng = newRand(seed, killWriters)
	return w
}

// cycle runs the writers until a random SIGKILL, restarts the node on the
// same data dir and ports, and checks what survived.
func (w *killWorld) cycle(i int) {
	w.t.Helper()
	w.killed.Store(false)
	ctx, cancel := context.WithCancel(context.Background())
	errs := make([]error, len(w.writers))
	var wg sync.WaitGroup
	defer wg.Wait() // after cancel, also when the cycle fails early
	defer cancel()
	for j, wr := range w.writers {
		wg.Go(func() { errs[j] = wr.run(ctx) }) // e2e-writer-j: ends after the kill
	}
	delay := killMinDelay + time.Duration(w.rng.Int64N(int64(killMaxDelay-killMinDelay)))
	// The one deliberate wait of this test: the SIGKILL must land at a
	// random point of the writers' work.
	tm := time.NewTimer(delay)
	<-tm.C
	w.killed.Store(true)
	w.n.kill9()
	cancel()
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			w.t.Errorf("cycle %d: %v", i, err)
		}
	}
	before := len(w.acked)
	w.n = w.n.restart()
	w.check(i)
	w.t.Logf("cycle %d: killed after %s; %d new acknowledged commits; HEAD %d; recoveries %s; retried %v", i,
		delay.Round(time.Millisecond), len(w.acked)-before, w.checked, w.recoveries(), w.takeRetries())
}

// takeRetries sums and resets the writers' retry counts.
func (w *killWorld) takeRetries() map[string]int {
	sum := map[string]int{}
	for _, wr := range w.writers {
		for k, v := range wr.retries {
			sum[k] += v
		}
		clear(wr.retries)
	}
	return sum
}

// recoveries describes ron_registry_recoveries_total of the running node.
func (w *killWorld) recoveries() string {
	var parts []string
	for _, kind := range []string{"clean", "torn_tail", "roll_forward"} {
		if v := w.n.metric("ron_registry_recoveries_total", `kind="`+kind+`"`); v > 0 {
			parts = append(parts, fmt.Sprintf("%s=%v", kind, v))
		}
	}
	return strings.Join(parts, ",")
}

// check runs the docs/registry.md §10 checks after a restart.
func (w *killWorld) check(cycle int) {
	w.t.Helper()
	waitWriteReady(w.t, w.n)
	maxAck := w.collectAcks(cycle)
	head := regHead(w.t, w.c)
	if head.Version < maxAck {
		w.t.Errorf("cycle %d: HEAD %d after restart is below the last acknowledged commit %d", cycle, head.Version, maxAck)
	}
	w.checkAcked(cycle)
	w.checkNewVersions(cycle, head.Version)
	w.resolveInflight(cycle, head.Version)
	w.checked = head.Version
	waitCheckpointCovers(w.t, w.n, head.Version)
	w.verifyCLI(cycle, head.Version)
}

// collectAcks moves the writers' acknowledged commits into w.acked and
// returns the highest acknowledged version. Two different 201s for one
// version would be two artifacts at one version.
func (w *killWorld) collectAcks(cycle int) uint64 {
	w.t.Helper()
	for _, wr := range w.writers {
		for _, a := range wr.acks {
			if prev, ok := w.acked[a.version]; ok && prev.b3 != a.b3 {
				w.t.Errorf("cycle %d: version %d acknowledged twice: %s and %s", cycle, a.version, prev.b3, a.b3)
			}
			w.acked[a.version] = a
		}
		wr.acks = nil
	}
	var maxAck uint64
	for v := range w.acked {
		maxAck = max(maxAck, v)
	}
	return maxAck
}

// checkAcked: every acknowledged commit is present with the same
// payload_b3 and committed_at. Four goroutines (e2e-acked-check) share the
// GETs; each ends when the list does.
func (w *killWorld) checkAcked(cycle int) {
	w.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), cliLimit)
	defer cancel()
	todo := make(chan regAck, len(w.acked))
	for _, a := range w.acked {
		todo <- a
	}
	close(todo)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for a := range todo {
				if err := checkAck(ctx, w.c, a); err != nil {
					w.t.Errorf("cycle %d: %v", cycle, err)
				}
			}
		})
	}
	wg.Wait()
}

// checkAck compares GET /registry/{v} with a 201 answer.
func checkAck(ctx context.Context, c registryapi.Client, a regAck) error {
	art, _, err := c.Get(ctx, a.version)
	switch {
	case err != nil:
		return fmt.Errorf("GET /registry/%d (acknowledged %s): %w", a.version, a.b3, err)
	case art.PayloadB3 != a.b3 || art.CommittedAt != a.committedAt:
		return fmt.Errorf("GET /registry/%d: payload_b3 %s committed_at %s, but the 201 said %s at %s",
			a.version, art.PayloadB3, art.CommittedAt, a.b3, a.committedAt)
	}
	return nil
}

// checkNewVersions matches every version above the last checked one to a
// proposal whose commit a writer sent: acknowledged, or still in flight
// when the node died. A commit answered 409 must never be in the log.
func (w *killWorld) checkNewVersions(cycle int, head uint64) {
	w.t.Helper()
	for v := w.checked + 1; v <= head; v++ {
		art := regGet(w.t, w.c, v)
		wr, p, ok := w.sender(art.PayloadB3)
		switch {
		case !ok:
			w.t.Errorf("cycle %d: version %d holds %s, which no writer sent a commit for", cycle, v, art.PayloadB3)
		case p.version != v:
			w.t.Errorf("cycle %d: version %d holds %s, proposed for version %d", cycle, v, p.b3, p.version)
		case wr.refused[p.b3]:
			w.t.Errorf("cycle %d: version %d holds %s (%s), whose commit was answered 409 chain_mismatch", cycle, v, p.b3, p.id)
		case w.acked[v].b3 != p.b3 && (wr.inflight == nil || wr.inflight.b3 != p.b3):
			w.t.Errorf("cycle %d: version %d (%s) was neither acknowledged nor in flight", cycle, v, p.b3)
		}
	}
}

// sender finds the writer that sent the commit of the proposal b3.
func (w *killWorld) sender(b3 string) (*regWriter, regProposal, bool) {
	for _, wr := range w.writers {
		if p, ok := wr.sent[b3]; ok {
			return wr, p, true
		}
	}
	return nil, regProposal{}, false
}

// resolveInflight retries every commit that was in flight at the kill: one
// that landed answers the same 201 and its proposal reads committed; one
// whose version another set took answers 409 chain_mismatch; one for
// HEAD+1 that did not land is left open.
func (w *killWorld) resolveInflight(cycle int, head uint64) {
	w.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), cliLimit)
	defer cancel()
	for _, wr := range w.writers {
		p := wr.inflight
		wr.inflight = nil
		if p == nil {
			continue
		}
		if p.version > head {
			w.t.Logf("cycle %d: %s's commit of %s for version %d did not land; left open", cycle, wr.name, p.id, p.version)
			continue
		}
		art := regGet(w.t, w.c, p.version)
		got, err := w.c.Commit(ctx, p.id)
		if art.PayloadB3 != p.b3 {
			if !isCode(err, http.StatusConflict, httpx.CodeChainMismatch) {
				w.t.Errorf("cycle %d: retried commit of %s (version %d, taken by %s): %+v %v, want 409 chain_mismatch",
					cycle, p.id, p.version, art.PayloadB3, got, err)
			}
			continue
		}
		w.resolved++
		if err != nil || got.Version != p.version || got.PayloadB3 != p.b3 || got.CommittedAt != art.CommittedAt {
			w.t.Errorf("cycle %d: retried commit of %s, found at version %d: %+v %v, want 201 {%d %s %s}",
				cycle, p.id, p.version, got, err, p.version, p.b3, art.CommittedAt)
			continue
		}
		w.acked[p.version] = regAck{version: p.version, b3: p.b3, committedAt: got.CommittedAt}
		w.checkCommittedProposal(ctx, cycle, *p)
	}
}

// checkCommittedProposal: a proposal recovery rolled forward reads committed.
func (w *killWorld) checkCommittedProposal(ctx context.Context, cycle int, p regProposal) {
	w.t.Helper()
	pr, err := w.c.Proposal(ctx, p.id)
	if err != nil || pr.Status != "committed" || pr.CommittedVersion == nil || *pr.CommittedVersion != p.version {
		w.t.Errorf("cycle %d: GET /registry/proposals/%s after its commit landed: %+v %v, want committed at %d",
			cycle, p.id, pr, err, p.version)
	}
}

// verifyCLI runs `ron registry verify URL --log-key VKEY`.
func (w *killWorld) verifyCLI(cycle int, head uint64) {
	w.t.Helper()
	res := ron(w.t, cliOpts{}, "registry", "verify", w.n.regBaseURL(), "--log-key", w.vkey)
	want := fmt.Sprintf("size %d ", head+1)
	if res.code != 0 || !strings.HasPrefix(res.stdout, "ok ") || !strings.Contains(res.stdout, want) {
		w.t.Errorf("cycle %d: ron registry verify --log-key: exit %d, stdout %q, want ok with %q\nstderr: %s",
			cycle, res.code, res.stdout, want, res.stderr)
	}
}

// initRefusedWhileRunning: `ron registry init` on the running node's data
// dir refuses (a log exists, the store is locked) and changes nothing.
func (w *killWorld) initRefusedWhileRunning() {
	w.t.Helper()
	res := ron(w.t, cliOpts{}, "registry", "init", "--trust-roots", w.trust, "--data-dir", w.n.dataDir)
	if res.code != 1 || !strings.HasPrefix(res.stderr, "error: ") {
		w.t.Errorf("ron registry init on a live registry: exit %d, stderr %q, want 1 and an error line", res.code, res.stderr)
	}
	if h := regHead(w.t, w.c); h.Version != w.checked {
		w.t.Errorf("HEAD %d after the refused init, want %d", h.Version, w.checked)
	}
}

// TestRegistryStreamAcrossRestart: a consumer of GET /registry/stream sees
// HEAD first, then every commit live; when the node is SIGKILLed its
// stream ends, and reconnecting with Last-Event-ID after the restart
// replays the versions committed meanwhile, then goes live again. Together
// the two connections see strictly increasing versions with no gap, each
// matching GET /registry/{v}; a replay with ?since= carries the same events
// (corr_id included); registryapi.HTTPClient.Watch rides the restart on its own.
func TestRegistryStreamAcrossRestart(t *testing.T) {
	t.Parallel()
	n := startNode(t, nodeOpts{ports: freePorts(t), args: []string{"--roles", "registry"}})
	c := regClient(n, n.token(regScopes))
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), regCommitLimit)
	defer cancel()
	wr := newRegWriter("e2e-stream", c, baseItems(t, c), []regKey{devSignerKey(t, n)}, 1, newRand(testSeed(t), 0))
	commit := func(k int) uint64 {
		t.Helper()
		if err := wr.commitN(ctx, k); err != nil {
			t.Fatal(err)
		}
		return regHead(t, c).Version
	}

	first := commit(3)
	live := openStream(t, n, "", "")
	live.waitVersion(first)
	watch := startWatch(t, c, first)
	live.waitVersion(commit(4))
	n.kill9()
	live.waitEnd()

	n = n.restart()
	waitWriteReady(t, n)
	commit(4) // while no stream is open
	ev, _ := live.seen()
	resumed := openStream(t, n, ev[len(ev)-1].id, "?since=0") // the header wins over ?since
	last := commit(4)
	resumed.waitVersion(last)

	before, bad1 := live.seen()
	after, bad2 := resumed.seen()
	if len(bad1)+len(bad2) > 0 {
		t.Errorf("malformed stream frames: %q %q", bad1, bad2)
	}
	all := append(before, after...)
	checkStream(t, c, "stream across the restart", all, first, last)
	checkReplay(t, n, all, first, last)
	watch.wait(t, last)
	checkStream(t, c, "Watch across the restart", watch.events(), first+1, last)
	t.Logf("stream: versions %v before the kill, %v after the restart (resumed after %s)",
		versionsOf(before), versionsOf(after), before[len(before)-1].id)
}

// checkReplay: a fresh stream with ?since=first-1 replays first..last with
// the same events the live consumers saw, corr_id included.
func checkReplay(t *testing.T, n *node, want []sseEvent, first, last uint64) {
	t.Helper()
	replay := openStream(t, n, "", "?since="+strconv.FormatUint(first-1, 10))
	replay.waitVersion(last)
	replay.close()
	got, _ := replay.seen()
	if len(got) != len(want) {
		t.Fatalf("replay from %d: versions %v, want %v", first, versionsOf(got), versionsOf(want))
	}
	for i := range got {
		if got[i] != want[i] {
			t.Errorf("replayed event %+v, live it was %+v", got[i], want[i])
		}
		if got[i].update.CorrID == "" && got[i].update.Version > 0 {
			t.Errorf("replayed event %+v has no corr_id", got[i])
		}
	}
}

// watchConsumer collects a registryapi.Client Watch in its goroutine
// (registry-e2e-watch), which ends when the watch's channel closes.
type watchConsumer struct {
	mu     sync.Mutex
	got    []sseEvent
	cancel context.CancelFunc
	done   chan struct{}
}

// startWatch watches c after version since.
func startWatch(t *testing.T, c registryapi.Client, since uint64) *watchConsumer {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	ch, err := c.Watch(ctx, &since)
	if err != nil {
		cancel()
		t.Fatalf("Watch: %v", err)
	}
	w := &watchConsumer{cancel: cancel, done: make(chan struct{})}
	go func() { // registry-e2e-watch: ends when ch closes (ctx cancelled)
		defer close(w.done)
		for u := range ch {
			w.mu.Lock()
			w.got = append(w.got, sseEvent{id: strconv.FormatUint(u.Version, 10), update: u})
			w.mu.Unlock()
		}
	}()
	t.Cleanup(func() { cancel(); <-w.done })
	return w
}

// events returns a copy of what the watch delivered.
func (w *watchConsumer) events() []sseEvent {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.got)
}

// wait polls until the watch delivered version v, then stops it.
func (w *watchConsumer) wait(t *testing.T, v uint64) {
	t.Helper()
	ok := pollUntil(regWatchLimit, func() bool {
		ev := w.events()
		return len(ev) > 0 && ev[len(ev)-1].update.Version >= v
	})
	w.cancel()
	<-w.done
	if !ok {
		t.Fatalf("Watch did not deliver version %d within %s: got %v", v, regWatchLimit, versionsOf(w.events()))
	}
}

// TestRegistryCLI: on a default `ron serve` (dev signer, 1 of 1) the CLI
// proposes a set derived from `registry get 0`, approves it with the
// default dev key, commits it (twice: the same answer), reads it back with
// head and get, and `verify --state` passes twice, the second run proving
// consistency with the first across one more commit. Bad input exits 1
// with the envelope code, an unreachable server exits 2.
func TestRegistryCLI(t *testing.T) {
	t.Parallel()
	n := startNode(t, nodeOpts{})
	cl := &regCLI{t: t, env: n.cliEnv()}
	genesis := cl.artifact("0")
	if len(genesis.Approvals) != 0 || genesis.Version != 0 {
		t.Fatalf("registry get 0: %+v, want genesis without approvals", genesis)
	}
	var g struct {
		Items []map[string]any `json:"items"`
	}
	if err := json.Unmarshal(genesis.Payload, &g); err != nil {
		t.Fatalf("genesis payload: %v", err)
	}
	setFile := writeSet(t, g.Items, "e2e-cli-1")
	c1 := cl.cycle(setFile)
	if c1.Version != 1 {
		t.Errorf("first commit: version %d, want 1", c1.Version)
	}
	art := cl.artifact("1")
	if art.PrevHash != genesis.PayloadB3 || art.PayloadB3 != c1.PayloadB3 || idOf(art.Payload) != c1.PayloadB3 ||
		len(art.Approvals) != 1 || art.Approvals[0].SignerID != "org:dev#k1" || !strings.Contains(string(art.Payload), `"e2e-cli-1"`) {
		t.Errorf("registry get 1: %+v, want the committed set %s after %s, approved by org:dev#k1", art, c1.PayloadB3, genesis.PayloadB3)
	}

	state := filepath.Join(t.TempDir(), "verify.state")
	url := n.regBaseURL()
	cl.verify(2, true, url, "--state", state)
	c2 := cl.cycle(writeSet(t, g.Items, "e2e-cli-2"))
	vkey := do(t, http.MethodGet, url+"/registry/log/key", nil, nil)
	if vkey.status != http.StatusOK {
		t.Fatalf("GET /registry/log/key: %d %s", vkey.status, vkey.body)
	}
	cl.verify(c2.Version+1, false, url, "--state", state, "--log-key", strings.TrimSpace(string(vkey.body)), "--genesis", genesis.PayloadB3)
	cl.badInput(g.Items, c1)
}

// regCLI runs `ron registry …` against one node through its environment.
type regCLI struct {
	t   *testing.T
	env []string
}

// run runs `ron registry args…`.
func (r *regCLI) run(args ...string) cliResult {
	r.t.Helper()
	return ron(r.t, cliOpts{env: r.env}, append([]string{"registry"}, args...)...)
}

// must runs the command, requires exit 0 and decodes stdout into out.
func (r *regCLI) must(out any, args ...string) {
	r.t.Helper()
	res := r.run(args...)
	if res.code != 0 {
		r.t.Fatalf("ron registry %s: exit %d: %s", strings.Join(args, " "), res.code, res.stderr)
	}
	if err := json.Unmarshal([]byte(res.stdout), out); err != nil {
		r.t.Fatalf("ron registry %s printed %q: %v", strings.Join(args, " "), res.stdout, err)
	}
}

// artifact runs `registry get V` and checks that it prints canonical bytes.
func (r *regCLI) artifact(v string) descriptor.Artifact {
	r.t.Helper()
	res := r.run("get", v)
	if res.code != 0 {
		r.t.Fatalf("ron registry get %s: exit %d: %s", v, res.code, res.stderr)
	}
	body := []byte(strings.TrimSuffix(res.stdout, "\n"))
	canonical, err := jcs.Transform(body)
	if err != nil || !bytes.Equal(canonical, body) {
		r.t.Fatalf("ron registry get %s printed %q, not canonical JSON (%v)", v, body, err)
	}
	var a descriptor.Artifact
	if err := json.Unmarshal(body, &a); err != nil {
		r.t.Fatal(err)
	}
	return a
}

// cycle proposes setFile, approves it with the node's dev key, commits it
// twice (the retry answers the same) and checks HEAD.
func (r *regCLI) cycle(setFile string) registryapi.Committed {
	r.t.Helper()
	var p registryapi.Proposed
	r.must(&p, "propose", setFile)
	if p.ProposalID != "p_"+strings.TrimPrefix(p.PayloadB3, "b3:")[:32] || p.ExpiresAt == "" {
		r.t.Fatalf("propose printed %+v, want proposal_id p_ + 32 hex of payload_b3", p)
	}
	var a registryapi.ApprovalResult
	r.must(&a, "approve", p.ProposalID)
	if a.Status != "quorum_met" || a.Approvals != 1 || a.Quorum != (registryapi.Quorum{M: 1, N: 1}) {
		r.t.Errorf("approve printed %+v, want quorum_met with 1 of {1 1}", a)
	}
	if res := r.run("approve", p.ProposalID); res.code != 1 || !strings.HasPrefix(res.stderr, "error: duplicate_approval: ") {
		r.t.Errorf("second approve: exit %d, stderr %q, want 1 and error: duplicate_approval", res.code, res.stderr)
	}
	var c, again registryapi.Committed
	r.must(&c, "commit", p.ProposalID)
	r.must(&again, "commit", p.ProposalID)
	if c.PayloadB3 != p.PayloadB3 || (again.Version != c.Version || again.PayloadB3 != c.PayloadB3 || again.CommittedAt != c.CommittedAt) {
		r.t.Errorf("commit printed %+v, then %+v; want the same 201 for %s", c, again, p.PayloadB3)
	}
	var h registryapi.Head
	r.must(&h, "head", "-o", "json")
	if h.Version != c.Version || h.PayloadB3 != c.PayloadB3 || h.CommittedAt != c.CommittedAt {
		r.t.Errorf("head printed %+v after commit %+v", h, c)
	}
	return c
}

// verify runs `registry verify URL args…` and checks its one-line report.
func (r *regCLI) verify(size uint64, unpinned bool, url string, args ...string) {
	r.t.Helper()
	res := r.run(append([]string{"verify", url}, args...)...)
	pin := "(pinned key)"
	if unpinned {
		pin = "(unpinned key)"
	}
	if res.code != 0 || !strings.HasPrefix(res.stdout, "ok ") || !strings.Contains(res.stdout, fmt.Sprintf("size %d ", size)) ||
		!strings.Contains(res.stdout, pin) {
		r.t.Fatalf("ron registry verify %s: exit %d, stdout %q, want ok, size %d, %s\nstderr: %s",
			strings.Join(args, " "), res.code, res.stdout, size, pin, res.stderr)
	}
	if unpinned && !strings.Contains(res.stderr, "unpinned") {
		r.t.Errorf("verify without --log-key: stderr %q does not warn \"unpinned\"", res.stderr)
	}
}

// writeSet writes a DescriptorSet file: the genesis items plus a service
// item named svc; version, prev_hash and created_at are left to the CLI.
func writeSet(t *testing.T, items []map[string]any, svc string) string {
	t.Helper()
	all := append(slices.Clip(items), map[string]any{"kind": "service", "id": svc, "owner": "e2e"})
	return writeJSON(t, map[string]any{"items": all, "note": "e2e CLI " + svc})
}

// writeJSON writes v into a fresh file and returns its path.
func writeJSON(t *testing.T, v any) string {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "set.json")
	if err := os.WriteFile(path, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// badInput: each bad command exits 1 with "error: <code>: …" (2 when the
// server is unreachable), changing nothing.
func (r *regCLI) badInput(items []map[string]any, committed registryapi.Committed) {
	r.t.Helper()
	badQuorum := slices.Clone(items)
	for i, it := range badQuorum {
		if it["kind"] == "quorum" {
			badQuorum[i] = map[string]any{"kind": "quorum", "id": "quorum", "m": 2, "n": 1}
		}
	}
	stale := map[string]any{"version": committed.Version, "prev_hash": committed.PayloadB3, "items": items}
	cases := []struct {
		name string
		args []string
		exit int
		code string
	}{
		{"get non-canonical version", []string{"get", "01"}, 1, "bad_request"},
		{"get beyond HEAD", []string{"get", "999"}, 1, "not_found"},
		{"approve bad id", []string{"approve", "p_xyz"}, 1, "bad_request"},
		{"commit unknown proposal", []string{"commit", "p_" + strings.Repeat("0", 32)}, 1, "not_found"},
		{"propose m > n", []string{"propose", writeJSON(r.t, map[string]any{"items": badQuorum})}, 1, "bad_request"},
		{"propose on a stale HEAD", []string{"propose", writeJSON(r.t, stale)}, 1, "chain_mismatch"},
		{"propose not JSON", []string{"propose", writeRaw(r.t, "{not json")}, 1, "bad_request"},
		{"verify wrong genesis", []string{"verify", r.server(), "--genesis", "b3:" + strings.Repeat("0", 64)}, 1, "verify_failed"},
		{"head unreachable", []string{"head", "--server", "http://" + freeAddr(r.t)}, 2, "unreachable"},
	}
	before := r.headNow()
	for _, tc := range cases {
		r.t.Run(tc.name, func(t *testing.T) {
			res := ron(t, cliOpts{env: r.env}, append([]string{"registry"}, tc.args...)...)
			if res.code != tc.exit || !strings.HasPrefix(lastLine(res.stderr), "error: "+tc.code+": ") {
				t.Errorf("ron registry %s: exit %d, stderr %q; want exit %d and \"error: %s: …\"",
					strings.Join(tc.args, " "), res.code, res.stderr, tc.exit, tc.code)
			}
		})
	}
	if after := r.headNow(); after != before {
		r.t.Errorf("HEAD moved from %+v to %+v under bad input", before, after)
	}
}

// server is the registry URL of the CLI's environment.
func (r *regCLI) server() string {
	for _, kv := range r.env {
		if v, ok := strings.CutPrefix(kv, "RON_REGISTRY__LISTEN="); ok {
			return "http://" + v
		}
	}
	r.t.Fatal("no RON_REGISTRY__LISTEN in the CLI environment")
	return ""
}

// headNow is `registry head`.
func (r *regCLI) headNow() registryapi.Head {
	r.t.Helper()
	var h registryapi.Head
	r.must(&h, "head")
	return h
}

// lastLine is the last line of s (verify prints progress before its verdict).
func lastLine(s string) string {
	s = strings.TrimRight(s, "\n")
	return s[strings.LastIndexByte(s, '\n')+1:]
}

// writeRaw writes s into a fresh file and returns its path.
func writeRaw(t *testing.T, s string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "raw.json")
	if err := os.WriteFile(path, []byte(s), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}
