package e2e

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
)

// This file checks the names compare-and-swap of a cluster (docs/cluster.md
// §14) for linearizability with porcupine while the network is cut (2|2
// and 1|2 splits in a netLab), the leader is killed with kill -9 and a
// node is paused with SIGSTOP: clients write through every node, on both
// sides of every split.

// linName is the one name every client swaps.
const linName = "lin.example"

// linPhaseLimit bounds one fault phase: the clients' calls time out after
// 3 s, so four clients make a few calls per second even when every node
// they pick is cut off.
const linPhaseLimit = 60 * time.Second

// linInput is one client call: a compare-and-swap PUT of target expecting
// version (0: If-None-Match *), or a linearizable GET (?consistent=1).
type linInput struct {
	put    bool
	expect uint64
	target string
	node   string // the node asked, for the failure report
}

// linOutput is the answer: ok with the record's version and target (a PUT
// or GET 200; a GET 404 is ok with version 0), refused (412: the expected
// version was not current; or 503 with details.outcome "not_written":
// nothing was written), or unknown (no answer, or any other 503: the write
// may or may not have been applied).
type linOutput struct {
	ok, refused, unknown bool
	notWritten           bool // a refusal that says nothing about the version
	version              uint64
	target               string
}

// linState is the name: its version (0 = never written) and target.
type linState struct {
	version uint64
	target  string
}

// linModel is the register with compare-and-swap; an unknown write may
// have happened or not.
var linModel = porcupine.NondeterministicModel{
	Init: func() []any { return []any{linState{}} },
	Step: func(state, input, output any) []any {
		s, in, out := state.(linState), input.(linInput), output.(linOutput)
		if !in.put {
			if out.version == s.version && out.target == s.target {
				return []any{s}
			}
			return nil
		}
		applies := s.version == in.expect
		next := linState{version: s.version + 1, target: in.target}
		switch {
		case out.unknown && applies:
			return []any{s, next}
		case out.unknown, out.notWritten:
			return []any{s}
		case out.refused && !applies:
			return []any{s}
		case out.ok && applies && out.version == next.version:
			return []any{next}
		}
		return nil
	},
	DescribeOperation: func(input, output any) string {
		in, out := input.(linInput), output.(linOutput)
		if !in.put {
			return fmt.Sprintf("get@%s → v%d %.12s", in.node, out.version, out.target)
		}
		return fmt.Sprintf("put@%s v%d→%.12s → ok=%v refused=%v unknown=%v v%d", in.node, in.expect, in.target,
			out.ok, out.refused, out.unknown, out.version)
	},
}

// linTarget is a node as the clients reach it (fixed before they start:
// a restart replaces the node's process, not its address).
type linTarget struct{ id, index string }

// linClient runs one client's calls and records them.
type linClient struct {
	t       *testing.T
	tok     string
	targets []linTarget
	id      int
	seen    uint64        // the last version this client saw
	ops     *atomic.Int64 // calls made by all clients
	hist    []porcupine.Operation
	acks    []nameAnswer // acknowledged writes
}

// step makes one call through a random node: a linearizable read or a
// swap expecting the last version seen.
func (lc *linClient) step(rng *rand.Rand, seq *atomic.Int64, clock func() int64) {
	n := lc.targets[rng.IntN(len(lc.targets))]
	in := linInput{put: rng.IntN(3) > 0, expect: lc.seen, node: n.id}
	if in.put {
		in.target = absentID(lc.t, int(seq.Add(1)))
	}
	call := clock()
	out := lc.call(n, in)
	ret := clock()
	if (out.unknown || out.notWritten) && !in.put {
		return // a read with no answer says nothing
	}
	if out.unknown {
		ret = math.MaxInt64 // the write may take effect at any time from now on
	}
	if out.ok {
		lc.seen = out.version
		if in.put {
			lc.acks = append(lc.acks, nameAnswer{Name: linName, B3: in.target, Version: int64(out.version)})
		}
	}
	if out.refused {
		lc.seen = 0 // re-read before the next swap
	}
	lc.ops.Add(1)
	lc.hist = append(lc.hist, porcupine.Operation{ClientId: lc.id, Input: in, Call: call, Output: out, Return: ret})
}

// call sends one request (a short deadline: a cut-off node must not stall
// the client) and classifies the answer.
func (lc *linClient) call(n linTarget, in linInput) linOutput {
	method, url, body := http.MethodGet, "http://"+n.index+"/names/"+linName+"?consistent=1", []byte(nil)
	h := http.Header{}
	if in.put {
		method, url = http.MethodPut, "http://"+n.index+"/names/"+linName
		body, _ = json.Marshal(map[string]string{"b3": in.target})
		h = hdr("Authorization", "Bearer "+lc.tok, "Content-Type", "application/json")
		if in.expect == 0 {
			h.Set("If-None-Match", "*")
		} else {
			h.Set("If-Match", fmt.Sprintf(`"%d"`, in.expect))
		}
	}
	r, err := clReq(3*time.Second, method, url, h, body)
	var rec nameAnswer
	var env envelope
	switch {
	case err != nil:
		return linOutput{unknown: true}
	case r.status == http.StatusServiceUnavailable && json.Unmarshal(r.body, &env) == nil &&
		env.Error.Details["outcome"] == "not_written":
		return linOutput{notWritten: true}
	case r.status == http.StatusServiceUnavailable:
		return linOutput{unknown: true}
	case r.status == http.StatusPreconditionFailed && in.put:
		return linOutput{refused: true}
	case r.status == http.StatusNotFound && !in.put:
		return linOutput{ok: true}
	case r.status == http.StatusOK && json.Unmarshal(r.body, &rec) == nil:
		return linOutput{ok: true, version: uint64(rec.Version), target: rec.B3}
	}
	lc.t.Errorf("%s %s on %s: unexpected %d %.300s", method, url, n.id, r.status, r.body)
	return linOutput{unknown: true}
}

// TestClusterNamesLinearizableUnderFaults: four nodes in a lab (three
// servers, one non-voter), four clients swapping one name through random
// nodes while the test cuts 2|2 (the side with one server cannot commit),
// heals, cuts 1|2 (the lone server, formerly perhaps the leader, cannot
// commit), heals, pauses a server with SIGSTOP, and kills the leader with
// kill -9 and restarts it. The history is linearizable (porcupine), every
// acknowledged write is in every node's own history afterwards, and the
// same history with one acknowledgement forged is not (the negative
// control).
func TestClusterNamesLinearizableUnderFaults(t *testing.T) {
	c := startTestCluster(t, clusterOpts{nodes: 4, netns: true, cluster: "\n[index]\nname_history = 10000"})
	c.waitLeader(c.nodes, "start")
	n1, n2, n3, n4 := c.nodes[0], c.nodes[1], c.nodes[2], c.nodes[3]

	start := time.Now()
	clock := func() int64 { return int64(time.Since(start)) }
	var seq, ops atomic.Int64
	stop := make(chan struct{})
	clients := make([]*linClient, 4)
	var targets []linTarget
	for _, n := range c.nodes {
		targets = append(targets, linTarget{id: n.id, index: n.index})
	}
	var wg sync.WaitGroup
	for i := range clients {
		clients[i] = &linClient{t: t, tok: c.tok, targets: targets, id: i, ops: &ops}
		wg.Go(func() { // one client; ends when stop closes
			rng := rand.New(rand.NewPCG(uint64(i), 42))
			for {
				select {
				case <-stop:
					return
				default:
					clients[i].step(rng, &seq, clock)
				}
			}
		})
	}
	// phase lets the clients make k more calls (a bound of linPhaseLimit)
	// in the state the test just set up.
	phase := func(what string, k int64) {
		t.Logf("%6.1fs %s", time.Since(start).Seconds(), what)
		target := ops.Load() + k
		waitFor(t, linPhaseLimit, 20*time.Millisecond, fmt.Sprintf("%d calls during %s", k, what), func() (bool, string) {
			return ops.Load() >= target, fmt.Sprintf("%d of %d calls", ops.Load(), target)
		})
	}
	func() {
		defer close(stop)
		phase("steady", 40)
		c.partition([]*clNode{n1, n2}, []*clNode{n3, n4})
		phase("2|2", 40)
		c.heal()
		phase("healed", 40)
		c.partition([]*clNode{n1}, []*clNode{n2, n3, n4})
		phase("1|3 (one server alone)", 40)
		c.heal()
		phase("healed", 40)
		n2.stop()
		phase("n2 paused (SIGSTOP)", 30)
		n2.cont()
		leader := c.waitLeader([]*clNode{n1, n2, n3}, "before the kill")
		leader.kill9()
		phase("leader "+leader.id+" killed", 30)
		c.restart(leader)
		phase("leader restarted", 40)
	}()
	wg.Wait()

	var hist []porcupine.Operation
	var acks []nameAnswer
	for _, lc := range clients {
		hist, acks = append(hist, lc.hist...), append(acks, lc.acks...)
	}
	t.Logf("%d operations, %d acknowledged writes", len(hist), len(acks))
	if len(acks) < 10 {
		t.Fatalf("only %d writes were acknowledged: the workload did not exercise the log", len(acks))
	}
	model := linModel.ToModel()
	if res := porcupine.CheckOperationsTimeout(model, hist, 30*time.Second); res != porcupine.Ok {
		t.Fatalf("the history of %d operations is %s", len(hist), res)
	}
	if res := porcupine.CheckOperationsTimeout(model, forgeAck(hist), 30*time.Second); res != porcupine.Illegal {
		t.Fatalf("negative control: a history with a forged acknowledgement is %s, want %s", res, porcupine.Illegal)
	}

	c.waitLeader(c.nodes, "the end")
	for _, n := range c.nodes {
		waitFor(t, clCatchUpLimit, clPollEvery, n.id+" to hold every acknowledged write", func() (bool, string) {
			missing := missingAcks(n, acks)
			return len(missing) == 0, fmt.Sprintf("missing %v", missing)
		})
	}
}

// forgeAck returns hist with one more acknowledged write: a copy of an
// acknowledged swap, by another client, that also claims the version it
// produced — the trace of a lost or doubled acknowledgement.
func forgeAck(hist []porcupine.Operation) []porcupine.Operation {
	for _, op := range hist {
		in, out := op.Input.(linInput), op.Output.(linOutput)
		if in.put && out.ok {
			in.target = "b3:" + fmt.Sprintf("%064x", 1)
			forged := porcupine.Operation{ClientId: 99, Input: in, Call: op.Return + 1, Output: out, Return: op.Return + 2}
			return append(slices.Clone(hist), forged)
		}
	}
	return hist
}

// missingAcks lists the acknowledged writes n's own store does not hold.
func missingAcks(n *clNode, acks []nameAnswer) []string {
	r, err := clReq(clIndexLimit, http.MethodGet, "http://"+n.index+"/names/"+linName+"/versions", nil, nil)
	if err != nil || r.status != http.StatusOK {
		return []string{fmt.Sprintf("history unreadable: %d %v", r.status, err)}
	}
	var h struct {
		Versions []struct {
			Version int64  `json:"version"`
			B3      string `json:"b3"`
		} `json:"versions"`
	}
	if err := json.Unmarshal(r.body, &h); err != nil {
		return []string{err.Error()}
	}
	have := map[int64]string{}
	for _, v := range h.Versions {
		have[v.Version] = v.B3
	}
	var missing []string
	for _, a := range acks {
		if have[a.Version] != a.B3 {
			missing = append(missing, fmt.Sprintf("v%d", a.Version))
		}
	}
	return missing
}
