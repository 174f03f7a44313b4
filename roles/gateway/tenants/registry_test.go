package tenants

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/ronhq/ron/httpx/auth"
	"github.com/ronhq/ron/httpx/client"
	"github.com/ronhq/ron/roles/registry"
	"github.com/ronhq/ron/roles/registry/api"
	"github.com/ronhq/ron/roles/registry/descriptor"
	"github.com/ronhq/ron/runtime"
)

// waitLimit bounds each wait for the real registry and followers.
const waitLimit = 20 * time.Second

// realRegistry is a started registry role (amnesia, dev signer).
type realRegistry struct {
	t      *testing.T
	r      *registry.Role
	bus    *runtime.Bus
	local  *api.LocalClient
	signer string
	key    ed25519.PrivateKey
}

func startRegistry(t *testing.T) *realRegistry {
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
	go func() { done <- r.Run(ctx) }() // the registry listener
	t.Cleanup(func() {
		sctx, scancel := context.WithTimeout(context.Background(), waitLimit)
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
	return &realRegistry{t: t, r: r, bus: bus, local: api.NewLocalClient(r.API()), signer: id, key: key}
}

// commit proposes, approves and commits the next version: HEAD's signers
// and quorum plus the tenant items.
func (rr *realRegistry) commit(items ...map[string]any) api.Committed {
	rr.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	head, err := rr.local.Head(ctx)
	if err != nil {
		rr.t.Fatal(err)
	}
	art, _, err := rr.local.Get(ctx, head.Version)
	if err != nil {
		rr.t.Fatal(err)
	}
	set, err := descriptor.ParseCommitted(art.Payload)
	if err != nil {
		rr.t.Fatal(err)
	}
	all := []map[string]any{}
	for _, s := range set.Signers {
		all = append(all, map[string]any{"kind": "signer", "id": s.ID, "algo": s.Algo, "pubkey": s.PubkeyB64})
	}
	all = append(all, map[string]any{"kind": "quorum", "id": "quorum", "m": set.Quorum.M, "n": set.Quorum.N})
	payload, err := json.Marshal(map[string]any{"version": head.Version + 1, "prev_hash": head.PayloadB3,
		"created_at": descriptor.FormatTime(time.Now()), "items": append(all, items...)})
	if err != nil {
		rr.t.Fatal(err)
	}
	p, err := rr.local.Propose(ctx, descriptor.ProposeRequest{SchemaVersion: "1.0.0", Payload: payload})
	if err != nil {
		rr.t.Fatalf("propose: %v", err)
	}
	if _, err := rr.local.Approve(ctx, p.ProposalID, descriptor.Sign(rr.key, rr.signer, p.PayloadB3, time.Now())); err != nil {
		rr.t.Fatalf("approve: %v", err)
	}
	c, err := rr.local.Commit(ctx, p.ProposalID)
	if err != nil {
		rr.t.Fatalf("commit: %v", err)
	}
	return c
}

// runningFollower is a follower running against the real registry.
type runningFollower struct {
	name   string
	tables chan *Table
	cancel context.CancelFunc
	done   chan error
}

func runFollower(t *testing.T, name string, opt FollowerOptions) *runningFollower {
	rf := &runningFollower{name: name, tables: make(chan *Table, 64), done: make(chan error, 1)}
	opt.Defaults, opt.Log = defs, zerolog.Nop()
	opt.Apply = func(tb *Table) { rf.tables <- tb }
	f := NewFollower(opt)
	ctx, cancel := context.WithCancel(context.Background())
	rf.cancel = cancel
	go func() { rf.done <- f.Run(ctx) }() // the role's task
	t.Cleanup(rf.stop)
	return rf
}

func (rf *runningFollower) stop() {
	if rf.cancel != nil {
		rf.cancel()
		<-rf.done
		rf.cancel = nil
	}
}

// waitVersion returns the first table of registry version v, failing on a
// newer one or after waitLimit.
func (rf *runningFollower) waitVersion(t *testing.T, v uint64) *Table {
	t.Helper()
	timeout := time.NewTimer(waitLimit)
	defer timeout.Stop()
	for {
		select {
		case tb := <-rf.tables:
			switch {
			case !tb.FromRegistry() || tb.Version() < v:
				continue
			case tb.Version() > v:
				t.Fatalf("%s: version %d applied, want %d", rf.name, tb.Version(), v)
			}
			return tb
		case <-timeout.C:
			t.Fatalf("%s: version %d not applied within %s", rf.name, v, waitLimit)
		}
	}
}

// TestFollowerWithRealRegistry follows a real in-process registry three
// ways: LocalClient.Watch, HTTPClient.Watch over its listener, and the
// bus with LocalClient reads.
func TestFollowerWithRealRegistry(t *testing.T) {
	rr := startRegistry(t)
	hc := api.NewHTTPClient("http://"+rr.r.Addr(), nil, client.Options{Timeout: 5 * time.Second})
	defer hc.Close()
	config := []Item{{ID: "acme", RPS: 1, Weight: 1}}
	followers := []*runningFollower{
		runFollower(t, "local", FollowerOptions{Client: rr.local, Config: config}),
		runFollower(t, "http", FollowerOptions{Client: hc, Config: config}),
		runFollower(t, "bus", FollowerOptions{Client: rr.local, Bus: rr.bus, Config: config}),
	}
	for _, rf := range followers {
		if tb := rf.waitVersion(t, 0); tb.Params("acme").RPS != 1 {
			t.Fatalf("%s: genesis table %+v", rf.name, tb.Params("acme"))
		}
	}
	c := rr.commit(tenantItem("acme", 200, 400, 2, 1<<20), tenantItem("anon:1.2.3.0/24", 1, 1, 1, 0))
	for _, rf := range followers {
		tb := rf.waitVersion(t, c.Version)
		if got := tb.Params("acme"); got.RPS != 200 || got.Burst != 400 || got.Weight != 2 || got.MaxBytesPerS != 1<<20 {
			t.Fatalf("%s: acme %+v", rf.name, got)
		}
		if tb.Params("anon:1.2.3.0/24") != defs.Anon {
			t.Fatalf("%s: anon item applied", rf.name)
		}
	}
	c = rr.commit(tenantItem("beta", 0, 0, 1, 0)) // acme gone: config again
	for _, rf := range followers {
		tb := rf.waitVersion(t, c.Version)
		if tb.Params("acme").RPS != 1 || !tb.Params("beta").Suspended() {
			t.Fatalf("%s: acme %+v beta %+v", rf.name, tb.Params("acme"), tb.Params("beta"))
		}
	}
	for _, rf := range followers {
		rf.stop()
	}
}
