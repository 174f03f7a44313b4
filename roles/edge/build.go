package edge

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/httpx/client"
	"github.com/ronhq/ron/roles/edge/edgecache"
	"github.com/ronhq/ron/roles/edge/fillq"
	"github.com/ronhq/ron/roles/edge/live"
	"github.com/ronhq/ron/roles/edge/objects"
	"github.com/ronhq/ron/roles/edge/packs"
	"github.com/ronhq/ron/roles/edge/tiles"
)

// build opens the cache, mounts the packs and makes the queue, sources,
// handlers and listener of cfg. On failure everything opened is closed.
func (r *Role) build(ctx context.Context, cfg Config) error {
	s, err := newSettings(cfg)
	if err != nil {
		return err
	}
	r.set.Store(s)
	r.met = newEdgeMetrics(r.opt.Metrics)
	if err := r.openStores(ctx, cfg); err != nil {
		r.closeParts()
		return err
	}
	r.queue = fillq.New(r.opt.Metrics, roleName, cfg.FillQueueCap)
	r.src = newSources(sourceOptions{cfg: cfg, local: r.opt.Local, token: r.token,
		maxProviders: func() int { return r.set.Load().obj.MaxProviders },
		opt:          client.Options{Role: roleName, Metrics: r.opt.Metrics.Set()},
		cluster:      r.opt.Cluster, zone: r.opt.Node.Zone, memberToken: r.mint.token})
	r.buildHandlers()
	r.mount(r.newServer(cfg).Echo())
	return nil
}

// newServer is the edge listener of cfg behind the shared chain. Every
// edge route has the role's own deadline (to the first byte), body
// handling (only /assets reads bodies, under body_max_bytes and its decode
// guard) and write pacing (see deadline), so the chain treats them as
// streaming; the Ops routes keep the chain's.
func (r *Role) newServer(cfg Config) *httpx.Server {
	return r.NewServer(httpx.ServerOptions{Metrics: r.opt.Metrics.Set(), Limits: cfg.Ingress.Limits(), HandlerTimeout: cfg.RequestTimeout,
		RateLimitReason: ReasonRateLimit, OnRateLimit: func() { r.met.reject(ReasonRateLimit) },
		Streaming: func(_, route string) bool { return !opsRoutes[route] }})
}

// openStores opens the cache (docs/edge.md §8) and mounts the packs (docs/edge.md §4).
func (r *Role) openStores(ctx context.Context, cfg Config) error {
	dir := ""
	if !r.opt.Amnesia {
		dir = filepath.Join(r.opt.DataDir, roleName)
	}
	var err error
	r.cache, err = edgecache.Open(edgecache.Options{Dir: dir, MaxBytes: cfg.cacheBudget(r.opt.Amnesia),
		MaxVariants: cfg.MaxVariants, Metrics: r.opt.Metrics, Log: r.Log})
	if err != nil {
		return fmt.Errorf("edge: cache: %w", err)
	}
	r.packs = packs.NewSet(r.packOptions(cfg))
	if err := r.packs.Mount(ctx); err != nil {
		return fmt.Errorf("edge: packs: %w", err)
	}
	return nil
}

// packOptions are the pack set's options of cfg.
func (r *Role) packOptions(cfg Config) packs.Options {
	o := cfg.packOptions(r.opt.DataDir)
	o.Metrics, o.Log = r.opt.Metrics, r.Log
	return o
}

// buildHandlers makes the /o, /packs + /tiles and /assets handlers over
// the cache, queue and packs; they read their live settings per request.
func (r *Role) buildHandlers() {
	m := r.opt.Metrics
	r.objects = objects.New(objects.Options{Cache: r.cache, Queue: r.queue, Storage: r.src.storage,
		Providers: r.src.providers, ProviderClient: r.src.providerClient, ProviderToken: r.token,
		Limits: func() objects.Limits { return r.set.Load().obj }, Metrics: m, Log: r.Log})
	r.tiles = tiles.New(tiles.Options{Packs: r.packs, Settings: func() tiles.Settings { return r.set.Load().tile },
		Metrics: m, Log: r.Log})
	r.live = live.New(live.Options{Cache: r.cache, Queue: r.queue, Metrics: m, Log: r.Log}, r.set.Load().live)
}

// token is the bearer of HTTP sources: upstream_token when set (live),
// else one minted from the root key.
func (r *Role) token() string {
	if t := r.set.Load().cfg.UpstreamToken; t != "" {
		return t
	}
	return r.mint.token()
}

// watchPacks is the pack watcher task (docs/edge.md §4.3): the set's poll loop until
// the role stops.
func (r *Role) watchPacks(ctx context.Context) error {
	r.met.watchSpawned.Inc()
	err := r.packs.Run(ctx)
	if ctx.Err() != nil {
		r.met.watchStopped.Inc()
		return nil
	}
	return err
}

// reconcile is the cache's one background reconcile after start (docs/edge.md §8);
// readiness does not wait for it. A failure is logged, not retried.
func (r *Role) reconcile(ctx context.Context) error {
	r.met.recSpawned.Inc()
	err := r.cache.Reconcile(ctx)
	switch {
	case ctx.Err() != nil:
		r.met.recCanceled.Inc()
	case err != nil:
		r.Log.Warn().Err(err).Msg("cache reconcile failed")
	}
	return nil
}
