package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"testing"
	"time"
)

// tenantApplyLimit bounds the wait for a committed descriptor set to
// change the gateway's answers (bus event → fetch → verify → swap).
const tenantApplyLimit = 10 * time.Second

// TestGatewayTenantsLive: on a default `ron serve` (registry co-located,
// dev signer 1 of 1) a token of tenant "acme" reads through the gateway;
// committing a set whose tenant item gives acme rps 0 makes the same read
// answer 403 forbidden (tenant_suspended) while anonymous reads go on;
// committing rps 100 lets acme read again (docs/gateway.md §7).
func TestGatewayTenantsLive(t *testing.T) {
	t.Parallel()
	w := startOneProcess(t, gwTestConfig)
	n := w.gw
	waitWriteReady(t, n)
	data := randomBytes(91, 5000)
	id := n.post(n.token("storage:write"), data).CID
	acme := hdr("Authorization", "Bearer "+mintTenantToken(t, n, "acme", "storage:read"))
	if a := w.mustGet(t, "/o/"+id, acme); a.status != http.StatusOK || string(a.body) != string(data) {
		t.Fatalf("acme's read before any tenant item: %s, want 200 and the object", a.describe())
	}

	cl := &regCLI{t: t, env: n.cliEnv()}
	var genesis struct {
		Items []map[string]any `json:"items"`
	}
	if err := json.Unmarshal(cl.artifact("0").Payload, &genesis); err != nil {
		t.Fatalf("genesis payload: %v", err)
	}
	suspended := commitTenant(t, cl, genesis.Items, 0)
	var last gwAnswer
	poll(t, tenantApplyLimit, fmt.Sprintf("acme's read to be refused after version %d (rps 0)", suspended), func() bool {
		last = w.mustGet(t, "/o/"+id, acme)
		return last.status != http.StatusOK
	})
	env := wantError(t, "acme's read while suspended", last.httpResult, http.StatusForbidden, "forbidden")
	if env.Error.Details["reason"] != "tenant_suspended" {
		t.Errorf("acme's read while suspended: details %v, want reason tenant_suspended", env.Error.Details)
	}
	if a := w.mustGet(t, "/o/"+id, nil); a.status != http.StatusOK {
		t.Errorf("anonymous read while acme is suspended: %s, want 200", a.describe())
	}

	restored := commitTenant(t, cl, genesis.Items, 100)
	poll(t, tenantApplyLimit, fmt.Sprintf("acme's read to succeed after version %d (rps 100)", restored), func() bool {
		last = w.mustGet(t, "/o/"+id, acme)
		return last.status == http.StatusOK
	})
	if string(last.body) != string(data) {
		t.Errorf("acme's read after rps 100: %d bytes, want the %d stored", len(last.body), len(data))
	}
	if v := n.metric("ron_gateway_tenants_version", `role="gateway"`); v != float64(restored) {
		t.Errorf("ron_gateway_tenants_version %v, want %d", v, restored)
	}
}

// commitTenant proposes, approves (dev signer) and commits the genesis
// items plus a tenant item for acme with the given rps, and returns the
// committed version.
func commitTenant(t *testing.T, cl *regCLI, items []map[string]any, rps float64) uint64 {
	t.Helper()
	tenant := map[string]any{"kind": "tenant", "id": "acme", "rps": rps, "burst": 0, "weight": 1, "max_bytes_per_s": 0}
	set := writeJSON(t, map[string]any{"items": append(slices.Clip(items), tenant), "note": fmt.Sprintf("e2e acme rps %v", rps)})
	return cl.cycle(set).Version
}
