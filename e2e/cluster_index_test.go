package e2e

import (
	"net/http"
	"testing"
	"time"
)

// clReplicaLimit bounds the arrival of a name write at the owner that was
// not needed for the W_idx acknowledgement (the primary sends to all owners
// at once).
const clReplicaLimit = 10 * time.Second

// TestClusterIndexOwners (docs/cluster.md §13.6, §6, §12): three index
// members, so each is an owner of every name (R 3) and W_idx is 2. With the
// name's primary killed, GET answers at once and, once the primary is seen
// dead, PUT works through the two others; the primary catches up after its
// restart. With two members killed, writes answer 503 and reads still
// answer.
func TestClusterIndexOwners(t *testing.T) {
	c := startTestCluster(t, clusterOpts{nodes: 3})
	name := "owners.example"
	rank := hrwRank(ids(c.nodes), nameKey(name))
	primary, a, b := c.byID(rank[0]), c.byID(rank[1]), c.byID(rank[2])

	rec1 := c.mustPutName(a, name, absentID(t, 1)) // forwarded to the primary
	for _, n := range c.nodes {
		c.waitLocalName(n, name, rec1, clReplicaLimit)
	}

	primary.kill9()
	for _, n := range []*clNode{a, b} {
		if r, got, err := getName(n, name, false); err != nil || r.status != http.StatusOK || got.Version != rec1.Version {
			t.Errorf("GET /names/%s on %s right after the primary's kill: %d %s (%v), want version %d", name, n.id, r.status, r.body, err, rec1.Version)
		}
	}
	c.waitDead(primary)
	rec2 := c.mustPutName(b, name, absentID(t, 2))
	if rec2.Version != rec1.Version+1 {
		t.Errorf("PUT after the primary died: version %d, want %d", rec2.Version, rec1.Version+1)
	}
	for _, n := range []*clNode{a, b} {
		if r, got, err := getName(n, name, false); err != nil || r.status != http.StatusOK || got.Version != rec2.Version {
			t.Errorf("GET /names/%s on %s: %d %s (%v), want version %d", name, n.id, r.status, r.body, err, rec2.Version)
		}
	}

	c.restart(primary)
	c.waitConverged(clHealLimit, "the primary's restart")
	c.waitLocalName(primary, name, rec2, clAntiEntropyLimit)

	survivor := c.nodes[0]
	var gone []*clNode
	for _, n := range c.nodes[1:] {
		n.kill9()
		gone = append(gone, n)
	}
	c.waitDead(gone...)
	r, _, err := c.putName(survivor, name, absentID(t, 3))
	if err != nil {
		t.Fatalf("PUT /names/%s on the lone survivor: %v", name, err)
	}
	wantError(t, "PUT on a lone survivor of three index members", r, http.StatusServiceUnavailable, "upstream_unavailable")
	// The refused write's outcome is unknown (docs/cluster.md §6): the survivor may have
	// committed it locally, so either version may be read.
	r, got, err := getName(survivor, name, false)
	if err != nil || r.status != http.StatusOK || got.Version < rec2.Version {
		t.Errorf("GET /names/%s on the lone survivor: %d %s (%v), want version ≥ %d", name, r.status, r.body, err, rec2.Version)
	}
}
