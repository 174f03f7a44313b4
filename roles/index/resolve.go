package index

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/httpx/client/hedge"
	"github.com/ronhq/ron/roles/index/cache"
	"github.com/ronhq/ron/roles/index/indexapi"
	"github.com/ronhq/ron/roles/index/indexdb"
	"github.com/ronhq/ron/roles/index/ownership"
	"github.com/ronhq/ron/store"
)

// DefaultResolveBudget is the one budget of GET /resolve/{key} (docs/index.md §5).
const DefaultResolveBudget = 1200 * time.Millisecond

// resolveProviderLimit is the provider limit of a resolve answer (docs/index.md §5).
const resolveProviderLimit = 20

// manifestType is the provider record type that makes kind "manifest".
const manifestType = "application/vnd.ron.manifest+json"

// PeerSource asks other index nodes what this node does not know (docs/index.md §6). The
// production implementation runs hedge.Lookup over HTTPPeers (see
// peerlookup.LookupName and peerlookup.LookupProviders; legs with ?local=1). Failures use
// hedge's errors: hedge.ErrNotFound (every peer answered, none had it),
// hedge.ErrTimeout (the budget ran out with legs still open) and
// hedge.ErrUnavailable (every peer failed or was skipped). Any other error
// counts as unavailable.
type PeerSource interface {
	// Name returns the record of key: a name (the live version) or
	// "name@version".
	Name(ctx context.Context, key string) (indexapi.NameRecord, error)
	// Providers returns the live providers of id (at least one on success).
	Providers(ctx context.Context, id store.ID) (indexapi.ProviderList, error)
}

// kindOf applies the docs/index.md §5 kind rule.
func kindOf(ps []indexapi.ProviderInfo) string {
	kind := "unknown"
	for _, p := range ps {
		if p.Type == manifestType {
			return "manifest"
		}
		if p.Type != "" {
			kind = "blob"
		}
	}
	return kind
}

// resolveOpts are the request's switches. doResolve fills set with the
// handlers' settings once, so one call sees one cache, peer source and
// budget however the role is reconfigured meanwhile.
type resolveOpts struct {
	noCache   bool // Cache-Control: no-cache: do not read this node's caches
	localOnly bool // ?local=1: local store only, no peers, no cache
	set       Settings
}

// errResolveNotFound is the 404 of a key known nowhere.
func errResolveNotFound(msg string) *httpx.Error {
	return httpx.NewError(http.StatusNotFound, httpx.CodeNotFound, "%s", msg)
}

// peerError maps a failed peer lookup onto the envelope; ok is false for
// not found (the caller decides what a miss means).
func peerError(err error) (notFound bool, out error) {
	switch {
	case errors.Is(err, hedge.ErrNotFound):
		return true, nil
	case errors.Is(err, hedge.ErrTimeout), errors.Is(err, context.DeadlineExceeded):
		return false, httpx.NewError(http.StatusGatewayTimeout, httpx.CodeTimeout, "resolve budget spent")
	}
	return false, httpx.NewError(http.StatusServiceUnavailable, httpx.CodeUpstreamUnavailable, "no peer answered")
}

// cacheRead reports whether this request may read the cache.
func (o resolveOpts) cacheRead() bool { return o.set.Cache != nil && !o.noCache && !o.localOnly }

// cacheWrite reports whether this request may fill the cache.
func (o resolveOpts) cacheWrite() bool { return o.set.Cache != nil && !o.localOnly }

// peers returns the peer source unless the request is local only.
func (o resolveOpts) peers() PeerSource {
	if o.localOnly {
		return nil
	}
	return o.set.Peers
}

// doResolve is the code path of GET /resolve/{key} (and
// LocalClient.Resolve): one budget for the whole call. It records the
// latency of answers by source (ron_resolve_latency_seconds) and budget
// exhaustion (ron_resolve_deadline_hit_total: a 504 or a partial answer).
func (h *Handlers) doResolve(ctx context.Context, key string, o resolveOpts) (resolved, error) {
	start := time.Now()
	o.set = h.settings()
	a, err := h.resolve(ctx, key, o)
	if h.Metrics == nil {
		return a, err
	}
	if err == nil {
		h.Metrics.Histogram("resolve_latency_seconds", "role", roleName, "source", a.Source).UpdateDuration(start)
	}
	if a.Partial || (err != nil && httpx.AsError(err).Status == http.StatusGatewayTimeout) {
		h.Metrics.Counter("resolve_deadline_hit_total", "role", roleName).Inc()
	}
	return a, err
}

// withBudget bounds ctx by the lookup budget (deadline_ms): one budget per
// call, started when a worker took the request.
func (o resolveOpts) withBudget(ctx context.Context) (context.Context, context.CancelFunc) {
	budget := o.set.ResolveBudget
	if budget <= 0 {
		budget = DefaultResolveBudget
	}
	return context.WithTimeout(ctx, budget)
}

// resolved is a resolve result: the answer, or for a resolve-cache hit only
// Source ("cache") and the stored encoding, sent as it is (decoding and
// re-encoding a hit would cost most of its time).
type resolved struct {
	indexapi.ResolveAnswer
	body  []byte // non-nil on a cache hit: the JSON answer with its newline
	empty bool   // the cached answer has no providers
}

// Flags that prefix a cached resolve encoding.
const (
	cachedFull  = 'f'
	cachedEmpty = 'e'
)

// cachedBody encodes a for the resolve cache: a flag byte, then the answer
// as a cache hit sends it (source "cache").
func cachedBody(a indexapi.ResolveAnswer) ([]byte, error) {
	a.Source = indexapi.SourceCache
	b, err := json.Marshal(a)
	if err != nil {
		return nil, err
	}
	flag := byte(cachedFull)
	if len(a.Providers) == 0 {
		flag = cachedEmpty
	}
	return append(append([]byte{flag}, b...), '\n'), nil
}

// decode returns the answer, decoding a cache hit's body.
func (a resolved) decode() (indexapi.ResolveAnswer, error) {
	if a.body == nil {
		return a.ResolveAnswer, nil
	}
	var out indexapi.ResolveAnswer
	return out, json.Unmarshal(a.body, &out)
}

// resolve is doResolve without the metrics.
func (h *Handlers) resolve(ctx context.Context, key string, o resolveOpts) (resolved, error) {
	ctx, cancel := o.withBudget(ctx)
	defer cancel()

	// Validate the key first: a malformed key is 400 whatever is cached.
	id, isID, err := indexapi.ParseResolveKey(key)
	if err != nil {
		return resolved{}, err
	}

	rk := cache.ResolveKey(key)
	if o.cacheRead() {
		b, res := o.set.Cache.Get(rk)
		switch res {
		case cache.Negative:
			return resolved{}, errResolveNotFound("not found")
		case cache.Hit:
			if len(b) > 1 {
				return resolved{ResolveAnswer: indexapi.ResolveAnswer{Source: indexapi.SourceCache}, body: b[1:], empty: b[0] == cachedEmpty}, nil
			}
		}
	}

	a := indexapi.ResolveAnswer{Key: key, Source: indexapi.SourceLocal}
	if isID {
		a.Target = key
	} else {
		rec, fromPeer, err := h.resolveName(ctx, key, o)
		if err != nil {
			if o.cacheWrite() && httpx.AsError(err).Status == http.StatusNotFound {
				o.set.Cache.PutNegative(rk)
			}
			return resolved{}, err
		}
		if fromPeer {
			a.Source = indexapi.SourcePeer
		}
		target, err := store.ParseID(rec.B3)
		if err != nil {
			return resolved{}, httpx.NewError(http.StatusServiceUnavailable, httpx.CodeUpstreamUnavailable,
				"peer answered an invalid target")
		}
		id, a.Target = target, rec.B3
		v := rec.Version
		a.NameVersion = &v
	}

	ps, fromPeer, partial, err := h.resolveProviders(ctx, id, o.set.Zone, resolveProviderLimit, o)
	// A definite "no providers anywhere" is an empty answer, cached for
	// neg_cache_ttl (docs/index.md §7); errors, timeouts and partial answers are not.
	storable := err == nil || httpx.AsError(err).Status == http.StatusNotFound
	switch {
	case err != nil && isID:
		if o.cacheWrite() && httpx.AsError(err).Status == http.StatusNotFound {
			o.set.Cache.PutNegative(rk)
		}
		return resolved{}, err
	case err != nil:
		// The pointer exists; its providers could not be learnt (partial
		// when the budget cut the lookup). Not cached.
		ps = nil
	}
	if fromPeer {
		a.Source = indexapi.SourcePeer
	}
	if ps == nil {
		ps = []indexapi.ProviderInfo{}
	}
	a.Providers, a.Partial, a.Kind = ps, partial, kindOf(ps)

	if o.cacheWrite() && storable && !a.Partial {
		if b, err := cachedBody(a); err == nil {
			if len(a.Providers) == 0 {
				o.set.Cache.PutEmpty(rk, b)
			} else {
				o.set.Cache.Put(rk, b)
			}
		}
	}
	return resolved{ResolveAnswer: a}, nil
}

// resolveName finds key (name or name@version) locally, then (static mode)
// at peers. A local tombstone or pruned version is an authoritative 404.
// In cluster mode every index node applies the whole name log, so the
// local answer is the answer (docs/cluster.md §14).
func (h *Handlers) resolveName(ctx context.Context, key string, o resolveOpts) (indexapi.NameRecord, bool, error) {
	rec, final, miss := h.localName(ctx, key)
	if final || o.localOnly || h.cl != nil {
		return rec, false, miss
	}
	peers := o.peers()
	if peers == nil {
		return indexapi.NameRecord{}, false, miss
	}
	nk := cache.NameKey(key)
	if o.cacheRead() {
		b, res := o.set.Cache.Get(nk)
		switch res {
		case cache.Negative:
			return indexapi.NameRecord{}, false, errResolveNotFound("name not found")
		case cache.Hit:
			var r indexapi.NameRecord
			if json.Unmarshal(b, &r) == nil {
				return r, true, nil
			}
		}
	}
	r, perr := peers.Name(ctx, key)
	if perr != nil {
		nf, out := peerError(perr)
		if nf {
			if o.cacheWrite() {
				o.set.Cache.PutNegative(nk)
			}
			return indexapi.NameRecord{}, false, errResolveNotFound("name not found")
		}
		return indexapi.NameRecord{}, false, out
	}
	if o.cacheWrite() {
		if b, err := json.Marshal(r); err == nil {
			o.set.Cache.Put(nk, b)
		}
	}
	return r, true, nil
}

// resolveProviders lists id's providers locally, then at peers (region
// matches first, at most limit). A 404 error means none anywhere; partial
// means the budget cut the peer lookup. In cluster mode only an owner of
// id (or a ?local=1 leg) reads its own store first.
func (h *Handlers) resolveProviders(ctx context.Context, id store.ID, region string, limit int, o resolveOpts) (ps []indexapi.ProviderInfo, fromPeer, partial bool, err error) {
	if o.localOnly || h.cl == nil || h.cl.peers.Ownership().Owns(ownership.ObjectKey(id)) {
		list, err := h.doProviders(ctx, id, region, limit)
		if err == nil {
			return list.Providers, false, false, nil
		}
		if httpx.AsError(err).Status != http.StatusNotFound {
			return nil, false, false, err
		}
	}
	peers := o.peers()
	if peers == nil {
		return nil, false, false, errResolveNotFound("no providers")
	}
	pk := cache.ProvidersKey(id.String())
	if o.cacheRead() {
		b, res := o.set.Cache.Get(pk)
		switch res {
		case cache.Negative:
			return nil, false, false, errResolveNotFound("no providers")
		case cache.Hit:
			var l indexapi.ProviderList
			if json.Unmarshal(b, &l) == nil {
				return preferRegion(l.Providers, region, limit), true, false, nil
			}
		}
	}
	l, perr := peers.Providers(ctx, id)
	if perr == nil && len(l.Providers) == 0 {
		perr = hedge.ErrNotFound
	}
	if perr != nil {
		nf, out := peerError(perr)
		if nf {
			if o.cacheWrite() {
				o.set.Cache.PutNegative(pk)
			}
			return nil, false, false, errResolveNotFound("no providers")
		}
		return nil, false, httpx.AsError(out).Status == http.StatusGatewayTimeout, out
	}
	if o.cacheWrite() {
		if b, err := json.Marshal(l); err == nil {
			o.set.Cache.Put(pk, b)
		}
	}
	return preferRegion(l.Providers, region, limit), true, false, nil
}

// localName reads key (name or name@version) from this node's store.
// final is false only for a plain miss (err is then the 404 to answer when
// no peer knows better); a found record, a tombstone or pruned version (an
// authoritative 404) and other errors are final.
func (h *Handlers) localName(ctx context.Context, key string) (rec indexapi.NameRecord, final bool, err error) {
	var r indexdb.Record
	if strings.Contains(key, "@") {
		r, err = h.doGetVersion(ctx, key)
	} else {
		r, err = h.doGet(ctx, key)
	}
	if err == nil {
		return toRecordOut(r), true, nil
	}
	he := httpx.AsError(err)
	if he.Status != http.StatusNotFound {
		return indexapi.NameRecord{}, true, err
	}
	_, hasReason := he.Details["reason"] // deleted or pruned here
	return indexapi.NameRecord{}, hasReason, err
}

// preferRegion orders a peer's provider list for this caller: records in
// region first (keeping the peer's order otherwise, which is freshest
// first), at most limit. ps is not modified.
func preferRegion(ps []indexapi.ProviderInfo, region string, limit int) []indexapi.ProviderInfo {
	out := slices.Clone(ps)
	if region != "" {
		slices.SortStableFunc(out, func(a, b indexapi.ProviderInfo) int {
			return cmpBool(b.Region == region, a.Region == region)
		})
	}
	if len(out) > limit {
		out = out[:limit]
	}
	return out
}

// cmpBool orders false before true.
func cmpBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}

// requestOpts reads a lookup request's switches: Cache-Control: no-cache
// and ?local=1.
func requestOpts(c echo.Context) resolveOpts {
	return resolveOpts{noCache: hasNoCache(c.Request()), localOnly: c.QueryParam("local") == "1"}
}

// getResolve is GET /resolve/{key}[?local=1].
func (h *Handlers) getResolve(c echo.Context) error {
	key, err := url.PathUnescape(c.Param("key"))
	if err != nil {
		return indexapi.BadRequest("key is not valid path text")
	}
	a, err := h.doResolve(c.Request().Context(), key, requestOpts(c))
	if err != nil {
		if httpx.AsError(err).Status == http.StatusNotFound {
			return writeErrorCached(c, err, ccProvidersEmpty)
		}
		return err
	}
	if a.body != nil {
		cc := ccProviders
		if a.empty {
			cc = ccProvidersEmpty
		}
		c.Response().Header().Set("Cache-Control", cc)
		return writeBody(c, http.StatusOK, a.body)
	}
	cc := ccProviders
	switch {
	case a.Partial:
		cc = ccNoCache
	case len(a.Providers) == 0:
		cc = ccProvidersEmpty
	}
	c.Response().Header().Set("Cache-Control", cc)
	return writeJSON(c, http.StatusOK, a.ResolveAnswer)
}

// hasNoCache reports a request Cache-Control with the no-cache directive.
func hasNoCache(r *http.Request) bool {
	for _, v := range r.Header.Values("Cache-Control") {
		for _, d := range strings.Split(v, ",") {
			if strings.EqualFold(strings.TrimSpace(d), "no-cache") {
				return true
			}
		}
	}
	return false
}
