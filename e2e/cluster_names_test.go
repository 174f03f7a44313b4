package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"
)

// clIndexLimit bounds one index request: a forward to the primary and the
// owners' copies, each under the index's own deadlines.
const clIndexLimit = 10 * time.Second

// nameAnswer is a name record as the index answers it (docs/index.md §3).
type nameAnswer struct {
	Name    string `json:"name"`
	B3      string `json:"b3"`
	Version int64  `json:"version"`
}

// putName sends PUT /names/{name} {"b3"} to n's index with the test token
// and returns the answer (status, record when 200).
func (c *testCluster) putName(n *clNode, name, b3 string) (httpResult, nameAnswer, error) {
	var rec nameAnswer
	body, _ := json.Marshal(map[string]string{"b3": b3})
	r, err := clReq(clIndexLimit, http.MethodPut, "http://"+n.index+"/names/"+name,
		hdr("Authorization", "Bearer "+c.tok, "Content-Type", "application/json"), body)
	if err != nil {
		return r, rec, err
	}
	if r.status == http.StatusOK {
		if err := json.Unmarshal(r.body, &rec); err != nil {
			return r, rec, fmt.Errorf("PUT /names/%s reply %q: %v", name, r.body, err)
		}
	}
	return r, rec, nil
}

// mustPutName is putName that fails unless the answer is 200.
func (c *testCluster) mustPutName(n *clNode, name, b3 string) nameAnswer {
	c.t.Helper()
	r, rec, err := c.putName(n, name, b3)
	if err != nil {
		c.t.Fatalf("PUT /names/%s on %s: %v", name, n.id, err)
	}
	if r.status != http.StatusOK {
		c.t.Fatalf("PUT /names/%s on %s: %d %s", name, n.id, r.status, r.body)
	}
	if rec.Name != name || rec.B3 != b3 || rec.Version < 1 {
		c.t.Fatalf("PUT /names/%s on %s: record %+v", name, n.id, rec)
	}
	return rec
}

// getName reads GET /names/{name} from n's index (local=true: from its own
// store only, docs/index.md §5); rec is set on 200.
func getName(n *clNode, name string, local bool) (httpResult, nameAnswer, error) {
	var rec nameAnswer
	u := "http://" + n.index + "/names/" + name
	if local {
		u += "?local=1"
	}
	r, err := clReq(clIndexLimit, http.MethodGet, u, hdr("Cache-Control", "no-cache"), nil)
	if err != nil {
		return r, rec, err
	}
	if r.status == http.StatusOK {
		if err := json.Unmarshal(r.body, &rec); err != nil {
			return r, rec, fmt.Errorf("GET /names/%s reply %q: %v", name, r.body, err)
		}
	}
	return r, rec, nil
}

// waitLocalName polls until n's own store holds name at version want.
func (c *testCluster) waitLocalName(n *clNode, name string, want nameAnswer, limit time.Duration) {
	c.t.Helper()
	waitFor(c.t, limit, clPollEvery, fmt.Sprintf("%s's own index store to hold %s version %d", n.id, name, want.Version), func() (bool, string) {
		r, rec, err := getName(n, name, true)
		if err != nil {
			return false, err.Error()
		}
		return r.status == http.StatusOK && rec.Version == want.Version && rec.B3 == want.B3,
			fmt.Sprintf("%d %.200s", r.status, r.body)
	})
}

// waitLeader polls until every node of among sees the same control-plane
// leader, one of among, and returns it.
func (c *testCluster) waitLeader(among []*clNode, when string) *clNode {
	c.t.Helper()
	var leader *clNode
	waitFor(c.t, clElectionLimit, clPollEvery, "one control-plane leader among "+strings.Join(ids(among), ",")+" ("+when+")", func() (bool, string) {
		seen := map[string]bool{}
		var notes []string
		for _, n := range among {
			st, err := n.status()
			if err != nil || st.ControlPlane == nil {
				notes = append(notes, fmt.Sprintf("%s: %v", n.id, err))
				continue
			}
			seen[st.ControlPlane.Leader] = true
			notes = append(notes, n.id+"→"+st.ControlPlane.Leader)
		}
		if len(seen) != 1 || len(notes) != len(among) {
			return false, strings.Join(notes, " ")
		}
		for id := range seen {
			if i := slices.IndexFunc(among, func(n *clNode) bool { return n.id == id }); i >= 0 {
				leader = among[i]
				return true, ""
			}
		}
		return false, strings.Join(notes, " ")
	})
	return leader
}
