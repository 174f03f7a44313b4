package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"syscall"
	"testing"
)

// TestClusterUpgradeKeepsNames (docs/cluster.md §14, migration): a node
// that held names with the cluster off becomes the first server of a new
// cluster (bootstrap_expect = 1; two more servers join and are added).
// Nothing is lost: every name, its history and its tombstone reach every
// node's own store through the log, and compare-and-swap goes on from the
// versions the node had.
func TestClusterUpgradeKeepsNames(t *testing.T) {
	c := newTestCluster(t, clusterOpts{nodes: 3, seed: true})
	first := c.nodes[0]
	solo := launch(t, nodeOpts{dataDir: first.dataDir, ports: first.ports(),
		args: []string{"--config", first.cfgPath, "--cluster.enabled=false"}})
	if err := solo.waitReady(false); err != nil {
		t.Fatal(err)
	}
	c.tok = solo.token("index:write")
	want := map[string]nameAnswer{}
	for i := range 12 {
		name := fmt.Sprintf("kept-%02d.example", i)
		rec := c.mustPutName(&clNode{node: solo, id: "solo"}, name, absentID(t, 100+i))
		if i%3 == 0 {
			rec = c.mustPutName(&clNode{node: solo, id: "solo"}, name, absentID(t, 200+i))
		}
		want[name] = rec
	}
	r, err := clReq(clIndexLimit, http.MethodDelete, "http://"+solo.index+"/names/kept-11.example",
		hdr("Authorization", "Bearer "+c.tok), nil)
	if err != nil || r.status != http.StatusOK {
		t.Fatalf("DELETE with the cluster off: %d %s %v", r.status, r.body, err)
	}
	delete(want, "kept-11.example")
	solo.signal(syscall.SIGTERM)
	if code := solo.waitExit(clHealLimit); code != 0 {
		t.Fatalf("the single node exited %d", code)
	}

	c.launchAll("the upgrade")
	c.waitLeader(c.nodes, "the upgrade")
	for _, n := range c.nodes {
		for name, rec := range want {
			c.waitLocalName(n, name, rec, clCatchUpLimit)
		}
		waitFor(t, clCatchUpLimit, clPollEvery, n.id+" to hold the tombstone", func() (bool, string) {
			r, err := clReq(clIndexLimit, http.MethodGet, "http://"+n.index+"/names/kept-11.example/versions", nil, nil)
			return err == nil && r.status == http.StatusOK && strings.Contains(string(r.body), `"deleted":true`),
				fmt.Sprintf("%d %.200s %v", r.status, r.body, err)
		})
	}
	name := "kept-00.example"
	body, _ := json.Marshal(map[string]string{"b3": absentID(t, 300)})
	r, err = clReq(clIndexLimit, http.MethodPut, "http://"+c.nodes[2].index+"/names/"+name,
		hdr("Authorization", "Bearer "+c.tok, "Content-Type", "application/json",
			"If-Match", fmt.Sprintf(`"%d"`, want[name].Version)), body)
	if err != nil || r.status != http.StatusOK || !strings.Contains(string(r.body), fmt.Sprintf(`"version":%d`, want[name].Version+1)) {
		t.Fatalf("compare-and-swap on an imported name: %d %s %v", r.status, r.body, err)
	}
}
