package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/internal/tooltest"
	"github.com/ronhq/ron/roles/registry/registryapi"
	"github.com/ronhq/ron/roles/registry/registryapi/descriptor"
)

// Bounds of the replicated registry tests (docs/cluster.md §14). They bound
// polls; a healthy run meets each well within.
const (
	// regClWriters is how many client loops make the commit storm.
	regClWriters = 8
	// regClPhaseAcks is how many commits each phase of the storm waits to
	// see acknowledged (before the kill, after it, after the restart).
	regClPhaseAcks = 25
	// regClPhaseLimit bounds one phase of the storm.
	regClPhaseLimit = 20 * time.Second
	// regClResumeLimit bounds kill -9 of the leader → the first commit
	// acknowledged whose round began after the kill: the survivors notice
	// the loss and elect a leader (local profile: under a second), then one
	// propose → approve → commit round.
	regClResumeLimit = 5 * time.Second
	// regClReadyLimit bounds start → every member's registry serving the
	// log's HEAD (the init entry applied everywhere).
	regClReadyLimit = 20 * time.Second
	// regClFsckLimit bounds one run of Tessera's fsck.
	regClFsckLimit = time.Minute
)

// TestClusterRegistryOnTheLog (docs/cluster.md §14): three servers run the
// registry on the control plane. regClWriters writers commit a storm of
// versions through random nodes (followers relay to the leader); the
// leader is killed with kill -9 mid-storm and the writers go on. Every
// commit acknowledged with 201 is in the final chain of every server,
// commits resume within regClResumeLimit of the kill, the killed leader
// returns from its disk and catches up, and at the end every server serves
// byte-identical artifacts, HEAD and checkpoint, and passes
// `ron registry verify` and Tessera's fsck.
func TestClusterRegistryOnTheLog(t *testing.T) {
	start := time.Now()
	seed := testSeed(t)
	c := startTestCluster(t, clusterOpts{nodes: 3, registry: true})
	r := c.newRegCluster(seed)
	leader := c.waitLeader(c.nodes, "start")

	s := r.startStorm(c.nodes, regClWriters)
	s.waitAcks(regClPhaseAcks, "before the kill")
	stormRate := float64(s.log.count()) / time.Since(s.began).Seconds()
	killed := time.Now()
	leader.kill9()
	var rest []*clNode
	for _, n := range c.nodes {
		if n != leader {
			rest = append(rest, n)
		}
	}
	next := c.waitLeader(rest, "the leader's kill")
	resume := s.waitResume(killed)
	t.Logf("leader %s killed after %d commits; %s leads; the first commit begun after the kill was acknowledged %s after it",
		leader.id, s.log.count(), next.id, resume.Round(time.Millisecond))
	s.waitAcks(regClPhaseAcks, "after the kill")
	t.Logf("%d more commits %s after the kill", regClPhaseAcks, time.Since(killed).Round(time.Millisecond))

	c.restart(leader)
	back := time.Now()
	target := r.headOf(next)
	r.waitHead(leader, target.Version, "after its return from disk")
	caughtUp := time.Since(back)
	s.waitAcks(regClPhaseAcks, "after the old leader's return")
	s.stop()
	r.collect(s.writers...)
	checked := time.Now()
	head := r.checkSame(c.nodes, "after the storm")
	t.Logf("storm stopped %s after it began; the final checks took %s", checked.Sub(s.began).Round(time.Millisecond),
		time.Since(checked).Round(time.Millisecond))
	t.Logf("%d writers: %d commits acknowledged (%.1f/s before the kill), HEAD %d; the old leader reached HEAD %d %s after it was ready again; retried %v; no_quorum outcomes %v; %s in all",
		regClWriters, len(r.acked), stormRate, head.Version, target.Version, caughtUp.Round(time.Millisecond), s.retries(),
		s.log.outcomeCounts(), time.Since(start).Round(time.Millisecond))
}

// TestClusterRegistryReplaceServer (docs/cluster.md §14): a server of a
// registry cluster restarted on an emptied disk catches up from the others
// and then serves the same HEAD and checkpoint; a server stopped for good
// and removed with `ron cluster servers remove` is replaced by a fresh
// server (new id, empty disk, bootstrap_expect = 0) that the leader adds,
// which catches up while writes go on.
func TestClusterRegistryReplaceServer(t *testing.T) {
	start := time.Now()
	seed := testSeed(t)
	c := startTestCluster(t, clusterOpts{nodes: 3, registry: true})
	r := c.newRegCluster(seed)
	leader := c.waitLeader(c.nodes, "start")
	began := time.Now()
	r.commit(c.nodes, 20)
	t.Logf("one writer: 20 commits in %s", time.Since(began).Round(time.Millisecond))

	wiped := c.nodes[0]
	if wiped == leader {
		wiped = c.nodes[1]
	}
	wiped.kill9()
	r.commit(c.nodes, 10) // through the others while it is down
	c.restartEmpty(wiped)
	back := time.Now()
	want := r.headOf(leader).Version
	r.waitHead(wiped, want, "on an emptied disk")
	t.Logf("%s on an emptied disk reached HEAD %d %s after it was ready", wiped.id, want, time.Since(back).Round(time.Millisecond))
	r.checkSame(c.nodes, wiped.id+" back on an emptied disk")
	r.commit(c.nodes, 5)

	gone := c.waitLeader(c.nodes, "before the decommission")
	gone.signal(syscall.SIGTERM)
	if code := gone.waitExit(exitLimit); code != 0 {
		t.Errorf("%s: exit %d after SIGTERM, want 0", gone.id, code)
	}
	var rest []*clNode
	for _, n := range c.nodes {
		if n != gone {
			rest = append(rest, n)
		}
	}
	next := c.waitLeader(rest, "the leader's clean stop")
	res := ron(t, cliOpts{}, "cluster", "servers", "remove", gone.id, "--admin", next.admin)
	if res.code != 0 {
		t.Fatalf("ron cluster servers remove %s --admin %s: exit %d\nstdout: %s\nstderr: %s", gone.id, next.id, res.code, res.stdout, res.stderr)
	}
	c.waitServers(rest, ids(rest), "after removing "+gone.id)
	r.commit(rest, 5) // two of two voters

	fresh := c.addNode(fmt.Sprintf("n%d", len(c.nodes)+1), true)
	added := time.Now()
	members := append(slices.Clone(rest), fresh)
	c.waitServers(members, ids(members), "after "+fresh.id+" joined")
	target := r.headOf(next).Version
	r.waitHead(fresh, target, "a fresh server")
	t.Logf("%s stopped and removed, %s added: a voter and at HEAD %d %s after it was ready", gone.id, fresh.id,
		target, time.Since(added).Round(time.Millisecond))
	r.commit(members, 10)
	r.checkSame(members, fresh.id+" added")
	t.Logf("HEAD %d; %s in all", r.head, time.Since(start).Round(time.Millisecond))
}

// regCluster is a test cluster's registry as the tests see it: the signer
// keys (testCluster.regKeys), the pinned log key, one client per node, and
// every commit acknowledged with 201.
type regCluster struct {
	c       *testCluster
	seed    uint64
	streams int // random streams handed out (newRand's i)
	tok     string
	vkey    string            // the log's note verifier key (one for the whole cluster)
	items   []json.RawMessage // genesis payload items, which every set carries on
	clients map[string]*registryapi.HTTPClient
	acked   map[uint64]regAck
	head    uint64 // the HEAD of the last checkSame
}

// newRegCluster waits until every node's registry serves the log (the init
// entry applied everywhere), checks that they all serve one log key, and
// mints the writers' token.
func (c *testCluster) newRegCluster(seed uint64) *regCluster {
	c.t.Helper()
	r := &regCluster{c: c, seed: seed, tok: c.mintToken(strings.Split(regScopes, ",")...),
		clients: map[string]*registryapi.HTTPClient{}, acked: map[uint64]regAck{}}
	for _, n := range c.nodes {
		waitFor(c.t, regClReadyLimit, clPollEvery, n.id+"'s registry to serve the log's genesis", func() (bool, string) {
			res, err := clReq(clIndexLimit, http.MethodGet, n.regBaseURL()+"/registry/head", nil, nil)
			return err == nil && res.status == http.StatusOK, fmt.Sprintf("%d %.200s %v", res.status, res.body, err)
		})
		key := do(c.t, http.MethodGet, n.regBaseURL()+"/registry/log/key", nil, nil)
		if key.status != http.StatusOK {
			c.t.Fatalf("%s: GET /registry/log/key: %d %s", n.id, key.status, key.body)
		}
		if k := strings.TrimSpace(string(key.body)); r.vkey == "" {
			r.vkey = k
		} else if k != r.vkey {
			c.t.Fatalf("%s serves log key %q, %s served %q", n.id, k, c.nodes[0].id, r.vkey)
		}
	}
	r.items = baseItems(c.t, r.client(c.nodes[0]))
	return r
}

// client is n's registry client (one per node id, kept across restarts).
func (r *regCluster) client(n *clNode) *registryapi.HTTPClient {
	if cl, ok := r.clients[n.id]; ok {
		return cl
	}
	cl := regClient(n.node, r.tok)
	r.c.t.Cleanup(cl.Close)
	r.clients[n.id] = cl
	return cl
}

// rand hands out the next random stream of the test's seed.
func (r *regCluster) rand() *rand.Rand {
	r.streams++
	return newRand(r.seed, r.streams)
}

// writer is a regWriter with the cluster's keys (m = 2) whose calls go to
// random nodes of nodes (spreadClient), recording its 201s in log.
func (r *regCluster) writer(name string, nodes []*clNode, log *commitLog) *regWriter {
	s := &spreadClient{rng: r.rand(), log: log}
	for _, n := range nodes {
		s.cs = append(s.cs, r.client(n))
	}
	s.Client = s.cs[0]
	return newRegWriter(name, s, r.items, r.c.regKeys, 2, r.rand())
}

// commit makes n commits through one writer over nodes, failing the test
// on any unexpected answer.
func (r *regCluster) commit(nodes []*clNode, n int) {
	r.c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), regCommitLimit)
	defer cancel()
	w := r.writer(fmt.Sprintf("e2e-seq-%d", r.streams), nodes, &commitLog{})
	if err := w.commitN(ctx, n); err != nil {
		r.c.t.Fatalf("%d commits through %v: %v", n, ids(nodes), err)
	}
	r.collect(w)
}

// collect moves the writers' acknowledged commits into r.acked; two
// different 201s for one version fail the test.
func (r *regCluster) collect(ws ...*regWriter) {
	r.c.t.Helper()
	for _, w := range ws {
		for _, a := range w.acks {
			if prev, ok := r.acked[a.version]; ok && prev != a {
				r.c.t.Errorf("version %d acknowledged twice: %+v and %+v", a.version, prev, a)
			}
			r.acked[a.version] = a
		}
		w.acks = nil
	}
}

// spreadClient sends each call a writer makes to a random one of its
// clients and notes every commit answered 201 in log.
type spreadClient struct {
	registryapi.Client // the methods a writer does not call: the first node's
	cs                 []*registryapi.HTTPClient
	rng                *rand.Rand
	log                *commitLog
}

func (s *spreadClient) pick() registryapi.Client { return s.cs[s.rng.IntN(len(s.cs))] }

func (s *spreadClient) Head(ctx context.Context) (registryapi.Head, error) { return s.pick().Head(ctx) }

func (s *spreadClient) Propose(ctx context.Context, req descriptor.ProposeRequest) (registryapi.Proposed, error) {
	got, err := s.pick().Propose(ctx, req)
	return got, s.log.check(err)
}

func (s *spreadClient) Approve(ctx context.Context, id string, ap descriptor.Approval) (registryapi.ApprovalResult, error) {
	got, err := s.pick().Approve(ctx, id, ap)
	return got, s.log.check(err)
}

func (s *spreadClient) Commit(ctx context.Context, id string) (registryapi.Committed, error) {
	begun := time.Now()
	got, err := s.pick().Commit(ctx, id)
	if err == nil {
		s.log.add(begun, time.Now())
	}
	return got, s.log.check(err)
}

// commitLog records when each acknowledged commit call began and ended,
// and counts the outcomes of the writes refused with 503 no_quorum.
type commitLog struct {
	mu       sync.Mutex
	calls    [][2]time.Time
	outcomes map[string]int
}

// check counts a 503 no_quorum answer's details.outcome; one without a
// documented outcome (docs/cluster.md §14) is turned into a non-transient
// error, so the writer fails.
func (l *commitLog) check(err error) error {
	var he *httpx.Error
	if !errors.As(err, &he) || he.Status != http.StatusServiceUnavailable || he.Code != httpx.CodeNoQuorum {
		return err
	}
	outcome, _ := he.Details["outcome"].(string)
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.outcomes == nil {
		l.outcomes = map[string]int{}
	}
	l.outcomes[outcome]++
	if outcome != httpx.OutcomeNotWritten && outcome != httpx.OutcomeUnknown {
		return fmt.Errorf("503 no_quorum with details %v, want details.outcome not_written or unknown: %w", he.Details, errBadOutcome)
	}
	if outcome == httpx.OutcomeUnknown && strings.Contains(he.Message, "connection refused") {
		// The relay never reached the leader: nothing was sent, so the
		// outcome is known, and the follower should have waited for the
		// next leader and gone there (docs/cluster.md §14).
		return fmt.Errorf("503 no_quorum unknown for a write that was never sent (%s): %w", he.Message, errBadOutcome)
	}
	return err
}

// errBadOutcome marks a 503 no_quorum whose details.outcome is missing or
// wrong.
var errBadOutcome = errors.New("wrong outcome")

// outcomeCounts returns a copy of the no_quorum outcomes seen.
func (l *commitLog) outcomeCounts() map[string]int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return maps.Clone(l.outcomes)
}

func (l *commitLog) add(begun, ended time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.calls = append(l.calls, [2]time.Time{begun, ended})
}

func (l *commitLog) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.calls)
}

// firstAfter is the earliest end of a call that began after t.
func (l *commitLog) firstAfter(t time.Time) (time.Time, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	var first time.Time
	for _, c := range l.calls {
		if c[0].After(t) && (first.IsZero() || c[1].Before(first)) {
			first = c[1]
		}
	}
	return first, !first.IsZero()
}

// regStorm is regClWriters writers running rounds concurrently, each in
// its goroutine (e2e-cluster-writer-i), until stop.
type regStorm struct {
	t        *testing.T
	writers  []*regWriter
	log      *commitLog
	cancel   context.CancelFunc
	wg       sync.WaitGroup
	errs     []error // each writer's, read after wg.Wait
	failures atomic.Int32
	stopped  atomic.Bool
	began    time.Time
}

// startStorm starts count writers over nodes.
func (r *regCluster) startStorm(nodes []*clNode, count int) *regStorm {
	s := &regStorm{t: r.c.t, log: &commitLog{}, errs: make([]error, count), began: time.Now()}
	ctx, cancel := context.WithCancel(context.Background())
	s.cancel = cancel
	for i := range count {
		w := r.writer(fmt.Sprintf("e2e-cluster-writer-%d", i), nodes, s.log)
		s.writers = append(s.writers, w)
		s.wg.Go(func() { // e2e-cluster-writer-i: ends with stop or its first unexpected answer
			if s.errs[i] = w.run(ctx); s.errs[i] != nil {
				s.failures.Add(1)
			}
		})
	}
	s.t.Cleanup(s.stop)
	return s
}

// waitAcks polls until n more commits than now were acknowledged.
func (s *regStorm) waitAcks(n int, when string) {
	s.t.Helper()
	want := s.log.count() + n
	waitFor(s.t, regClPhaseLimit, pollEvery, fmt.Sprintf("%d commits acknowledged (%s)", n, when), func() (bool, string) {
		got := s.log.count()
		return got >= want || s.failed(), fmt.Sprintf("%d of %d", got, want)
	})
	if s.failed() {
		s.stop()
		s.t.FailNow()
	}
}

// failed reports whether a writer has ended with an error.
func (s *regStorm) failed() bool { return s.failures.Load() > 0 }

// waitResume polls until a commit begun after killed is acknowledged and
// returns how long after killed that was.
func (s *regStorm) waitResume(killed time.Time) time.Duration {
	s.t.Helper()
	var at time.Time
	waitFor(s.t, regClResumeLimit, pollEvery, "a commit begun after the kill to be acknowledged", func() (bool, string) {
		var ok bool
		at, ok = s.log.firstAfter(killed)
		return ok, fmt.Sprintf("%d commits in all", s.log.count())
	})
	return at.Sub(killed)
}

// stop ends the writers, waits for them and fails the test with their
// errors.
func (s *regStorm) stop() {
	if s.stopped.Swap(true) {
		return
	}
	s.cancel()
	s.wg.Wait()
	for _, err := range s.errs {
		if err != nil {
			s.t.Errorf("writer: %v", err)
		}
	}
}

// retries sums the writers' retried transient answers by code.
func (s *regStorm) retries() map[string]int {
	sum := map[string]int{}
	for _, w := range s.writers {
		for k, v := range w.retries {
			sum[k] += v
		}
	}
	return sum
}

// headOf reads n's HEAD (failing the test on any error).
func (r *regCluster) headOf(n *clNode) registryapi.Head {
	r.c.t.Helper()
	return regHead(r.c.t, r.client(n))
}

// waitHead polls until n's registry serves a HEAD at or above v.
func (r *regCluster) waitHead(n *clNode, v uint64, when string) {
	r.c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), clCatchUpLimit)
	defer cancel()
	waitFor(r.c.t, clCatchUpLimit, pollEvery, fmt.Sprintf("%s's registry HEAD to reach %d (%s)", n.id, v, when), func() (bool, string) {
		h, err := r.client(n).Head(ctx)
		return err == nil && h.Version >= v, fmt.Sprintf("HEAD %d %v", h.Version, err)
	})
}

// checkSame waits until every node of nodes serves one HEAD at or above
// every acknowledged version, then checks that each serves every version
// byte-identically (every acknowledged one as its 201 said), that their
// checkpoints cover HEAD and are byte-identical, and that
// `ron registry verify` (pinned key) and Tessera's fsck pass against each.
// It returns the HEAD.
func (r *regCluster) checkSame(nodes []*clNode, when string) registryapi.Head {
	t := r.c.t
	t.Helper()
	var maxAck uint64
	for v := range r.acked {
		maxAck = max(maxAck, v)
	}
	var head []byte
	waitFor(t, clCatchUpLimit, clPollEvery, fmt.Sprintf("one registry HEAD ≥ %d on %v (%s)", maxAck, ids(nodes), when), func() (bool, string) {
		var notes []string
		var bodies [][]byte
		for _, n := range nodes {
			res, err := clReq(clIndexLimit, http.MethodGet, n.regBaseURL()+"/registry/head", nil, nil)
			notes = append(notes, fmt.Sprintf("%s: %d %.120s %v", n.id, res.status, res.body, err))
			if err != nil || res.status != http.StatusOK {
				return false, strings.Join(notes, "; ")
			}
			bodies = append(bodies, res.body)
		}
		var h registryapi.Head
		if err := json.Unmarshal(bodies[0], &h); err != nil || h.Version < maxAck {
			return false, strings.Join(notes, "; ")
		}
		for _, b := range bodies[1:] {
			if !bytes.Equal(b, bodies[0]) {
				return false, strings.Join(notes, "; ")
			}
		}
		head = bodies[0]
		return true, ""
	})
	var h registryapi.Head
	if err := json.Unmarshal(head, &h); err != nil {
		t.Fatal(err)
	}
	r.head = h.Version
	r.checkVersions(nodes, h.Version, when)
	var first []byte
	for _, n := range nodes {
		waitCheckpointCovers(t, n.node, h.Version)
		cp := do(t, http.MethodGet, n.regBaseURL()+"/registry/log/checkpoint", nil, nil)
		if first == nil {
			first = cp.body
		} else if !bytes.Equal(cp.body, first) {
			t.Errorf("%s: checkpoint %q, %s's is %q (%s)", n.id, cp.body, nodes[0].id, first, when)
		}
	}
	r.checkSegments(nodes, when)
	r.checkStatus(nodes, h, when)
	for _, n := range nodes {
		r.verifyCLI(n, h.Version, when)
		r.fsck(n, h.Version, when)
	}
	return h
}

// checkVersions reads every version 0..head from every node: the bytes
// must be the same everywhere, each version's prev_hash the payload_b3 of
// the one before, and each acknowledged version as its 201 said.
func (r *regCluster) checkVersions(nodes []*clNode, head uint64, when string) {
	t := r.c.t
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), cliLimit)
	defer cancel()
	prev := "b3:" + strings.Repeat("0", 64)
	for v := uint64(0); v <= head; v++ {
		var want []byte
		for _, n := range nodes {
			art, raw, err := r.client(n).Get(ctx, v)
			if err != nil {
				t.Fatalf("%s: GET /registry/%d (%s): %v", n.id, v, when, err)
			}
			if want == nil {
				want = raw
				if art.PrevHash != prev {
					t.Errorf("%s: version %d prev_hash %s, version %d is %s (%s)", n.id, v, art.PrevHash, v-1, prev, when)
				}
				prev = art.PayloadB3
				if a, ok := r.acked[v]; ok && (a.b3 != art.PayloadB3 || a.committedAt != art.CommittedAt) {
					t.Errorf("%s: version %d is %s at %s, but its 201 said %s at %s (%s)", n.id, v, art.PayloadB3, art.CommittedAt, a.b3, a.committedAt, when)
				}
			} else if !bytes.Equal(raw, want) {
				t.Errorf("%s: GET /registry/%d differs from %s's (%s)", n.id, v, nodes[0].id, when)
			}
		}
	}
}

// checkStatus: every node's /registry/status shows the same HEAD, quorum,
// checkpoint size and open proposals, is read- and write-ready (a
// follower takes writes by relaying them), and GET /registry/proposals is
// byte-identical everywhere (proposals are replicated state).
func (r *regCluster) checkStatus(nodes []*clNode, h registryapi.Head, when string) {
	t := r.c.t
	t.Helper()
	var props []byte
	for _, n := range nodes {
		var st registryapi.Status
		waitFor(t, regCheckpointLimit, clPollEvery, n.id+"'s registry status to settle at HEAD", func() (bool, string) {
			var err error
			st, err = regStatus(n.node)
			return err == nil && st.WriteReady && st.ReadReady && st.Checkpoint.Size == h.Version+1,
				fmt.Sprintf("%+v %v", st, err)
		})
		if st.Head != h || st.Quorum != (registryapi.Quorum{M: 2, N: 3}) || st.DevSigner || st.MinIndex != 0 {
			t.Errorf("%s: registry status %+v, want HEAD %+v, quorum 2 of 3, no dev signer, min_index 0 (%s)", n.id, st, h, when)
		}
		p := do(t, http.MethodGet, n.regBaseURL()+"/registry/proposals", nil, nil)
		if p.status != http.StatusOK {
			t.Errorf("%s: GET /registry/proposals: %d %s", n.id, p.status, p.body)
		} else if props == nil {
			props = p.body
		} else if !bytes.Equal(p.body, props) {
			t.Errorf("%s: GET /registry/proposals %.300s, %s's %.300s (%s)", n.id, p.body, nodes[0].id, props, when)
		}
	}
	t.Logf("open proposals (%s): %.200s", when, props)
}

// checkSegments: every node's segment files (<data>/registry/log) are
// byte-identical (docs/cluster.md §14), read once every node serves the same
// HEAD (an append is fsynced before HEAD moves).
func (r *regCluster) checkSegments(nodes []*clNode, when string) {
	t := r.c.t
	t.Helper()
	var want map[string][]byte
	for _, n := range nodes {
		dir := filepath.Join(n.dataDir, "registry", "log")
		ents, err := os.ReadDir(dir)
		if err != nil {
			t.Fatalf("%s: %v", n.id, err)
		}
		got := map[string][]byte{}
		for _, e := range ents {
			b, err := os.ReadFile(filepath.Join(dir, e.Name()))
			if err != nil {
				t.Fatalf("%s: %v", n.id, err)
			}
			got[e.Name()] = b
		}
		if want == nil {
			want = got
			continue
		}
		if !maps.EqualFunc(got, want, bytes.Equal) {
			t.Errorf("%s: segment files %v differ from %s's %v (%s)", n.id, slices.Sorted(maps.Keys(got)), nodes[0].id,
				slices.Sorted(maps.Keys(want)), when)
		}
	}
}

// verifyCLI runs `ron registry verify URL --log-key VKEY` against n.
func (r *regCluster) verifyCLI(n *clNode, head uint64, when string) {
	t := r.c.t
	t.Helper()
	res := ron(t, cliOpts{}, "registry", "verify", n.regBaseURL(), "--log-key", r.vkey)
	want := fmt.Sprintf("size %d ", head+1)
	if res.code != 0 || !strings.HasPrefix(res.stdout, "ok ") || !strings.Contains(res.stdout, want) {
		t.Errorf("%s: ron registry verify --log-key (%s): exit %d, stdout %q, want ok with %q\nstderr: %s",
			n.id, when, res.code, res.stdout, want, res.stderr)
	}
}

// fsck runs Tessera's fsck against n's log (docs/registry.md §10: v1.0.4
// exits 0 even on failure, so stderr decides).
func (r *regCluster) fsck(n *clNode, head uint64, when string) {
	t := r.c.t
	t.Helper()
	bin := tooltest.GoBinary("fsck", tooltest.FsckPackage)
	if bin == "" {
		tooltest.Missing(t, "Tessera fsck is not installed (go install github.com/transparency-dev/tessera/cmd/fsck@v1.0.4)")
	}
	keyFile := filepath.Join(t.TempDir(), "vkey")
	if err := os.WriteFile(keyFile, []byte(r.vkey+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), regClFsckLimit)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--storage_url="+n.regBaseURL()+"/registry/log/", "--public_key="+keyFile, "--ui=false")
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = io.Discard, &stderr
	if err := cmd.Run(); err != nil {
		t.Errorf("%s: fsck (%s): %v\n%s", n.id, when, err, stderr.String())
		return
	}
	if want := fmt.Sprintf("Successfully fsck'd log with size %d", head+1); !strings.Contains(stderr.String(), want) ||
		strings.Contains(stderr.String(), "fsck failed") {
		t.Errorf("%s: fsck (%s) did not print %q:\n%s", n.id, when, want, stderr.String())
	}
}

// waitServers polls until every node of among lists exactly want as the
// control plane's voters (GET /api/v1/status control_plane.servers).
func (c *testCluster) waitServers(among []*clNode, want []string, when string) {
	c.t.Helper()
	want = slices.Sorted(slices.Values(want))
	waitFor(c.t, clCatchUpLimit, clPollEvery, fmt.Sprintf("voters %v on %v (%s)", want, ids(among), when), func() (bool, string) {
		var notes []string
		ok := true
		for _, n := range among {
			st, err := n.status()
			if err != nil || st.ControlPlane == nil {
				notes = append(notes, fmt.Sprintf("%s: %v", n.id, err))
				ok = false
				continue
			}
			var got []string
			for _, s := range st.ControlPlane.Servers {
				if s.Voter {
					got = append(got, s.ID)
				}
			}
			slices.Sort(got)
			notes = append(notes, fmt.Sprintf("%s: %v leader %s", n.id, got, st.ControlPlane.Leader))
			ok = ok && slices.Equal(got, want) && st.ControlPlane.Leader != ""
		}
		return ok, strings.Join(notes, "; ")
	})
}
