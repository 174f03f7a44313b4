package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"
)

// clObserveLimit bounds one observation request: a node that does not
// answer within it (killed, stopped) counts as an error, never as a hang.
const clObserveLimit = 3 * time.Second

// clGet sends one GET bounded by clObserveLimit.
func clGet(url string) (httpResult, error) {
	return clReq(clObserveLimit, http.MethodGet, url, nil, nil)
}

// adminGet is clGet of path on n's admin listener with n.adminAuth (the
// admin token that guarded endpoints such as /metrics want from a caller
// not on loopback, as the test process is for the nodes of a lab).
func (n *clNode) adminGet(path string) (httpResult, error) {
	return clReq(clObserveLimit, http.MethodGet, "http://"+n.admin+path, n.adminAuth, nil)
}

// memberStatus is one entry of the status document's cluster.members (docs/cluster.md §9).
type memberStatus struct {
	ID    string   `json:"id"`
	State string   `json:"state"`
	Roles []string `json:"roles"`
	Zone  string   `json:"zone"`
	Since string   `json:"since"`
}

// repairStatus is the storage role's details.repair (docs/cluster.md §9).
type repairStatus struct {
	State           string   `json:"state"`
	Pass            int64    `json:"pass"`
	Scanned         int64    `json:"scanned"`
	Total           int64    `json:"total"`
	UnderReplicated int64    `json:"under_replicated"`
	Queued          int64    `json:"queued"`
	Skipped         int64    `json:"skipped"`
	BytesPending    int64    `json:"bytes_pending"`
	BytesDone       int64    `json:"bytes_done"`
	RateBytesPerS   float64  `json:"rate_bytes_per_s"`
	PaceBytesPerS   float64  `json:"pace_bytes_per_s"`
	BoostUntil      *string  `json:"boost_until"`
	EtaS            *float64 `json:"eta_s"`
	Errors          int64    `json:"errors"`
	LastError       string   `json:"last_error"`
}

// clStatus is the part of /api/v1/status the cluster tests read.
type clStatus struct {
	Ready bool `json:"ready"`
	Roles []struct {
		Name    string          `json:"name"`
		State   string          `json:"state"`
		Details json.RawMessage `json:"details"`
	} `json:"roles"`
	Cluster *struct {
		NodeID  string         `json:"node_id"`
		Zone    string         `json:"zone"`
		Members []memberStatus `json:"members"`
	} `json:"cluster"`
	ControlPlane *struct {
		State   string `json:"state"`
		Leader  string `json:"leader"`
		Servers []struct {
			ID    string `json:"id"`
			Voter bool   `json:"voter"`
		} `json:"servers"`
	} `json:"control_plane"`
}

// status reads n's /api/v1/status.
func (n *clNode) status() (clStatus, error) {
	var st clStatus
	r, err := n.adminGet("/api/v1/status")
	if err != nil {
		return st, err
	}
	if r.status != http.StatusOK {
		return st, fmt.Errorf("status %d: %.200s", r.status, r.body)
	}
	if err := json.Unmarshal(r.body, &st); err != nil {
		return st, fmt.Errorf("status document: %v", err)
	}
	if st.Cluster == nil {
		return st, fmt.Errorf("status document without a top-level cluster object: %.300s", r.body)
	}
	return st, nil
}

// repair is the storage role's details.repair of st.
func (st clStatus) repair() (repairStatus, error) {
	for _, r := range st.Roles {
		if r.Name != "storage" {
			continue
		}
		var d struct {
			Repair *repairStatus `json:"repair"`
		}
		if err := json.Unmarshal(r.Details, &d); err != nil {
			return repairStatus{}, fmt.Errorf("storage details: %v", err)
		}
		if d.Repair == nil {
			return repairStatus{}, fmt.Errorf("storage details without repair: %.300s", r.Details)
		}
		return *d.Repair, nil
	}
	return repairStatus{}, fmt.Errorf("status without a storage role")
}

// members summarises what n's status says about membership, as
// "id=state …" sorted by id.
func (st clStatus) members() string {
	var parts []string
	for _, m := range st.Cluster.Members {
		parts = append(parts, m.ID+"="+m.State)
	}
	slices.Sort(parts)
	return strings.Join(parts, " ")
}

// membersAre reports whether n sees exactly the states want (id → state),
// plus a description of what it saw.
func (n *clNode) membersAre(want map[string]string) (bool, string) {
	st, err := n.status()
	if err != nil {
		return false, fmt.Sprintf("%s: %v", n.id, err)
	}
	got := map[string]string{}
	for _, m := range st.Cluster.Members {
		got[m.ID] = m.State
	}
	seen := n.id + " sees [" + st.members() + "]"
	if len(got) != len(want) {
		return false, seen
	}
	for id, s := range want {
		if got[id] != s {
			return false, seen
		}
	}
	return true, seen
}

// waitMembers polls until every node in observers sees exactly want.
func (c *testCluster) waitMembers(observers []*clNode, want map[string]string, limit time.Duration, what string) {
	c.t.Helper()
	waitFor(c.t, limit, clPollEvery, what, func() (bool, string) {
		var seen []string
		ok := true
		for _, n := range observers {
			good, s := n.membersAre(want)
			ok = ok && good
			seen = append(seen, s)
		}
		return ok, strings.Join(seen, "; ")
	})
}

// waitConverged waits until every running node sees every node alive.
func (c *testCluster) waitConverged(limit time.Duration, when string) {
	c.t.Helper()
	want := map[string]string{}
	for _, n := range c.nodes {
		want[n.id] = "alive"
	}
	c.waitMembers(c.running(), want, limit, "all members alive everywhere ("+when+")")
}

// waitDead waits until every node other than gone sees the members in gone
// as dead and the rest alive.
func (c *testCluster) waitDead(gone ...*clNode) {
	c.t.Helper()
	want := map[string]string{}
	var observers []*clNode
	for _, n := range c.nodes {
		want[n.id] = "alive"
		if !slices.Contains(gone, n) {
			observers = append(observers, n)
		}
	}
	for _, g := range gone {
		want[g.id] = "dead"
	}
	c.waitMembers(observers, want, clDeadLimit, fmt.Sprintf("%v to be seen dead", ids(gone)))
}

// waitFor polls cond every `every` until it reports true; past limit the
// test fails with what cond last described.
func waitFor(t testing.TB, limit, every time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	var last string
	if !pollUntilEvery(limit, every, func() bool {
		var ok bool
		ok, last = cond()
		return ok
	}) {
		t.Fatalf("timed out after %s waiting for %s; last seen: %s", limit, what, last)
	}
}

// metricValue reads n's /metrics and returns the sum of the samples named
// name whose labels contain every pair in labels; found is false when no
// sample matched.
func (n *clNode) metricValue(name string, labels ...string) (v float64, found bool, err error) {
	r, err := n.adminGet("/metrics")
	if err != nil {
		return 0, false, err
	}
	err = scanMetric(bytes.NewReader(r.body), name, labels, func(x float64) bool {
		v, found = v+x, true
		return true
	})
	if err != nil {
		return 0, false, err
	}
	return v, found, nil
}

// mustMetric is metricValue that fails the test on an error or a missing
// series.
func (n *clNode) mustMetric(name string, labels ...string) float64 {
	n.t.Helper()
	v, found, err := n.metricValue(name, labels...)
	if err != nil {
		n.t.Fatalf("%s: /metrics: %v", n.id, err)
	}
	if !found {
		n.t.Fatalf("%s: /metrics has no %s%v (docs/cluster.md §11)", n.id, name, labels)
	}
	return v
}

// executedBytes is ron_repair_bytes_total{phase="executed"} of n; a series
// not exported yet (a counter vector before its first increment) is 0.
func (n *clNode) executedBytes() float64 {
	n.t.Helper()
	v, _, err := n.metricValue("ron_repair_bytes_total", `role="storage"`, `phase="executed"`)
	if err != nil {
		n.t.Fatalf("%s: /metrics: %v", n.id, err)
	}
	return v
}

// placementAnswer is GET /api/v1/cluster/placement/{b3} (docs/cluster.md §9).
type placementAnswer struct {
	Targets []string `json:"targets"`
	Holders []string `json:"holders"`
}

// placement asks n's admin listener for id's targets and holders.
func (n *clNode) placement(id string) (placementAnswer, error) {
	var p placementAnswer
	r, err := n.adminGet("/api/v1/cluster/placement/" + id)
	if err != nil {
		return p, err
	}
	if r.status != http.StatusOK {
		return p, fmt.Errorf("placement %s: %d %.200s", id, r.status, r.body)
	}
	if err := json.Unmarshal(r.body, &p); err != nil {
		return p, fmt.Errorf("placement %s: %q: %v", id, r.body, err)
	}
	slices.Sort(p.Targets)
	slices.Sort(p.Holders)
	return p, nil
}

// inventoryOf pages through n's GET /inventory (storage:read_inventory)
// and returns id → size; errors are returned, not fatal.
func (c *testCluster) inventoryOf(n *clNode) (map[string]int64, error) {
	return n.listInventory(c.tok, 10000, clObserveLimit)
}

// holdersByInventory maps the id of every object in objs to the sorted ids
// of the nodes in ns whose inventory lists it.
func (c *testCluster) holdersByInventory(ns []*clNode, objs []clObject) (map[string][]string, error) {
	out := make(map[string][]string, len(objs))
	for _, n := range ns {
		inv, err := c.inventoryOf(n)
		if err != nil {
			return nil, err
		}
		for _, o := range objs {
			if _, ok := inv[o.id]; ok {
				out[o.id] = append(out[o.id], n.id)
			}
		}
	}
	for _, hs := range out {
		slices.Sort(hs)
	}
	return out, nil
}

// mintToken mints a token with one caveat of scopes through node 0's admin
// API (loopback needs no admin token), or in a lab, where the test process
// is no loopback caller, with `ron token mint` from node 0's root key;
// every node verifies it (shared key).
func (c *testCluster) mintToken(scopes ...string) string {
	c.t.Helper()
	if c.lab != nil {
		return mintCLI(c.t, c.nodes[0].dataDir, "--scope", strings.Join(scopes, ","), "--ttl", "1h")
	}
	body, _ := json.Marshal(map[string]any{"scopes": scopes, "ttl": "1h"})
	r, err := clReq(clObserveLimit, http.MethodPost, "http://"+c.nodes[0].admin+"/api/v1/tokens", hdr("Content-Type", "application/json"), body)
	if err != nil {
		c.t.Fatalf("mint token: %v", err)
	}
	var tok struct {
		Token string `json:"token"`
	}
	if r.status != http.StatusOK || json.Unmarshal(r.body, &tok) != nil || tok.Token == "" {
		c.t.Fatalf("mint token: %d %s", r.status, r.body)
	}
	return tok.Token
}
