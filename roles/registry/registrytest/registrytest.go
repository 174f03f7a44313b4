// Package registrytest starts a real registry role for other packages'
// tests (amnesia, the 1-of-1 dev signer) and commits descriptor sets to it
// through its in-process client.
package registrytest

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/ronhq/ron/httpx/auth"
	"github.com/ronhq/ron/roles/registry"
	"github.com/ronhq/ron/roles/registry/httpapi"
	"github.com/ronhq/ron/roles/registry/registryapi"
	"github.com/ronhq/ron/roles/registry/registryapi/descriptor"
	"github.com/ronhq/ron/runtime"
	"github.com/ronhq/ron/runtime/module"
)

// Wait bounds each registry call and the role's stop.
const Wait = 20 * time.Second

// Live is a started registry role; it stops at the test's cleanup.
type Live struct {
	Role   *registry.Role
	Bus    *runtime.Bus         // the bus the role publishes RegistryUpdated on
	Local  *httpapi.LocalClient // its in-process client
	Signer string               // the dev signer's id
	Key    ed25519.PrivateKey   // the dev signer's key
	Keys   *auth.Keyring        // the role's keyring, to mint tokens
	t      testing.TB
}

// Start starts an amnesia registry listening on a loopback port, with
// retention off.
func Start(t testing.TB) *Live {
	t.Helper()
	keys, err := auth.GenerateKeyring()
	if err != nil {
		t.Fatal(err)
	}
	cfg := registry.DefaultConfig()
	cfg.Listen, cfg.RetentionPolicy = "127.0.0.1:0", registry.PolicyOff
	bus := runtime.NewBus(nil)
	r := registry.New(registry.Options{Config: cfg, Env: module.Env{Amnesia: true, Log: zerolog.Nop(), Metrics: runtime.NewMetrics(nil), Keys: keys, Bus: bus, Version: "test"}})
	ctx, cancel := context.WithCancel(context.Background())
	if err := r.Start(ctx); err != nil {
		cancel()
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }() // the registry's listener; ends at cleanup
	t.Cleanup(func() {
		sctx, scancel := context.WithTimeout(context.Background(), Wait)
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
	return &Live{Role: r, Bus: bus, Local: httpapi.NewLocalClient(r.API()), Signer: id, Key: key, Keys: keys, t: t}
}

// Commit proposes, approves (with the dev signer) and commits the next
// version: HEAD's signers and quorum plus items.
func (l *Live) Commit(items ...map[string]any) registryapi.Committed {
	l.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), Wait)
	defer cancel()
	head, err := l.Local.Head(ctx)
	if err != nil {
		l.t.Fatal(err)
	}
	art, _, err := l.Local.Get(ctx, head.Version)
	if err != nil {
		l.t.Fatal(err)
	}
	set, err := descriptor.ParseCommitted(art.Payload)
	if err != nil {
		l.t.Fatal(err)
	}
	all := []map[string]any{}
	for _, s := range set.Signers {
		all = append(all, map[string]any{"kind": "signer", "id": s.ID, "algo": s.Algo, "pubkey": s.PubkeyB64})
	}
	all = append(all, map[string]any{"kind": "quorum", "id": "quorum", "m": set.Quorum.M, "n": set.Quorum.N})
	payload, err := json.Marshal(map[string]any{"version": head.Version + 1, "prev_hash": head.PayloadB3,
		"created_at": descriptor.FormatTime(time.Now()), "items": append(all, items...)})
	if err != nil {
		l.t.Fatal(err)
	}
	p, err := l.Local.Propose(ctx, descriptor.ProposeRequest{SchemaVersion: "1.0.0", Payload: payload})
	if err != nil {
		l.t.Fatalf("propose: %v", err)
	}
	if _, err := l.Local.Approve(ctx, p.ProposalID, descriptor.Sign(l.Key, l.Signer, p.PayloadB3, time.Now())); err != nil {
		l.t.Fatalf("approve: %v", err)
	}
	c, err := l.Local.Commit(ctx, p.ProposalID)
	if err != nil {
		l.t.Fatalf("commit: %v", err)
	}
	return c
}
