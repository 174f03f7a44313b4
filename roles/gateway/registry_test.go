package gateway

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/ronhq/ron/httpx/auth"
	"github.com/ronhq/ron/roles/registry"
	"github.com/ronhq/ron/roles/registry/api"
	"github.com/ronhq/ron/roles/registry/descriptor"
	"github.com/ronhq/ron/runtime"
	"github.com/ronhq/ron/store"
)

// liveRegistry is a started registry role (amnesia, dev signer 1 of 1).
type liveRegistry struct {
	r      *registry.Role
	bus    *runtime.Bus
	local  *api.LocalClient
	signer string
	key    ed25519.PrivateKey
}

func startRegistry(t *testing.T) *liveRegistry {
	t.Helper()
	keys, err := auth.GenerateKeyring()
	if err != nil {
		t.Fatal(err)
	}
	cfg := registry.DefaultConfig()
	cfg.Listen, cfg.RetentionPolicy = "127.0.0.1:0", registry.PolicyOff
	bus := runtime.NewBus(nil)
	r := registry.New(registry.Options{Config: cfg, Amnesia: true, Log: zerolog.Nop(), Metrics: runtime.NewMetrics(nil),
		Keys: keys, Bus: bus, Version: "test"})
	ctx, cancel := context.WithCancel(context.Background())
	if err := r.Start(ctx); err != nil {
		cancel()
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }() // the registry's listener
	t.Cleanup(func() {
		sctx, scancel := context.WithTimeout(context.Background(), testWait)
		defer scancel()
		if err := r.Stop(sctx); err != nil {
			t.Errorf("registry Stop: %v", err)
		}
		cancel()
		if err := <-done; err != nil {
			t.Errorf("registry Run: %v", err)
		}
	})
	id, key, ok := r.DevSigner()
	if !ok {
		t.Fatal("no dev signer")
	}
	return &liveRegistry{r: r, bus: bus, local: api.NewLocalClient(r.API()), signer: id, key: key}
}

// commitTenant commits the next version: HEAD's signers and quorum plus one
// tenant item; it returns the committed version.
func (rr *liveRegistry) commitTenant(t *testing.T, id string, rps float64) uint64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testWait)
	defer cancel()
	head, err := rr.local.Head(ctx)
	if err != nil {
		t.Fatal(err)
	}
	art, _, err := rr.local.Get(ctx, head.Version)
	if err != nil {
		t.Fatal(err)
	}
	set, err := descriptor.ParseCommitted(art.Payload)
	if err != nil {
		t.Fatal(err)
	}
	var items []map[string]any
	for _, s := range set.Signers {
		items = append(items, map[string]any{"kind": "signer", "id": s.ID, "algo": s.Algo, "pubkey": s.PubkeyB64})
	}
	items = append(items, map[string]any{"kind": "quorum", "id": "quorum", "m": set.Quorum.M, "n": set.Quorum.N},
		map[string]any{"kind": "tenant", "id": id, "rps": rps, "burst": 0, "weight": 1, "max_bytes_per_s": 0})
	payload, err := json.Marshal(map[string]any{"version": head.Version + 1, "prev_hash": head.PayloadB3,
		"created_at": descriptor.FormatTime(time.Now()), "items": items})
	if err != nil {
		t.Fatal(err)
	}
	p, err := rr.local.Propose(ctx, descriptor.ProposeRequest{SchemaVersion: "1.0.0", Payload: payload})
	if err != nil {
		t.Fatalf("propose: %v", err)
	}
	if _, err := rr.local.Approve(ctx, p.ProposalID, descriptor.Sign(rr.key, rr.signer, p.PayloadB3, time.Now())); err != nil {
		t.Fatalf("approve: %v", err)
	}
	c, err := rr.local.Commit(ctx, p.ProposalID)
	if err != nil {
		t.Fatalf("commit: %v", err)
	}
	return c.Version
}

// TestRegistryTenantsLive (§7): a committed tenant item with rps 0 turns
// that tenant's requests into 403 tenant_suspended, and the next version
// lifts it, with the registry co-located (bus events) and over HTTP
// (/registry/stream).
func TestRegistryTenantsLive(t *testing.T) {
	for _, wiring := range []struct {
		name string
		wire func(rr *liveRegistry, cfg *Config, opt *Options)
	}{
		{"co-located", func(rr *liveRegistry, _ *Config, opt *Options) {
			opt.Bus = rr.bus
			opt.Local.Registry = rr.r.Handler
			opt.Local.RegistryClient = func() api.Client { return rr.local }
		}},
		{"registry_url", func(rr *liveRegistry, cfg *Config, _ *Options) {
			cfg.RegistryURL = "http://" + rr.r.Addr()
		}},
	} {
		t.Run(wiring.name, func(t *testing.T) {
			rr := startRegistry(t)
			s := newStub(nil)
			cfg := baseConfig()
			cfg.StorageURL = s.listen(t)
			cfg.TenantRPS, cfg.TenantBurst = 1e6, 0 // polling must not empty acme's bucket
			h := startGateway(t, cfg, Locals{}, func(o *Options) { wiring.wire(rr, &o.Config, o) })
			path := "/o/" + store.Sum([]byte("x")).String()
			acme := h.bearer("acme", "storage:read")
			if a := h.do("GET", path, nil, "Authorization", acme); a.status != http.StatusOK {
				t.Fatalf("acme before any tenant item: %s", a)
			}
			v := rr.commitTenant(t, "acme", 0)
			var last answer
			eventually(t, "acme suspended by the registry", func() bool {
				last = h.with(t).do("GET", path, nil, "Authorization", acme)
				return last.status != http.StatusOK
			})
			env := want(t, "acme suspended", last, 403, "forbidden")
			if env.Error.Details["reason"] != "tenant_suspended" {
				t.Errorf("details %v, want reason tenant_suspended", env.Error.Details)
			}
			if got := h.metric("gateway_tenants_version"); got != float64(v) {
				t.Errorf("ron_gateway_tenants_version = %v, want %d", got, v)
			}
			if a := h.do("GET", path, nil); a.status != http.StatusOK {
				t.Errorf("anonymous read while acme is suspended: %s", a)
			}
			rr.commitTenant(t, "acme", 100)
			eventually(t, "acme readmitted by the registry", func() bool {
				return h.with(t).do("GET", path, nil, "Authorization", acme).status == http.StatusOK
			})
		})
	}
}
