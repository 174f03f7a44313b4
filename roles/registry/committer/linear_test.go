package committer

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/anishathalye/porcupine"

	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/roles/registry/registryapi/descriptor"
	"github.com/ronhq/ron/roles/registry/segment"
)

// Operations of the docs/registry.md §10 model.
const (
	opCommit = "commit"
	opHead   = "head"
	opGet    = "get"
)

// linIn is an operation's input: commit(t, b3, prev, retry), head(),
// get(v).
type linIn struct {
	op    string
	v     uint64
	b3    string
	prev  string
	retry bool
}

// linOut is its output: a status (201/409 for commit, 200/404 for get,
// 200 for head) and the version and b3 returned.
type linOut struct {
	status int
	v      uint64
	b3     string
}

// linState is HEAD (version, b3) with the chain of committed b3s, so get(v)
// can be judged; chain[version] is HEAD's b3. States are never mutated.
type linState struct {
	version uint64
	chain   []string
}

// registryModel is docs/registry.md §10's model: a 201 commit is legal only from
// (t−1, prev_hash), or as a retry from a state whose version t has its b3;
// a 409 only if state.version ≠ t−1; reads equal the state.
var registryModel = porcupine.Model{
	Init: func() any { return linState{} },
	Step: func(state, input, output any) (bool, any) {
		s, in, out := state.(linState), input.(linIn), output.(linOut)
		switch in.op {
		case opCommit:
			return stepCommit(s, in, out)
		case opHead:
			return out.v == s.version && out.b3 == s.chain[s.version], s
		default:
			if in.v > s.version {
				return out.status == http.StatusNotFound, s
			}
			return out.status == http.StatusOK && out.b3 == s.chain[in.v], s
		}
	},
	Equal: func(a, b any) bool {
		x, y := a.(linState), b.(linState)
		return x.version == y.version && slices.Equal(x.chain, y.chain)
	},
	DescribeOperation: func(input, output any) string { return fmt.Sprintf("%+v → %+v", input, output) },
}

func stepCommit(s linState, in linIn, out linOut) (bool, any) {
	switch {
	case out.status == http.StatusConflict:
		return s.version != in.v-1, s
	case out.status != http.StatusCreated || out.v != in.v || out.b3 != in.b3:
		return false, s
	case in.retry:
		return s.version >= in.v && s.chain[in.v] == in.b3, s
	case s.version == in.v-1 && s.chain[s.version] == in.prev:
		return true, linState{version: in.v, chain: append(slices.Clip(s.chain), in.b3)}
	}
	return false, s
}

// recorder collects a history with a logical clock.
type recorder struct {
	clock atomic.Int64
	mu    sync.Mutex
	ops   []porcupine.Operation
}

// do records one operation of client around fn.
func (r *recorder) do(client int, in linIn, fn func() linOut) linOut {
	call := r.clock.Add(1)
	out := fn()
	ret := r.clock.Add(1)
	r.mu.Lock()
	r.ops = append(r.ops, porcupine.Operation{ClientId: client, Input: in, Call: call, Output: out, Return: ret})
	r.mu.Unlock()
	return out
}

// TestLinearizable drives 8 clients' propose → approve → commit loops
// with head and get(v) reads, and checks the history with porcupine.
func TestLinearizable(t *testing.T) {
	const clients, rounds = 8, 12
	var rec recorder
	var genesis string
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, memBackend)
		defer e.close()
		genesis = e.c.Head().PayloadB3
		var wg sync.WaitGroup
		for cl := range clients {
			wg.Go(func() { linClient(t, e, &rec, cl, rounds) })
		}
		wg.Wait()
		checkChain(t, e)
	})
	model := registryModel
	model.Init = func() any { return linState{chain: []string{genesis}} }
	if !porcupine.CheckOperations(model, rec.ops) {
		t.Fatalf("history of %d operations is not linearizable", len(rec.ops))
	}
	commits := 0
	for _, op := range rec.ops {
		if op.Input.(linIn).op == opCommit && op.Output.(linOut).status == http.StatusCreated {
			commits++
		}
	}
	if commits < rounds {
		t.Fatalf("only %d successful commits", commits)
	}
}

// linClient is one client's loop.
func linClient(t *testing.T, e *env, rec *recorder, cl, rounds int) {
	rng := rand.New(rand.NewPCG(uint64(cl), 7))
	for i := range rounds {
		h := rec.do(cl, linIn{op: opHead}, func() linOut {
			h := e.c.Head()
			return linOut{status: http.StatusOK, v: h.Version, b3: h.PayloadB3}
		})
		s := e.payload(h.v+1, h.b3, fmt.Sprintf("client %d round %d", cl, i), 0)
		if _, err := e.propose(s); err != nil {
			expectCode(t, err, descriptor.CodeChainMismatch)
			continue
		}
		for _, k := range []byte{byte(1 + cl%3), byte(1 + (cl+1)%3)} {
			if _, err := e.approve(s, k); err != nil {
				expectCode(t, err, descriptor.CodeChainMismatch)
			}
		}
		in := linIn{op: opCommit, v: s.Version, b3: s.B3, prev: s.PrevHash}
		out := rec.do(cl, in, func() linOut { return commitOut(t, e, s) })
		if out.status == http.StatusCreated && rng.IntN(3) == 0 {
			in.retry = true
			rec.do(cl, in, func() linOut { return commitOut(t, e, s) })
		}
		v := uint64(rng.IntN(int(h.v) + 3))
		rec.do(cl, linIn{op: opGet, v: v}, func() linOut { return getOut(t, e, v) })
	}
}

// commitOut runs a commit and maps its answer to the model's output.
func commitOut(t *testing.T, e *env, s *descriptor.Set) linOut {
	cm, err := e.commit(s)
	if err != nil {
		expectCode(t, err, descriptor.CodeChainMismatch)
		return linOut{status: http.StatusConflict}
	}
	return linOut{status: http.StatusCreated, v: cm.Version, b3: cm.PayloadB3}
}

// getOut is GET /registry/{v} as the role serves it: 404 above HEAD, else
// the logged artifact.
func getOut(t *testing.T, e *env, v uint64) linOut {
	if v > e.c.Head().Version {
		return linOut{status: http.StatusNotFound}
	}
	r, err := e.log.Read(v)
	if err != nil {
		t.Errorf("read %d: %v", v, err)
		return linOut{}
	}
	art, err := descriptor.ParseArtifact(r.Artifact)
	if err != nil {
		t.Errorf("artifact %d: %v", v, err)
	}
	return linOut{status: http.StatusOK, v: v, b3: art.PayloadB3}
}

func expectCode(t *testing.T, err error, code string) {
	var he *httpx.Error
	if !errors.As(err, &he) || he.Code != code {
		t.Errorf("unexpected error %v (want %s)", err, code)
	}
}

// checkChain walks the log: one artifact per version, each linked to the
// previous payload, committed_at never decreasing.
func checkChain(t *testing.T, e *env) {
	prev, at := "", ""
	err := e.log.Scan(0, e.c.Head().Version, func(r segment.Record) error {
		art, err := descriptor.ParseArtifact(r.Artifact)
		if err != nil {
			return err
		}
		if r.Version > 0 && (art.PrevHash != prev || art.CommittedAt < at) {
			return fmt.Errorf("version %d breaks the chain", r.Version)
		}
		prev, at = art.PayloadB3, art.CommittedAt
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestLinearizableNegative: the model rejects broken histories (a stale
// HEAD read after a completed commit; two 201s for one version; a get of a
// committed version answering 404) and accepts the correct variant.
func TestLinearizableNegative(t *testing.T) {
	commit := func(cl int, call, ret int64, v uint64, b3, prev string, status int) porcupine.Operation {
		out := linOut{status: status}
		if status == http.StatusCreated {
			out.v, out.b3 = v, b3
		}
		return porcupine.Operation{ClientId: cl, Call: call, Return: ret,
			Input: linIn{op: opCommit, v: v, b3: b3, prev: prev}, Output: out}
	}
	read := func(cl int, call, ret int64, in linIn, out linOut) porcupine.Operation {
		return porcupine.Operation{ClientId: cl, Call: call, Return: ret, Input: in, Output: out}
	}
	model := registryModel
	model.Init = func() any { return linState{chain: []string{"G"}} }
	headIs := func(v uint64, b3 string) linOut { return linOut{status: http.StatusOK, v: v, b3: b3} }
	for _, tc := range []struct {
		name string
		ops  []porcupine.Operation
		ok   bool
	}{
		{"fresh_read", []porcupine.Operation{commit(0, 1, 2, 1, "A", "G", 201),
			read(1, 3, 4, linIn{op: opHead}, headIs(1, "A"))}, true},
		{"stale_read", []porcupine.Operation{commit(0, 1, 2, 1, "A", "G", 201),
			read(1, 3, 4, linIn{op: opHead}, headIs(0, "G"))}, false},
		{"concurrent_read", []porcupine.Operation{commit(0, 1, 4, 1, "A", "G", 201),
			read(1, 2, 3, linIn{op: opHead}, headIs(0, "G"))}, true},
		{"two_201_one_version", []porcupine.Operation{commit(0, 1, 2, 1, "A", "G", 201),
			commit(1, 3, 4, 1, "B", "G", 201)}, false},
		{"409_from_base", []porcupine.Operation{commit(0, 1, 2, 1, "A", "G", 409)}, false},
		{"lost_version", []porcupine.Operation{commit(0, 1, 2, 1, "A", "G", 201),
			read(1, 3, 4, linIn{op: opGet, v: 1}, linOut{status: http.StatusNotFound})}, false},
	} {
		if got := porcupine.CheckOperations(model, tc.ops); got != tc.ok {
			t.Errorf("%s: linearizable = %v, want %v", tc.name, got, tc.ok)
		}
	}
}
