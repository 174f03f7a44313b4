// Package clusterindex holds what readers (gateway, edge) share in cluster
// mode (docs/cluster.md §7): Wrap, the one place where providers whose node
// is not alive move to the end of an index answer; and Members, an
// indexapi.Client over the alive index members (a runtime/topology Pool)
// with fallback to the next.
//
// It is part of the index role's contract, the readers' view of the index
// across a cluster: other roles may import it, and it imports only
// indexapi and the project's httpx, store and runtime packages.
package clusterindex

import (
	"context"
	"net/http"
	"slices"
	"strings"

	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/roles/index/indexapi"
	"github.com/ronhq/ron/roles/storage/storageapi"
	"github.com/ronhq/ron/runtime/cluster"
	"github.com/ronhq/ron/runtime/cluster/placement"
	"github.com/ronhq/ron/store"
)

// storageRole is the role whose base URLs providers carry.
const storageRole = storageapi.RoleName

// Wrap returns c with Providers and Resolve answers reordered by m: the
// providers whose node is not alive in m.View() move to the end, the order
// is kept otherwise (stable). Every other method passes through unchanged.
// A nil m returns c as is.
//
// A provider counts as alive when the member named by its Node is alive,
// or else when an alive member serves storage at its Addr; a node the view
// does not know is not alive.
func Wrap(c indexapi.Client, m cluster.Membership) indexapi.Client {
	if m == nil || c == nil {
		return c
	}
	return &ordered{Client: c, m: m}
}

// ordered is the indexapi.Client Wrap returns.
type ordered struct {
	indexapi.Client
	m cluster.Membership
}

// Providers implements indexapi.Client: c's answer with alive providers
// first, then the placement fallback (WithPlacement), then the providers
// whose node is not alive. An index "not found" (404) becomes the fallback
// list when there is one: an object acknowledged a moment ago may not be
// announced yet, and its copies sit on its placement targets.
func (o *ordered) Providers(ctx context.Context, id store.ID, region string, limit int) (indexapi.ProviderList, error) {
	l, err := o.Client.Providers(ctx, id, region, limit)
	if err != nil && httpx.AsError(err).Status != http.StatusNotFound {
		return l, err
	}
	v := o.m.View()
	ps := WithPlacement(AliveFirst(l.Providers, v), v, id)
	if len(ps) == 0 {
		return l, err
	}
	return indexapi.ProviderList{B3: id.String(), Providers: ps}, nil
}

// Resolve implements indexapi.Client: c's answer, alive providers first.
func (o *ordered) Resolve(ctx context.Context, key string, noCache bool) (indexapi.ResolveAnswer, error) {
	a, err := o.Client.Resolve(ctx, key, noCache)
	if err == nil {
		a.Providers = AliveFirst(a.Providers, o.m.View())
	}
	return a, err
}

// AliveFirst returns ps with the providers whose node is not alive in v
// moved to the end, keeping the order otherwise. ps is not modified; when
// nothing moves it is returned as is.
func AliveFirst(ps []indexapi.ProviderInfo, v *cluster.View) []indexapi.ProviderInfo {
	alive := make([]bool, len(ps))
	sawDead, moves := false, false
	for i, p := range ps {
		alive[i] = providerAlive(p, v)
		moves = moves || (sawDead && alive[i])
		sawDead = sawDead || !alive[i]
	}
	if !moves {
		return ps
	}
	out := make([]indexapi.ProviderInfo, 0, len(ps))
	for _, want := range []bool{true, false} {
		for i, p := range ps {
			if alive[i] == want {
				out = append(out, p)
			}
		}
	}
	return out
}

// placementFallback is how many placement candidates WithPlacement adds:
// the replication factor's maximum, so every target of any RF is covered.
const placementFallback = 5

// WithPlacement inserts, after the alive providers of ps (AliveFirst's
// order) and before the departed ones, the alive storage members that rank
// highest for id (docs/cluster.md §3) and are not listed yet, at most
// placementFallback of them, other than v.Self (a reader's own storage was
// asked first). Storage nodes never proxy, so asking a member that lacks
// the object costs one 404; readers verify whatever they receive.
func WithPlacement(ps []indexapi.ProviderInfo, v *cluster.View, id store.ID) []indexapi.ProviderInfo {
	listed := make(map[string]bool, len(ps))
	split := len(ps)
	for i, p := range ps {
		listed[p.Node] = true
		listed[strings.TrimSuffix(p.Addr, "/")] = true
		if split == len(ps) && !providerAlive(p, v) {
			split = i
		}
	}
	var extra []indexapi.ProviderInfo
	for _, m := range placement.Ranked(placement.Writable(v), id) {
		u := m.URL(storageRole)
		if len(extra) == placementFallback || m.ID == v.Self || u == "" || listed[m.ID] || listed[u] {
			continue
		}
		extra = append(extra, indexapi.ProviderInfo{Node: m.ID, Addr: u, Region: m.Zone})
	}
	if len(extra) == 0 {
		return ps
	}
	return slices.Concat(ps[:split], extra, ps[split:])
}

// providerAlive reports whether p's node is alive in v (see Wrap).
func providerAlive(p indexapi.ProviderInfo, v *cluster.View) bool {
	if m, ok := v.Member(p.Node); ok && m.Alive() {
		return true
	}
	alive, _ := v.AliveURL(storageRole, strings.TrimSuffix(p.Addr, "/"))
	return alive
}

// Local is a reader's client of the co-located index l: l's LocalClient
// wrapped by Wrap with m, made on each call (the index starts before its
// readers; a nil m leaves the order as it is).
func Local(l indexapi.Local, m cluster.Membership) func() indexapi.Client {
	return func() indexapi.Client { return Wrap(l.LocalClient(), m) }
}
