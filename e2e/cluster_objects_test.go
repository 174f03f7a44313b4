package e2e

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/zeebo/blake3"
)

// hrwScore is docs/cluster.md §3's score, computed here independently of
// the product: the big-endian uint64 of the first 8 bytes of
// BLAKE3-256(node_id ‖ 0x00 ‖ key).
func hrwScore(node string, key []byte) uint64 {
	h := blake3.New()
	_, _ = h.Write([]byte(node))
	_, _ = h.Write([]byte{0})
	_, _ = h.Write(key)
	return binary.BigEndian.Uint64(h.Sum(nil)[:8])
}

// hrwRank orders nodes by score, highest first (ties by id; no zones).
func hrwRank(nodes []string, key []byte) []string {
	out := slices.Clone(nodes)
	slices.SortFunc(out, func(a, b string) int {
		sa, sb := hrwScore(a, key), hrwScore(b, key)
		switch {
		case sa > sb:
			return -1
		case sa < sb:
			return 1
		}
		return strings.Compare(a, b)
	})
	return out
}

// hrwTop is the sorted top n of nodes for key.
func hrwTop(n int, nodes []string, key []byte) []string {
	r := hrwRank(nodes, key)
	if len(r) > n {
		r = r[:n]
	}
	slices.Sort(r)
	return r
}

// objectKey is the raw digest of an object id "b3:<hex>".
func objectKey(id string) []byte {
	b, err := hex.DecodeString(strings.TrimPrefix(id, "b3:"))
	if err != nil || len(b) != 32 {
		panic("bad object id " + id)
	}
	return b
}

// nameKey is BLAKE3-256("name:" + name).
func nameKey(name string) []byte {
	sum := blake3.Sum256([]byte("name:" + name))
	return sum[:]
}

// TestClusterHRWVectors checks the test's own rendezvous code against the
// spec's vectors (docs/cluster.md §3), so the placement checks below compare the product
// with a known-good reference.
func TestClusterHRWVectors(t *testing.T) {
	nodes := []string{"node-a", "node-b", "node-c", "node-d"}
	hello := blake3.Sum256([]byte("hello world"))
	if got := hrwRank(nodes, hello[:]); strings.Join(got, " ") != "node-b node-a node-d node-c" {
		t.Errorf("rank of hello world: %v", got)
	}
	if s := fmt.Sprintf("%016x", hrwScore("node-b", hello[:])); s != "b0653ff333c39fd4" {
		t.Errorf("score(node-b, hello world) = %s", s)
	}
	key := nameKey("blog.example")
	if hex.EncodeToString(key) != "266d3578267ab6f74a143f9a432a8c2fba30d89b3b4d6a70a3bd1d556608f33e" {
		t.Errorf("name key of blog.example = %x", key)
	}
	if got := hrwRank(nodes, key); strings.Join(got, " ") != "node-b node-c node-d node-a" {
		t.Errorf("rank of blog.example: %v", got)
	}
}

// clObject is one test object.
type clObject struct {
	id   string
	data []byte
}

// genObjects returns count distinct objects whose sizes spread
// log-uniformly from minSize to maxSize (both included).
func genObjects(seed uint64, count, minSize, maxSize int) []clObject {
	out := make([]clObject, count)
	for i := range out {
		size := minSize
		if count > 1 {
			f := float64(i) / float64(count-1)
			size = int(math.Round(float64(minSize) * math.Pow(float64(maxSize)/float64(minSize), f)))
		}
		data := randomBytes(seed*100000+uint64(i), size)
		out[i] = clObject{id: idOf(data), data: data}
	}
	// Shuffle, so that every writer sees small and large ones.
	rand.New(rand.NewPCG(seed, 7)).Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out
}

// totalBytes sums the objects' sizes.
func totalBytes(objs []clObject) int64 {
	var n int64
	for _, o := range objs {
		n += int64(len(o.data))
	}
	return n
}

// writeAnswer is the JSON reply to a write in cluster mode (docs/cluster.md §4).
type writeAnswer struct {
	CID     string `json:"cid"`
	Size    int64  `json:"size"`
	Created bool   `json:"created"`
	Copies  *int   `json:"copies"`
}

// postObject sends POST {base}/o with the test token; transport errors
// and non-2xx answers are returned as errors.
func (c *testCluster) postObject(base string, o clObject) (writeAnswer, error) {
	var a writeAnswer
	r, err := clReq(clWriteLimit, http.MethodPost, base+"/o", hdr("Authorization", "Bearer "+c.tok, "Content-Type", "application/octet-stream"), o.data)
	if err != nil {
		return a, err
	}
	if r.status != http.StatusCreated && r.status != http.StatusOK {
		return a, fmt.Errorf("POST %s/o: %d %.300s", base, r.status, r.body)
	}
	if err := json.Unmarshal(r.body, &a); err != nil {
		return a, fmt.Errorf("POST %s/o reply %q: %v", base, r.body, err)
	}
	if a.CID != o.id {
		return a, fmt.Errorf("POST %s/o: cid %s, want %s", base, a.CID, o.id)
	}
	return a, nil
}

// clWriteLimit bounds one object write or read: a 4 MiB body on a loaded
// 2-core machine plus a replica stall timeout (5 s) and a fallback target.
const clWriteLimit = 30 * time.Second

// mustWrite writes o through base and fails unless the reply has copies 2.
func (c *testCluster) mustWrite(base string, o clObject) {
	c.t.Helper()
	if err := c.writeTwo(base, o); err != nil {
		c.t.Fatal(err)
	}
}

// writeTwo writes o through base; a failed write or a reply without
// copies 2 is an error.
func (c *testCluster) writeTwo(base string, o clObject) error {
	a, err := c.postObject(base, o)
	if err != nil {
		return err
	}
	if !a.twoCopies() {
		return fmt.Errorf("POST %s/o of %s (%d bytes): copies %s, want 2 (docs/cluster.md §4.3)", base, o.id, len(o.data), fmtCopies(a.Copies))
	}
	return nil
}

// twoCopies reports whether the reply says copies 2 (docs/cluster.md §4.3).
func (a writeAnswer) twoCopies() bool { return a.Copies != nil && *a.Copies == 2 }

func fmtCopies(p *int) string {
	if p == nil {
		return "absent"
	}
	return fmt.Sprint(*p)
}

// storageBase is n's storage listener base URL; gatewayBase node 0's
// gateway.
func (n *clNode) storageBase() string      { return "http://" + n.storage }
func (c *testCluster) gatewayBase() string { return "http://" + c.nodes[0].gateway }

// readBack GETs id from base + "/o/" and reports a mismatch or failure.
func readBack(base string, o clObject) error {
	r, err := clReq(clWriteLimit, http.MethodGet, base+"/o/"+o.id, nil, nil)
	if err != nil {
		return fmt.Errorf("GET %s/o/%s: %v", base, o.id, err)
	}
	if r.status != http.StatusOK {
		return fmt.Errorf("GET %s/o/%s: %d %.200s", base, o.id, r.status, r.body)
	}
	if !bytes.Equal(r.body, o.data) {
		return fmt.Errorf("GET %s/o/%s: %d bytes that differ from the %d written", base, o.id, len(r.body), len(o.data))
	}
	return nil
}

// ronGet fetches o with `ron get` from server's storage (falling back to
// index's providers) into a file and compares it.
func ronGet(t *testing.T, server, index *clNode, o clObject) error {
	t.Helper()
	out := t.TempDir() + "/obj"
	res := ron(t, cliOpts{}, "get", o.id, "--server", server.storageBase(), "--index", "http://"+index.index, "--out", out)
	if res.code != 0 {
		return fmt.Errorf("ron get %s --server %s: exit %d: %s", o.id, server.id, res.code, strings.TrimSpace(res.stderr))
	}
	got := b3sum(t, out)
	if got != o.id {
		return fmt.Errorf("ron get %s wrote bytes hashing to %s", o.id, got)
	}
	return nil
}
