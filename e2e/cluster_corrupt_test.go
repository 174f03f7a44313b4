package e2e

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// clPullLimit bounds the urgent pull of a quarantined object (docs/cluster.md §5: queued at
// once on the urgent lane; one object of a few chunks at the pace).
const clPullLimit = 20 * time.Second

// TestClusterCorruptObjectRepaired (docs/cluster.md §13.5): one byte
// flipped in the object file of one holder: that holder's read fails (500
// corrupt: the first chunk is checked before headers, docs/storage.md §4), the
// object is quarantined and counted, pulled back from the other holder,
// and then reads pass on that node, through the gateway and with `ron get`.
func TestClusterCorruptObjectRepaired(t *testing.T) {
	c := startTestCluster(t, clusterOpts{nodes: 3})
	o := genObjects(5, 1, 200<<10, 200<<10)[0] // four chunks
	c.writePlaced([]clObject{o})
	c.waitPlaced([]clObject{o}, c.nodes, 10*time.Second)
	rank := hrwRank(ids(c.nodes), objectKey(o.id))
	h := c.byID(rank[1]) // the holder that got the synchronous copy

	flipByte(t, h.objectPath(o.id), 100)
	r, err := clReq(clWriteLimit, http.MethodGet, h.storageBase()+"/o/"+o.id, nil, nil)
	if err != nil {
		t.Fatalf("GET of the corrupted object on %s: %v", h.id, err)
	}
	wantError(t, "GET of the corrupted object", r, http.StatusInternalServerError, "corrupt")
	waitFor(t, 10*time.Second, clPollEvery, "the object to be quarantined and counted", func() (bool, string) {
		q := quarantined(h, o.id)
		v, _, err := h.metricValue("ron_storage_corruptions_total", `kind="data"`)
		return len(q) > 0 && v >= 1, fmt.Sprintf("quarantine entries %v, ron_storage_corruptions_total{kind=data} %v (%v)", q, v, err)
	})
	waitFor(t, clPullLimit, clPollEvery, "the object to be pulled back to "+h.id, func() (bool, string) {
		err := readBack(h.storageBase(), o)
		return err == nil, fmt.Sprint(err)
	})
	if err := readBack(c.gatewayBase(), o); err != nil {
		t.Error(err)
	}
	if err := ronGet(t, h, h, o); err != nil {
		t.Error(err)
	}
	c.waitPlaced([]clObject{o}, c.nodes, 10*time.Second)
}

// quarantined lists n's quarantine entries for id (docs/storage.md §5 layout).
func quarantined(n *clNode, id string) []string {
	ents, _ := os.ReadDir(filepath.Join(n.storageDir(), "quarantine"))
	var out []string
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), strings.TrimPrefix(id, "b3:")+".") {
			out = append(out, e.Name())
		}
	}
	return out
}
