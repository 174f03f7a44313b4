package e2e

import (
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestIndexPeerDownBreaker: with one of three nodes killed (SIGKILL), the
// other two keep answering resolves within the lookup budget; their breakers
// for the dead peer stay closed below 20 requests, open once enough requests
// failed, and close again (after the 10 s cooldown, through half-open probes)
// once the peer is restarted on the same ports and data dir.
func TestIndexPeerDownBreaker(t *testing.T) {
	t.Parallel()
	nodes := startCluster(t, 3)
	a, b, c := nodes[0], nodes[1], nodes[2]
	askers := []*node{a, c}
	data := []byte("held by A while B is down\n")
	dir := writeTree(t, map[string][]byte{"held.txt": data})
	if put := ron(t, cliOpts{env: a.cliEnv()}, "put", filepath.Join(dir, "held.txt")); put.code != 0 {
		t.Fatalf("ron put on A: exit %d: %s", put.code, put.stderr)
	}
	id := idOf(data)
	a.waitAnnounced(id)
	b.kill9()

	// Four resolves per asker make at most 4 × (1 + 3 retries) = 16 requests
	// to B: below breaker_min_requests (20), so the breaker stays closed.
	r := &resolveRounds{t: t, askers: askers}
	for range 4 {
		r.round(1)
	}
	for _, n := range askers {
		if s := n.breakerState(b); s != "closed" {
			t.Fatalf("%s's breaker for dead B is %q after at most 16 requests, want closed (trips at >= 20)", n.name, s)
		}
	}
	lastClosed := r.untilOpen(b)
	for _, n := range askers {
		if v := n.metric("ron_breaker_open_total", `role="index"`, `target="`+b.index+`"`); v < 1 {
			t.Errorf("%s: ron_breaker_open_total for B = %v, want >= 1", n.name, v)
		}
	}
	// With the breaker open B is skipped; resolves stay fast and right.
	r.round(3)
	if v := a.metric("ron_index_peer_requests_total", `target="`+b.index+`"`, `result="skipped"`); v < 1 {
		t.Errorf("A: ron_index_peer_requests_total{target=B,result=skipped} = %v, want >= 1", v)
	}
	start := time.Now()
	wantProvidedBy(t, "resolve on C with B down", c.mustResolve(id, "--no-cache"), id, a, "blob")
	if d := time.Since(start); d > resolveBudget+resolveSlack+cliSpawnSlack {
		t.Errorf("ron resolve on C with B down took %s, want < %s", d, resolveBudget+resolveSlack+cliSpawnSlack)
	}

	b = b.restart()
	closedAt := r.untilClosed(b)
	for n, at := range closedAt {
		if gap := at.Sub(lastClosed[n]); gap < breakerCooldown {
			t.Errorf("%s's breaker for B closed %s after it was last seen closed, want >= the %s cooldown", n.name, gap, breakerCooldown)
		}
	}
	if ans := b.mustResolve(id); ans.Source != "peer" || ans.Target != id {
		t.Errorf("resolve on restarted B: %+v, want %s from a peer", ans, id)
	}
}

// cliSpawnSlack covers starting the ron binary for one CLI call.
const cliSpawnSlack = 500 * time.Millisecond

// breakerRoundLimit bounds the rounds that may pass before a dead peer's
// breakers open: 30 rounds of 5 resolves are 150 lookups per asker, far
// beyond the 20 failed requests the breaker needs.
const breakerRoundLimit = 30

// resolveRounds sends uncached resolves of never-seen ids to askers and
// checks each answer: 404 (nobody holds it, a live peer says so) within the
// lookup budget.
type resolveRounds struct {
	t      *testing.T
	askers []*node
	seq    int
}

// round sends per concurrent resolves to every asker at once.
func (r *resolveRounds) round(per int) {
	r.t.Helper()
	type result struct {
		n      *node
		key    string
		status int
		took   time.Duration
		err    error
	}
	results := make(chan result, per*len(r.askers))
	var wg sync.WaitGroup
	for _, n := range r.askers {
		for range per {
			r.seq++
			key := absentID(r.t, r.seq)
			wg.Go(func() {
				status, took, err := timedResolve(n.indexURL(), key)
				results <- result{n, key, status, took, err}
			})
		}
	}
	wg.Wait()
	close(results)
	for res := range results {
		switch {
		case res.err != nil:
			r.t.Errorf("resolve %s on %s: %v", res.key, res.n.name, res.err)
		case res.status != http.StatusNotFound:
			r.t.Errorf("resolve of absent %s on %s: status %d, want 404", res.key, res.n.name, res.status)
		case res.took > resolveBudget+resolveSlack:
			r.t.Errorf("resolve on %s took %s, want < %s + %s slack", res.n.name, res.took, resolveBudget, resolveSlack)
		}
	}
}

// untilOpen runs rounds until every asker's breaker for peer is open and
// returns, per asker, when its breaker was last seen not open.
func (r *resolveRounds) untilOpen(peer *node) map[*node]time.Time {
	r.t.Helper()
	last := map[*node]time.Time{}
	for i := 0; ; i++ {
		open := 0
		for _, n := range r.askers {
			if n.breakerState(peer) == "open" {
				open++
			} else {
				last[n] = time.Now()
			}
		}
		if open == len(r.askers) {
			r.t.Logf("breakers for %s open after %d rounds of 5; on %s: %s", peer.name, i, r.askers[0].name,
				strings.Join(r.askers[0].metricSeries("ron_index_peer_requests_total", `target="`+peer.index+`"`), "; "))
			return last
		}
		if i == breakerRoundLimit {
			r.t.Fatalf("breakers for dead %s not open on every asker after %d rounds of 5 failing lookups", peer.name, i)
		}
		r.round(5)
	}
}

// untilClosed runs one round every 200 ms until every asker's breaker for
// peer is closed again and returns when each was first seen closed.
func (r *resolveRounds) untilClosed(peer *node) map[*node]time.Time {
	r.t.Helper()
	closed := map[*node]time.Time{}
	ok := pollUntilEvery(breakerCloseLimit, 200*time.Millisecond, func() bool {
		r.round(1)
		for _, n := range r.askers {
			if _, seen := closed[n]; !seen && n.breakerState(peer) == "closed" {
				closed[n] = time.Now()
			}
		}
		return len(closed) == len(r.askers)
	})
	if !ok {
		var states []string
		for _, n := range r.askers {
			states = append(states, fmt.Sprintf("%s: %s", n.name, n.breakerState(peer)))
		}
		r.t.Fatalf("breakers for restarted %s not closed after %s: %s", peer.name, breakerCloseLimit, strings.Join(states, ", "))
	}
	return closed
}

// timedResolve is one GET /resolve/{key} with Cache-Control: no-cache: its
// status and duration. It never touches a testing.T (goroutine-safe).
func timedResolve(base, key string) (int, time.Duration, error) {
	req, err := http.NewRequest(http.MethodGet, base+"/resolve/"+key, nil)
	if err != nil {
		return 0, 0, err
	}
	req.Header.Set("Cache-Control", "no-cache")
	start := time.Now()
	resp, err := httpClient.Do(req)
	if err != nil {
		return 0, time.Since(start), err
	}
	defer resp.Body.Close()
	_, err = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, time.Since(start), err
}

// TestIndexNamesSurviveKill9: acknowledged name writes (live records,
// history, tombstones) survive a SIGKILL; numbering continues after restart.
func TestIndexNamesSurviveKill9(t *testing.T) {
	t.Parallel()
	n := startNode(t, nodeOpts{})
	t1, t2 := idOf([]byte("first")), idOf([]byte("second"))
	n.mustName("set", "keep.example", t1)
	n.mustName("set", "keep.example", t2, "--if-version", "1")
	n.mustName("set", "gone.example", t1)
	if res := n.nameCLI("rm", "gone.example"); res.code != 0 {
		t.Fatalf("name rm: exit %d: %s", res.code, res.stderr)
	}
	n.kill9()

	n = n.restart()
	if rec := n.mustName("get", "keep.example"); rec.B3 != t2 || rec.Version != 2 {
		t.Errorf("after kill -9: keep.example %+v, want v2 → %s", rec, t2)
	}
	wantHistory(t, n.history("keep.example"), "2:"+t2, "1:"+t1)
	wantHistory(t, n.history("gone.example"), "2:deleted", "1:"+t1)
	if res := n.nameCLI("get", "gone.example"); res.code != 1 {
		t.Errorf("after kill -9: name get of the deleted name: exit %d, want 1", res.code)
	}
	if ans := n.mustResolve("keep.example"); ans.Target != t2 || ans.NameVersion != 2 || ans.Source != "local" {
		t.Errorf("after kill -9: resolve keep.example %+v, want v2 → %s, local", ans, t2)
	}
	if rec := n.mustName("set", "keep.example", t1, "--if-version", "2"); rec.Version != 3 {
		t.Errorf("set after restart: %+v, want v3", rec)
	}
}
