package e2e

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/ronhq/ron/internal/gatewaytest"
)

// gatewayConfig is the [gateway] table the shared rows need: the suspended
// tenant and no anonymous rate limit.
const gatewayConfig = gwTestConfig + `
[[gateway.tenants]]
id = "` + gatewaytest.SuspendedTenant + `"
rps = 0.0
`

// writeConfig writes text as a config file in dir.
func writeConfig(t *testing.T, dir, text string) string {
	t.Helper()
	path := filepath.Join(dir, "ron.toml")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// target is the gateway of n as the shared table sees it: tokens are minted
// by n's admin plane (loopback needs no admin token).
func (n *node) gatewayTarget(name string) gatewaytest.Target {
	return gatewaytest.Target{Name: name, Base: "http://" + n.gateway, Token: func(t *testing.T, tenant string, scopes ...string) string {
		t.Helper()
		req := map[string]any{"scopes": scopes, "ttl": "1h"}
		if tenant != "" {
			req["tenant"] = tenant
		}
		body, _ := json.Marshal(req)
		r := do(t, http.MethodPost, "http://"+n.admin+"/api/v1/tokens", http.Header{"Content-Type": {"application/json"}}, body)
		var tok struct {
			Token string `json:"token"`
		}
		if r.status != http.StatusOK || json.Unmarshal(r.body, &tok) != nil || tok.Token == "" {
			t.Fatalf("mint token on %s: %d %s", n.name, r.status, r.body)
		}
		return tok.Token
	}}
}

// shareRootKey copies from's root key into the data dir to, as cluster
// nodes share one (docs/cluster.md §2), so the gateway's minted link tokens
// verify upstream.
func shareRootKey(t *testing.T, from *node, to string) {
	t.Helper()
	key, err := os.ReadFile(filepath.Join(from.dataDir, "keys", "root.key"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(to, "keys"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(to, "keys", "root.key"), key, 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestGatewayOneProcess runs the shared table against `ron serve` with every
// built role in one process.
func TestGatewayOneProcess(t *testing.T) {
	t.Parallel()
	gatewaytest.Run(t, startOneProcess(t, gatewayConfig).gw.gatewayTarget("one-process"))
}

// TestGatewayThreeProcesses runs the same table against a gateway, a storage
// node and an index node as three processes talking HTTP; storage announces
// to the index, the gateway forwards to both.
func TestGatewayThreeProcesses(t *testing.T) {
	t.Parallel()
	gatewaytest.Run(t, startThreeProcesses(t, gatewayConfig).gw.gatewayTarget("three-processes"))
}
