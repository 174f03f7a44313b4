package node_test

import (
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/ronhq/ron/httpx/auth"
	"github.com/ronhq/ron/internal/node"
	"github.com/ronhq/ron/internal/node/nodetest"
	"github.com/ronhq/ron/store"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// startNode runs an ephemeral node (nodetest.Start) and returns it with
// its storage address ("" without storage).
func startNode(t testing.TB, mutate func(*node.Config)) (*node.Node, string) {
	t.Helper()
	n := nodetest.Start(t, mutate)
	return n, n.Addr("storage")
}

// TestTwoNodesInOneProcess proves nothing is global: two nodes run side by
// side with their own keys, metrics and status.
func TestTwoNodesInOneProcess(t *testing.T) {
	threeRoles := func(c *node.Config) { c.Roles = []string{"registry", "index", "storage"} }
	a, aStorage := startNode(t, threeRoles)
	b, _ := startNode(t, threeRoles)
	var st node.Status
	if code := nodetest.GetJSON(t, "GET", "http://"+a.AdminAddr()+"/api/v1/status", "", &st); code != 200 {
		t.Fatalf("status %d", code)
	}
	if !st.Ready || !st.Amnesia || len(st.Roles) != 3 || st.Roles[0].Name != "registry" || st.Roles[1].Name != "index" ||
		st.Roles[2].Name != "storage" || st.Roles[2].State.String() != "running" || st.Roles[2].Listen != aStorage {
		t.Fatalf("unexpected status %+v", st)
	}
	if !slices.Contains(st.Queues, node.QueueStatus{Role: "storage", Queue: "work", Capacity: 512}) ||
		!slices.Contains(st.Queues, node.QueueStatus{Role: "index", Queue: "work", Capacity: 512}) {
		t.Fatalf("queues in status: %+v", st.Queues)
	}
	var tok node.TokenReply
	if code := nodetest.GetJSON(t, "POST", "http://"+a.AdminAddr()+"/api/v1/tokens", `{"scopes":["storage:write"],"ttl":"1m"}`, &tok); code != 200 || tok.Token == "" {
		t.Fatalf("tokens: %d %+v", code, tok)
	}
	if _, err := a.Keys().Verify(tok.Token, time.Now()); err != nil {
		t.Fatalf("token does not verify on its node: %v", err)
	}
	if _, err := b.Keys().Verify(tok.Token, time.Now()); err == nil {
		t.Fatal("node b accepted node a's token: keys are shared")
	}
	req, _ := http.NewRequest("POST", "http://"+aStorage+"/o", strings.NewReader("hello world"))
	req.Header.Set("Authorization", "Bearer "+tok.Token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 201 {
		t.Fatalf("put with admin-minted token: %d", resp.StatusCode)
	}
	if !strings.Contains(nodetest.MetricsText(t, a.AdminAddr()), `ron_storage_writes_total{role="storage",result="created"} 1`) {
		t.Error("node a's write not in its metrics")
	}
	if strings.Contains(nodetest.MetricsText(t, b.AdminAddr()), `result="created"`) {
		t.Error("node a's write shows in node b's metrics")
	}
}

func TestOpsEndpoints(t *testing.T) {
	n, storageAddr := startNode(t, nil)
	for _, addr := range []string{n.AdminAddr(), storageAddr} {
		var rd node.ReadyzReply
		if code := nodetest.GetJSON(t, "GET", "http://"+addr+"/readyz", "", &rd); code != 200 || !rd.Ready {
			t.Errorf("%s /readyz: %d %+v", addr, code, rd)
		}
		var v node.VersionInfo
		if code := nodetest.GetJSON(t, "GET", "http://"+addr+"/version", "", &v); code != 200 || v.Version != "test" {
			t.Errorf("%s /version: %d %+v", addr, code, v)
		}
		if !strings.Contains(nodetest.MetricsText(t, addr), "ron_http_requests_total") {
			t.Errorf("%s /metrics lacks request metrics", addr)
		}
	}
	if code := nodetest.GetJSON(t, "POST", "http://"+n.AdminAddr()+"/api/v1/tokens", `{"scopes":["nope"]}`, nil); code != 400 {
		t.Errorf("bad scope minted: %d", code)
	}
	if code := nodetest.GetJSON(t, "POST", "http://"+n.AdminAddr()+"/api/v1/tokens", `{"scopes":["admin"],"extra":1}`, nil); code != 400 {
		t.Errorf("unknown field accepted: %d", code)
	}
}

func TestReloadAndShutdownOverAPI(t *testing.T) {
	n, _ := startNode(t, nil)
	var ok map[string]uint64
	if code := nodetest.GetJSON(t, "POST", "http://"+n.AdminAddr()+"/api/v1/reload", "", &ok); code != 200 || ok["config_version"] != 2 {
		t.Fatalf("reload: %d %v", code, ok)
	}
	node.SetReloadSource(n, func() (*node.Config, error) {
		c := *n.Config()
		c.Storage.Engine = "memory"
		c.Storage.QueueTimeout = time.Second
		return &c, nil
	})
	var env struct {
		Error struct{ Code, Message string } `json:"error"`
	}
	if code := nodetest.GetJSON(t, "POST", "http://"+n.AdminAddr()+"/api/v1/reload", "", &env); code != 400 || !strings.Contains(env.Error.Message, "storage.engine") {
		t.Fatalf("restart-only key accepted: %d %+v", code, env)
	}
	// One role refusing makes the whole reload change nothing: the index
	// (applied first) would accept public_reads=false, storage refuses a
	// new engine.
	node.SetReloadSource(n, func() (*node.Config, error) {
		c := *n.Config()
		c.Index.PublicReads = false
		c.Storage.Engine = "memory"
		return &c, nil
	})
	if code := nodetest.GetJSON(t, "POST", "http://"+n.AdminAddr()+"/api/v1/reload", "", &env); code != 400 || !strings.Contains(env.Error.Message, "storage.engine") {
		t.Fatalf("storage restart-only key accepted: %d %+v", code, env)
	}
	indexAddr := n.Addr("index")
	if code := nodetest.GetJSON(t, "GET", "http://"+indexAddr+"/names/absent.example", "", nil); code != 404 {
		t.Fatalf("the index applied part of a refused reload: GET = %d, want 404 (public reads)", code)
	}
	if code := nodetest.GetJSON(t, "POST", "http://"+n.AdminAddr()+"/api/v1/shutdown", "", nil); code != 202 {
		t.Fatalf("shutdown: %d", code)
	}
	if err := n.Wait(); err != nil {
		t.Fatalf("Run: %v", err)
	}
}

// TestEdgeWiring: in one process the edge fills /o from the co-located
// storage (in-process), the gateway forwards /edge/… to the co-located
// edge, and a reload reaches the edge (its restart-only keys refused by
// name).
func TestEdgeWiring(t *testing.T) {
	n, storageAddr := startNode(t, nil)
	edgeAddr := n.Addr("edge")
	gatewayAddr := n.Addr("gateway")
	body := "hello edge"
	tok, _, err := n.Keys().Mint(auth.MintOptions{Scopes: []string{"storage:write"}, TTL: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest("POST", "http://"+storageAddr+"/o", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+tok)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	id := store.Sum([]byte(body)).String()
	for _, url := range []string{"http://" + edgeAddr + "/o/" + id, "http://" + gatewayAddr + "/edge/o/" + id} {
		resp, err := http.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || string(got) != body || resp.Header.Get("ETag") != `"`+id+`"` {
			t.Fatalf("GET %s = %d %q %v", url, resp.StatusCode, got, resp.Header)
		}
	}
	var packs struct {
		Packs []any `json:"packs"`
	}
	if code := nodetest.GetJSON(t, "GET", "http://"+gatewayAddr+"/edge/packs", "", &packs); code != 200 || packs.Packs == nil {
		t.Fatalf("gateway /edge/packs: %d %+v", code, packs)
	}
	node.SetReloadSource(n, func() (*node.Config, error) {
		c := *n.Config()
		c.Edge.TilesCacheControl = "public, max-age=5"
		return &c, nil
	})
	if code := nodetest.GetJSON(t, "POST", "http://"+n.AdminAddr()+"/api/v1/reload", "", nil); code != 200 {
		t.Fatalf("edge reload: %d", code)
	}
	node.SetReloadSource(n, func() (*node.Config, error) {
		c := *n.Config()
		c.Edge.FillWorkers = 1
		return &c, nil
	})
	var env struct {
		Error struct{ Code, Message string } `json:"error"`
	}
	if code := nodetest.GetJSON(t, "POST", "http://"+n.AdminAddr()+"/api/v1/reload", "", &env); code != 400 || !strings.Contains(env.Error.Message, "edge.fill_workers") {
		t.Fatalf("edge restart-only key accepted: %d %+v", code, env)
	}
}
