package node_test

import (
	"testing"
	"time"

	"github.com/ronhq/ron/httpx/auth"
	"github.com/ronhq/ron/internal/gatewaytest"
	"github.com/ronhq/ron/internal/node"
	"github.com/ronhq/ron/roles/gateway"
)

// wiring is a gateway under test: its base URL and a way to mint client
// tokens the gateway accepts.
type wiring struct {
	name string
	base string
	keys *auth.Keyring
}

func (w wiring) token(t *testing.T, tenant string, scopes ...string) string {
	t.Helper()
	tok, _, err := w.keys.Mint(auth.MintOptions{Scopes: scopes, Tenant: tenant, TTL: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// gatewayTenants lists the table's suspended tenant and lifts the
// anonymous rate limit.
func gatewayTenants(c *node.Config) {
	zero := 0.0
	c.Gateway.Tenants = []gateway.TenantConfig{{ID: gatewaytest.SuspendedTenant, RPS: &zero}}
	c.Gateway.AnonRPS, c.Gateway.AnonBurst = 1e6, 0
}

// allInOne runs the five roles' built subset in one process: the gateway
// reaches storage, index and registry in-process.
func allInOne(t *testing.T) wiring {
	n, _ := startNode(t, gatewayTenants)
	return wiring{name: "in-process", base: "http://" + n.Addr("gateway"), keys: n.Keys()}
}

// overHTTP runs storage, index and registry on one node and the gateway
// alone on another, configured with their URLs and an upstream token of
// the first node's key.
func overHTTP(t *testing.T) wiring {
	back, storageAddr := startNode(t, func(c *node.Config) { c.Roles = []string{"registry", "index", "storage"} })
	link, _, err := back.Keys().Mint(auth.MintOptions{Scopes: []string{"storage:write", "index:write"}, TTL: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	front, _ := startNode(t, func(c *node.Config) {
		c.Roles = []string{"gateway"}
		gatewayTenants(c)
		c.Gateway.StorageURL = "http://" + storageAddr
		c.Gateway.IndexURL = "http://" + back.Addr("index")
		c.Gateway.RegistryURL = "http://" + back.Addr("registry")
		c.Gateway.UpstreamToken = link
	})
	return wiring{name: "over-http", base: "http://" + front.Addr("gateway"), keys: front.Keys()}
}

// TestGatewayWirings runs the shared table against the gateway with
// in-process upstreams and against the same roles over HTTP
// (docs/gateway.md §2, §12): both must give the same answers.
func TestGatewayWirings(t *testing.T) {
	for _, mk := range []func(*testing.T) wiring{allInOne, overHTTP} {
		w := mk(t)
		t.Run(w.name, func(t *testing.T) {
			gatewaytest.Run(t, gatewaytest.Target{Name: w.name, Base: w.base, Token: w.token})
		})
	}
}
