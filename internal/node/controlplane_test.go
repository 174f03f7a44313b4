package node_test

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ronhq/ron/httpx/auth"
	"github.com/ronhq/ron/internal/node"
	"github.com/ronhq/ron/internal/node/nodetest"
)

// TestNameWriteWithoutServers: a cluster whose nodes run the index but none
// is a control-plane server refuses name writes with 503 no_quorum and a
// message that names the fix, and acknowledges nothing.
func TestNameWriteWithoutServers(t *testing.T) {
	n, _ := nodetest.StartCluster(t, nodetest.ClusterNode{ID: "solo", Roles: []string{"index"}, KeyFile: nodetest.SharedKeyFile(t)})
	tok, _, err := n.Keys().Mint(auth.MintOptions{Scopes: []string{"index:write"}, TTL: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest(http.MethodPut, "http://"+n.Addr("index")+"/names/fix.example",
		strings.NewReader(`{"b3":"b3:`+strings.Repeat("ab", 32)+`"}`))
	req.Header.Set("Authorization", "Bearer "+tok)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(body), `"code":"no_quorum"`) ||
		!strings.Contains(string(body), "server = true") || res.Header.Get("Retry-After") == "" {
		t.Fatalf("PUT without servers: %d %s", res.StatusCode, body)
	}
	st, ok := n.ControlPlane()
	if !ok || st.Leader != "" || len(st.Servers) != 0 {
		t.Fatalf("control plane without servers: %+v %v", st, ok)
	}
}

// TestServerNeedsIndex: cluster.server on a node without the index role is
// refused at config check, naming the fix.
func TestServerNeedsIndex(t *testing.T) {
	cfg := node.DefaultConfig()
	cfg.Roles = []string{"storage"}
	cfg.Cluster.Enabled, cfg.Cluster.Server = true, true
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "cluster.server") || !strings.Contains(err.Error(), `"index"`) {
		t.Fatalf("Validate: %v", err)
	}
}
