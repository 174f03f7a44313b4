package roles

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/ronhq/ron/httpx/auth"
	"github.com/ronhq/ron/roles/edge"
	"github.com/ronhq/ron/roles/gateway"
	"github.com/ronhq/ron/roles/index"
	"github.com/ronhq/ron/roles/storage"
	"github.com/ronhq/ron/store"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// startNode runs an amnesia node on free ports and returns it with its
// storage address; the node is shut down at cleanup.
func startNode(t testing.TB, mutate func(*Config)) (*Node, string) {
	t.Helper()
	cfg := DefaultConfig()
	cfg.Amnesia = true
	cfg.DataDir = t.TempDir()
	cfg.Admin.Listen = "127.0.0.1:0"
	cfg.Storage.Listen = "127.0.0.1:0"
	cfg.Index.Listen = "127.0.0.1:0"
	cfg.Registry.Listen = "127.0.0.1:0"
	cfg.Edge.Listen = "127.0.0.1:0"
	cfg.Gateway.Listen = "127.0.0.1:0"
	cfg.Log.Level = "error"
	if mutate != nil {
		mutate(&cfg)
	}
	reloaded := cfg
	n, err := NewNode(&cfg, func() (*Config, error) { c := reloaded; return &c, nil }, os.Stderr, "test")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- n.Run(context.Background()) }()
	select {
	case <-n.Running():
	case err := <-done:
		t.Fatalf("node failed to start: %v", err)
	}
	t.Cleanup(func() {
		n.Shutdown("test end")
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	if st, ok := n.roles["storage"].(*storage.Role); ok {
		return n, st.Addr()
	}
	return n, ""
}

func getJSON(t *testing.T, method, url, body string, out any) int {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			t.Fatalf("%s %s: %v in %q", method, url, err, data)
		}
	}
	return resp.StatusCode
}

// TestTwoNodesInOneProcess proves nothing is global: two nodes run side by
// side with their own keys, metrics and status.
func TestTwoNodesInOneProcess(t *testing.T) {
	threeRoles := func(c *Config) { c.Roles = []string{"registry", "index", "storage"} }
	a, aStorage := startNode(t, threeRoles)
	b, _ := startNode(t, threeRoles)
	var st Status
	if code := getJSON(t, "GET", "http://"+a.AdminAddr()+"/api/v1/status", "", &st); code != 200 {
		t.Fatalf("status %d", code)
	}
	if !st.Ready || !st.Amnesia || len(st.Roles) != 3 || st.Roles[0].Name != "registry" || st.Roles[1].Name != "index" ||
		st.Roles[2].Name != "storage" || st.Roles[2].State.String() != "running" || st.Roles[2].Listen != aStorage {
		t.Fatalf("unexpected status %+v", st)
	}
	if !slices.Contains(st.Queues, QueueStatus{Role: "storage", Queue: "work", Capacity: 512}) ||
		!slices.Contains(st.Queues, QueueStatus{Role: "index", Queue: "work", Capacity: 512}) {
		t.Fatalf("queues in status: %+v", st.Queues)
	}
	var tok TokenReply
	if code := getJSON(t, "POST", "http://"+a.AdminAddr()+"/api/v1/tokens", `{"scopes":["storage:write"],"ttl":"1m"}`, &tok); code != 200 || tok.Token == "" {
		t.Fatalf("tokens: %d %+v", code, tok)
	}
	if _, err := a.keys.Verify(tok.Token, time.Now()); err != nil {
		t.Fatalf("token does not verify on its node: %v", err)
	}
	if _, err := b.keys.Verify(tok.Token, time.Now()); err == nil {
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
	if !strings.Contains(metricsText(t, a.AdminAddr()), `ron_storage_writes_total{role="storage",result="created"} 1`) {
		t.Error("node a's write not in its metrics")
	}
	if strings.Contains(metricsText(t, b.AdminAddr()), `result="created"`) {
		t.Error("node a's write shows in node b's metrics")
	}
}

func metricsText(t *testing.T, addr string) string {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

func TestOpsEndpoints(t *testing.T) {
	n, storageAddr := startNode(t, nil)
	for _, addr := range []string{n.AdminAddr(), storageAddr} {
		var rd readyzReply
		if code := getJSON(t, "GET", "http://"+addr+"/readyz", "", &rd); code != 200 || !rd.Ready {
			t.Errorf("%s /readyz: %d %+v", addr, code, rd)
		}
		var v VersionInfo
		if code := getJSON(t, "GET", "http://"+addr+"/version", "", &v); code != 200 || v.Version != "test" {
			t.Errorf("%s /version: %d %+v", addr, code, v)
		}
		if !strings.Contains(metricsText(t, addr), "ron_http_requests_total") {
			t.Errorf("%s /metrics lacks request metrics", addr)
		}
	}
	if code := getJSON(t, "POST", "http://"+n.AdminAddr()+"/api/v1/tokens", `{"scopes":["nope"]}`, nil); code != 400 {
		t.Errorf("bad scope minted: %d", code)
	}
	if code := getJSON(t, "POST", "http://"+n.AdminAddr()+"/api/v1/tokens", `{"scopes":["admin"],"extra":1}`, nil); code != 400 {
		t.Errorf("unknown field accepted: %d", code)
	}
}

func TestReloadAndShutdownOverAPI(t *testing.T) {
	n, _ := startNode(t, nil)
	var ok map[string]uint64
	if code := getJSON(t, "POST", "http://"+n.AdminAddr()+"/api/v1/reload", "", &ok); code != 200 || ok["config_version"] != 2 {
		t.Fatalf("reload: %d %v", code, ok)
	}
	n.src = func() (*Config, error) {
		c := *n.cfg.Load()
		c.Storage.Engine = "memory"
		c.Storage.QueueTimeout = time.Second
		return &c, nil
	}
	var env struct {
		Error struct{ Code, Message string } `json:"error"`
	}
	if code := getJSON(t, "POST", "http://"+n.AdminAddr()+"/api/v1/reload", "", &env); code != 400 || !strings.Contains(env.Error.Message, "storage.engine") {
		t.Fatalf("restart-only key accepted: %d %+v", code, env)
	}
	// One role refusing makes the whole reload change nothing: the index
	// (applied first) would accept public_reads=false, storage refuses a
	// new engine.
	n.src = func() (*Config, error) {
		c := *n.cfg.Load()
		c.Index.PublicReads = false
		c.Storage.Engine = "memory"
		return &c, nil
	}
	if code := getJSON(t, "POST", "http://"+n.AdminAddr()+"/api/v1/reload", "", &env); code != 400 || !strings.Contains(env.Error.Message, "storage.engine") {
		t.Fatalf("storage restart-only key accepted: %d %+v", code, env)
	}
	indexAddr := n.roles["index"].(*index.Role).Addr()
	if code := getJSON(t, "GET", "http://"+indexAddr+"/names/absent.example", "", nil); code != 404 {
		t.Fatalf("the index applied part of a refused reload: GET = %d, want 404 (public reads)", code)
	}
	if code := getJSON(t, "POST", "http://"+n.AdminAddr()+"/api/v1/shutdown", "", nil); code != 202 {
		t.Fatalf("shutdown: %d", code)
	}
	<-n.manager.ShutdownDone()
}

// TestEdgeWiring: in one process the edge fills /o from the co-located
// storage (in-process), the gateway forwards /edge/… to the co-located
// edge, and a reload reaches the edge (its restart-only keys refused by
// name).
func TestEdgeWiring(t *testing.T) {
	n, storageAddr := startNode(t, nil)
	edgeAddr := n.roles["edge"].(*edge.Role).Addr()
	gatewayAddr := n.roles["gateway"].(*gateway.Role).Addr()
	body := "hello edge"
	tok, _, err := n.keys.Mint(auth.MintOptions{Scopes: []string{"storage:write"}, TTL: time.Minute})
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
	if code := getJSON(t, "GET", "http://"+gatewayAddr+"/edge/packs", "", &packs); code != 200 || packs.Packs == nil {
		t.Fatalf("gateway /edge/packs: %d %+v", code, packs)
	}
	n.src = func() (*Config, error) {
		c := *n.cfg.Load()
		c.Edge.TilesCacheControl = "public, max-age=5"
		return &c, nil
	}
	if code := getJSON(t, "POST", "http://"+n.AdminAddr()+"/api/v1/reload", "", nil); code != 200 {
		t.Fatalf("edge reload: %d", code)
	}
	n.src = func() (*Config, error) {
		c := *n.cfg.Load()
		c.Edge.FillWorkers = 1
		return &c, nil
	}
	var env struct {
		Error struct{ Code, Message string } `json:"error"`
	}
	if code := getJSON(t, "POST", "http://"+n.AdminAddr()+"/api/v1/reload", "", &env); code != 400 || !strings.Contains(env.Error.Message, "edge.fill_workers") {
		t.Fatalf("edge restart-only key accepted: %d %+v", code, env)
	}
}
