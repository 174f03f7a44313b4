package index

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/ronhq/ron/roles/index/indexapi"
)

// This file checks the names compare-and-set (docs/index.md §3, §16) for
// linearizability with porcupine: concurrent HTTP clients on one node, a
// model of a versioned register with tombstones.

type casKind uint8

const (
	casGet casKind = iota
	casPut
	casDelete
)

// casInput is one client call: GET, PUT (target under cond) or DELETE
// (under cond) of name.
type casInput struct {
	kind   casKind
	name   string
	target string
	cond   indexapi.Cond
}

// casOutput is its answer: the status, and the version it names (a
// record's version on 200, details.current_version on 412 with 0 for null,
// details.version of a tombstone on a GET 404 with 0 when never written),
// and the target a GET returned.
type casOutput struct {
	status  int
	version uint64
	target  string
}

// casState is the register: the last written version (0 = never written),
// whether it is live, and its target.
type casState struct {
	version uint64
	live    bool
	target  string
}

// liveVersion is the version preconditions compare with (0 = none).
func (s casState) liveVersion() uint64 {
	if s.live {
		return s.version
	}
	return 0
}

// condHolds is the docs/index.md §3 precondition rule, written independently of indexdb.
func condHolds(c indexapi.Cond, live uint64) bool {
	switch c.Kind() {
	case indexapi.CondVersion:
		return live != 0 && live == c.Version()
	case indexapi.CondLive:
		return live != 0
	case indexapi.CondAbsent:
		return live == 0
	}
	return true
}

// casStep is the sequential specification.
func casStep(s casState, in casInput, out casOutput) (bool, casState) {
	lv := s.liveVersion()
	switch in.kind {
	case casGet:
		if !s.live {
			return out.status == http.StatusNotFound && out.version == s.version, s
		}
		return out.status == http.StatusOK && out.version == s.version && out.target == s.target, s
	case casPut:
		if !condHolds(in.cond, lv) {
			return out.status == http.StatusPreconditionFailed && out.version == lv, s
		}
		next := casState{version: s.version + 1, live: true, target: in.target}
		return out.status == http.StatusOK && out.version == next.version, next
	default: // casDelete
		switch {
		case !condHolds(in.cond, lv):
			return out.status == http.StatusPreconditionFailed && out.version == lv, s
		case !s.live:
			return out.status == http.StatusNotFound, s
		}
		next := casState{version: s.version + 1}
		return out.status == http.StatusOK && out.version == next.version, next
	}
}

// casModel is the porcupine model, partitioned by name.
var casModel = porcupine.Model{
	Partition: func(h []porcupine.Operation) [][]porcupine.Operation {
		byName := map[string][]porcupine.Operation{}
		var order []string
		for _, op := range h {
			n := op.Input.(casInput).name
			if _, ok := byName[n]; !ok {
				order = append(order, n)
			}
			byName[n] = append(byName[n], op)
		}
		out := make([][]porcupine.Operation, 0, len(order))
		for _, n := range order {
			out = append(out, byName[n])
		}
		return out
	},
	Init: func() any { return casState{} },
	Step: func(state, input, output any) (bool, any) {
		return casStep(state.(casState), input.(casInput), output.(casOutput))
	},
	DescribeOperation: func(input, output any) string {
		in, out := input.(casInput), output.(casOutput)
		return fmt.Sprintf("%d %s %v → %d v%d", in.kind, in.name, in.cond, out.status, out.version)
	},
}

// casClient sends casInputs over HTTP.
type casClient struct {
	base  string
	hc    *http.Client
	token string
}

// do performs in and decodes the answer; any status outside the model is
// an error.
func (c *casClient) do(ctx context.Context, in casInput) (casOutput, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	hr, err := c.request(ctx, in)
	if err != nil {
		return casOutput{}, err
	}
	res, err := c.hc.Do(hr)
	if err != nil {
		return casOutput{}, err
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		return casOutput{}, err
	}
	return decodeCAS(res.StatusCode, body)
}

// request builds the HTTP request of in.
func (c *casClient) request(ctx context.Context, in casInput) (*http.Request, error) {
	url := c.base + "/names/" + in.name
	switch in.kind {
	case casGet:
		return http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	case casPut:
		hr, err := http.NewRequestWithContext(ctx, http.MethodPut, url, strings.NewReader(`{"b3":"`+in.target+`"}`))
		if err != nil {
			return nil, err
		}
		hr.Header.Set("Content-Type", "application/json")
		return c.withAuth(hr, in.cond), nil
	}
	hr, err := http.NewRequestWithContext(ctx, http.MethodDelete, url, nil)
	if err != nil {
		return nil, err
	}
	return c.withAuth(hr, in.cond), nil
}

func (c *casClient) withAuth(hr *http.Request, cond indexapi.Cond) *http.Request {
	hr.Header.Set("Authorization", "Bearer "+c.token)
	if k, v := cond.Header(); k != "" {
		hr.Header.Set(k, v)
	}
	return hr
}

// decodeCAS reads the version (and target) the answer names.
func decodeCAS(status int, body []byte) (casOutput, error) {
	var m struct {
		Version *uint64 `json:"version"`
		B3      string  `json:"b3"`
		Error   *struct {
			Details struct {
				Current *uint64 `json:"current_version"`
				Version *uint64 `json:"version"`
			} `json:"details"`
		} `json:"error"`
	}
	if err := json.Unmarshal(body, &m); err != nil {
		return casOutput{}, fmt.Errorf("status %d body %q: %v", status, body, err)
	}
	out := casOutput{status: status, target: m.B3}
	switch {
	case status == http.StatusOK && m.Version != nil:
		out.version = *m.Version
	case status == http.StatusPreconditionFailed && m.Error != nil:
		out.version = deref(m.Error.Details.Current)
	case status == http.StatusNotFound && m.Error != nil:
		out.version = deref(m.Error.Details.Version)
	default:
		return casOutput{}, fmt.Errorf("unexpected answer %d %s", status, body)
	}
	return out, nil
}

func deref(p *uint64) uint64 {
	if p == nil {
		return 0
	}
	return *p
}

// casNames are the contended names.
var casNames = []string{"a.example", "b.example", "c.example"}

// nextInput picks a client's next call. Conditional writes use the last
// version this client saw for the name, as a real CAS client does.
func nextInput(rng *rand.Rand, seen map[string]uint64) casInput {
	name := casNames[rng.IntN(len(casNames))]
	target := []string{idA, idB}[rng.IntN(2)]
	ifSeen := indexapi.IfMatch(seen[name])
	if seen[name] == 0 {
		ifSeen = indexapi.IfLive()
	}
	switch p := rng.IntN(100); {
	case p < 30:
		return casInput{kind: casGet, name: name}
	case p < 60:
		return casInput{kind: casPut, name: name, target: target, cond: ifSeen}
	case p < 72:
		return casInput{kind: casPut, name: name, target: target, cond: indexapi.IfAbsent()}
	case p < 80:
		return casInput{kind: casPut, name: name, target: target, cond: indexapi.IfLive()}
	case p < 85:
		return casInput{kind: casPut, name: name, target: target}
	}
	return casInput{kind: casDelete, name: name, cond: ifSeen}
}

// runCASClients runs clients goroutines of ops calls each and returns the
// history, timed by a shared logical clock (a counter read at call and at
// return, so real-time order is preserved).
func runCASClients(t *testing.T, c *casClient, clients, ops int) []porcupine.Operation {
	t.Helper()
	var (
		clk   atomic.Int64
		mu    sync.Mutex
		hist  []porcupine.Operation
		wg    sync.WaitGroup
		start = make(chan struct{})
	)
	for id := range clients {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(id), 42))
			seen := map[string]uint64{}
			<-start
			for range ops {
				in := nextInput(rng, seen)
				call := clk.Add(1)
				out, err := c.do(context.Background(), in)
				ret := clk.Add(1)
				if err != nil {
					t.Errorf("client %d: %v", id, err)
					return
				}
				if out.version != 0 {
					seen[in.name] = out.version
				}
				mu.Lock()
				hist = append(hist, porcupine.Operation{ClientId: id, Input: in, Call: call, Output: out, Return: ret})
				mu.Unlock()
			}
		})
	}
	close(start)
	wg.Wait()
	return hist
}

// casHistory runs 8 clients of 40 calls each against handler (the env's
// router, possibly wrapped) and returns the history.
func casHistory(t *testing.T, e *env, handler http.Handler) []porcupine.Operation {
	t.Helper()
	ts := httptest.NewServer(handler)
	defer ts.Close()
	tr := &http.Transport{MaxIdleConnsPerHost: 16}
	defer tr.CloseIdleConnections()
	c := &casClient{base: ts.URL, hc: &http.Client{Transport: tr}, token: e.writer}
	return runCASClients(t, c, 8, 40)
}

func TestNamesCASLinearizable(t *testing.T) {
	e := newEnv(t)
	hist := casHistory(t, e, e.srv.Echo())
	if t.Failed() {
		return
	}
	// The history must exercise both outcomes of the CAS.
	counts := map[int]int{}
	for _, op := range hist {
		if op.Input.(casInput).kind != casGet {
			counts[op.Output.(casOutput).status]++
		}
	}
	if counts[http.StatusOK] == 0 || counts[http.StatusPreconditionFailed] == 0 {
		t.Fatalf("write outcomes %v: history does not exercise the CAS", counts)
	}
	t.Logf("%d operations, write outcomes %v", len(hist), counts)
	res := porcupine.CheckOperationsTimeout(casModel, hist, 10*time.Second)
	if res != porcupine.Ok {
		t.Fatalf("history of %d operations is %s (write outcomes %v)", len(hist), res, counts)
	}
}

// TestCASCheckerCatchesBrokenServer is the live negative control: a server
// that drops the precondition headers turns conditional writes into blind
// ones, and the checker must reject the resulting history.
func TestCASCheckerCatchesBrokenServer(t *testing.T) {
	e := newEnv(t)
	broken := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Header.Del("If-Match")
		r.Header.Del("If-None-Match")
		e.srv.Echo().ServeHTTP(w, r)
	})
	hist := casHistory(t, e, broken)
	if t.Failed() {
		return
	}
	if res := porcupine.CheckOperationsTimeout(casModel, hist, 10*time.Second); res != porcupine.Illegal {
		t.Fatalf("history of a server ignoring preconditions is %q, want %q", res, porcupine.Illegal)
	}
}

// histOp builds a hand-written operation.
func histOp(client int, call, ret int64, in casInput, out casOutput) porcupine.Operation {
	return porcupine.Operation{ClientId: client, Input: in, Call: call, Output: out, Return: ret}
}

// TestCASCheckerControls proves the model separates good histories from
// bad ones, so a true result above means something.
func TestCASCheckerControls(t *testing.T) {
	const n = "a.example"
	put := func(c indexapi.Cond) casInput { return casInput{kind: casPut, name: n, target: idA, cond: c} }
	del := func(c indexapi.Cond) casInput { return casInput{kind: casDelete, name: n, cond: c} }
	get := casInput{kind: casGet, name: n}
	ok := func(v uint64) casOutput { return casOutput{status: 200, version: v} }
	okGet := func(v uint64) casOutput { return casOutput{status: 200, version: v, target: idA} }
	failed := func(cur uint64) casOutput { return casOutput{status: 412, version: cur} }
	cases := []struct {
		name string
		hist []porcupine.Operation
		want bool
	}{
		{"racing creates, one wins", []porcupine.Operation{
			histOp(0, 0, 3, put(indexapi.IfAbsent()), ok(1)),
			histOp(1, 1, 2, put(indexapi.IfAbsent()), failed(1)),
			histOp(2, 4, 5, get, okGet(1)),
		}, true},
		{"delete then recreate continues numbering", []porcupine.Operation{
			histOp(0, 0, 1, put(indexapi.Cond{}), ok(1)),
			histOp(0, 2, 3, del(indexapi.IfMatch(1)), ok(2)),
			histOp(1, 4, 5, get, casOutput{status: 404, version: 2}),
			histOp(1, 6, 7, put(indexapi.IfAbsent()), ok(3)),
		}, true},
		{"two creates both succeed", []porcupine.Operation{
			histOp(0, 0, 1, put(indexapi.IfAbsent()), ok(1)),
			histOp(1, 2, 3, put(indexapi.IfAbsent()), ok(2)),
		}, false},
		{"lost update: racing If-Match both succeed", []porcupine.Operation{
			histOp(0, 0, 1, put(indexapi.Cond{}), ok(1)),
			histOp(1, 2, 5, put(indexapi.IfMatch(1)), ok(2)),
			histOp(2, 3, 4, put(indexapi.IfMatch(1)), ok(3)),
		}, false},
		{"stale read", []porcupine.Operation{
			histOp(0, 0, 1, put(indexapi.Cond{}), ok(1)),
			histOp(0, 2, 3, put(indexapi.Cond{}), ok(2)),
			histOp(1, 4, 5, get, okGet(1)),
		}, false},
		{"412 names a version that never existed", []porcupine.Operation{
			histOp(0, 0, 1, put(indexapi.IfMatch(1)), failed(1)),
		}, false},
		{"numbering restarts after a tombstone", []porcupine.Operation{
			histOp(0, 0, 1, put(indexapi.Cond{}), ok(1)),
			histOp(0, 2, 3, del(indexapi.IfLive()), ok(2)),
			histOp(0, 4, 5, put(indexapi.Cond{}), ok(1)),
		}, false},
		{"deleted name still readable", []porcupine.Operation{
			histOp(0, 0, 1, put(indexapi.Cond{}), ok(1)),
			histOp(0, 2, 3, del(indexapi.IfMatch(1)), ok(2)),
			histOp(1, 4, 5, get, okGet(1)),
		}, false},
	}
	for _, tc := range cases {
		if got := porcupine.CheckOperations(casModel, tc.hist); got != tc.want {
			t.Errorf("%s: linearizable = %v, want %v", tc.name, got, tc.want)
		}
	}
}
