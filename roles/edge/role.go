// Package edge is the edge role (docs/edge.md): map-tile packs (PMTiles,
// MBTiles) with exact Range and conditional semantics, immutable objects
// filled from storage into the edge's cache, and assets from configured
// origins behind an RFC 9111 shared cache. The building blocks live in the
// subpackages (packs, tiles, objects, live, edgecache, fillq); this package
// is the role: config, lifecycle (docs/edge.md §9), routes and shared HTTP behaviour
// (docs/edge.md §1, docs/edge.md §2), and the /o fill sources (docs/edge.md §3).
package edge

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/ronhq/ron/httpx/rolebase"
	"github.com/ronhq/ron/roles/edge/edgecache"
	"github.com/ronhq/ron/roles/edge/fillq"
	"github.com/ronhq/ron/roles/edge/live"
	"github.com/ronhq/ron/roles/edge/objects"
	"github.com/ronhq/ron/roles/edge/packs"
	"github.com/ronhq/ron/roles/edge/tiles"
	"github.com/ronhq/ron/runtime"
	"github.com/ronhq/ron/runtime/module"
)

// Options are what the composition root passes to New.
type Options struct {
	Config Config
	// Env is the node's shared environment (runtime/module): the cache
	// lives in <DataDir>/edge (memory only in amnesia), packs default to
	// <DataDir>/packs; Keys mints the bearer of HTTP /o sources. In cluster
	// mode (Cluster set), with no co-located index and no index_url,
	// providers come from an alive index member, Node.Zone first, falling
	// back to the next on failure.
	module.Env
	Local Locals // the roles co-located in this process
}

// Role is the edge role. Build it with New; the runtime manager drives
// Start, Run and Stop. It implements runtime.Role, Drainer, Readier,
// Applier, ApplyChecker, Detailer, LastErrorer, TaskGrouper and Addresser.
type Role struct {
	*rolebase.Base[Config]
	opt  Options
	set  atomic.Pointer[settings] // parsed forms of the config in force
	met  *edgeMetrics
	mint *minter

	cache   *edgecache.Cache
	packs   *packs.Set
	queue   *fillq.Queue
	objects *objects.Objects
	tiles   *tiles.Tiles
	live    *live.Live
	src     *sources

	started  atomic.Bool // Start finished: every part above is set
	stopOnce sync.Once
}

// New builds the role without side effects: nothing is opened, bound or
// dialled.
func New(opt Options) *Role {
	if opt.Metrics == nil {
		opt.Metrics = runtime.NewMetrics(nil)
	}
	r := &Role{opt: opt}
	r.Base = rolebase.New(roleName, opt.Config, &opt.Env, func(c Config) string { return c.Listen })
	r.mint = newMinter(opt.Keys, r.Log)
	// Every key reloads live (docs/edge.md §10: origins, pack sources and checks, cache
	// budgets — shrinking evicts at once —, limits, timeouts, CORS, tokens and tile
	// settings) but listen, storage_url, index_url, fill_workers and fill_queue_cap,
	// rejected by name. Before Start a reload only stores the config.
	r.OnReload(runtime.Reconfig[Config]{Validate: r.validate, RestartOnly: Config.restartOnly,
		Running: r.started.Load, Reconfigure: r.reconfigure})
	return r
}

// Start (docs/edge.md §9) validates the config, opens the cache (a failure is fatal),
// mounts the packs, builds the handlers and binds the listener; then it
// starts the fill workers, the pack watcher and the cache's background
// reconcile.
func (r *Role) Start(ctx context.Context) error {
	cfg := *r.Cfg.Load()
	if err := r.validate(cfg); err != nil {
		return err
	}
	if err := r.build(ctx, cfg); err != nil {
		return err
	}
	if err := r.Listen(); err != nil {
		r.closeParts()
		return err
	}
	r.queue.Start(r.Tasks, cfg.FillWorkers)
	r.Tasks.Go("pack_watch", r.watchPacks)
	r.Tasks.Go("reconcile", r.reconcile)
	if r.src.members != nil {
		r.Tasks.Go("members-index-client", r.src.members.Run)
	}
	r.started.Store(true)
	r.Log.Info().Str("listen", r.Addr()).Int("packs", len(r.packs.List())).Strs("sources", r.src.describe).
		Bool("memory_cache", r.cache.Memory()).Msg("edge listening")
	return nil
}

// validate checks cfg on its own and against the co-located roles.
func (r *Role) validate(cfg Config) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	return cfg.CheckSources(r.opt.Local.colocated)
}

// Run serves until ctx ends.
func (r *Role) Run(ctx context.Context) error {
	return r.Serve(ctx)
}

// Drain (shutdown step 2): the fill queue closes (new fills and queued
// jobs answer 503 draining), readiness turns false. Hits are still served.
func (r *Role) Drain() {
	if r.queue != nil {
		r.queue.Close()
	}
	r.Base.Drain()
}

// Stop (docs/edge.md §9): after Drain, running fills and in-flight requests drain
// until ctx's deadline; fills still running then are aborted (their temp
// data deleted, counted in ron_tasks_aborted_total{kind="fill"}) and open
// connections closed. The watcher and the workers stop; packs and the
// cache close once their last read has finished.
func (r *Role) Stop(ctx context.Context) error {
	r.Drain()
	if r.Server() != nil {
		var aborted int
		var wg sync.WaitGroup
		wg.Go(func() { aborted = r.queue.Drain(ctx) })
		conns := r.Shutdown(ctx)
		wg.Wait()
		if aborted > 0 || conns > 0 {
			r.Log.Warn().Int("fills", aborted).Int("connections", conns).Msg("drain deadline passed: aborted")
		}
	}
	r.Tasks.Stop(ctx)
	r.closeParts()
	return nil
}

// closeParts releases what build opened, once.
func (r *Role) closeParts() {
	r.stopOnce.Do(func() {
		if r.live != nil {
			r.live.Close()
		}
		if r.src != nil {
			r.src.close()
		}
		if r.packs != nil {
			r.packs.Close()
		}
		if r.cache != nil {
			if err := r.cache.Close(); err != nil {
				r.Log.Warn().Err(err).Msg("cache close")
			}
		}
	})
}

// Ready (docs/edge.md §9): every pack that failed to mount (unless skipped) is missing
// as edge:pack:<name>; the fill queue at ≥ 80 % (until < 50 %) is degraded
// as edge:fill_queue. Origins and storage are never probed.
func (r *Role) Ready(context.Context) runtime.Readiness {
	var rd runtime.Readiness
	if !r.started.Load() || r.Draining() {
		rd.Missing = []string{roleName}
		return rd
	}
	rd.Missing = r.packs.Missing()
	if r.queue.Degraded() {
		rd.Degraded = []string{roleName + ":fill_queue"}
	}
	return rd
}

// LastError is the last pack (re)mount failure (docs/edge.md §4.3: a replaced file that
// fails verification keeps the old version serving; the failure shows
// here, not in readiness).
func (r *Role) LastError() string {
	if !r.started.Load() {
		return ""
	}
	return r.packs.LastError()
}

// Details is the role's object in /api/v1/status: packs, cache, queue,
// origins and sources.
func (r *Role) Details() any {
	if !r.started.Load() {
		return map[string]any{}
	}
	s := r.set.Load()
	origins := make([]string, 0, len(s.live.Origins))
	for _, o := range s.live.Origins {
		origins = append(origins, o.Name)
	}
	return map[string]any{
		"packs":   r.packs.Status(),
		"cache":   r.cacheDetails(s.cfg),
		"queue":   map[string]int{"depth": r.queue.Len(), "capacity": r.queue.Cap()},
		"origins": origins,
		"sources": r.src.describe,
	}
}

// cacheDetails is the cache's part of Details.
func (r *Role) cacheDetails(cfg Config) map[string]any {
	st := r.cache.Stats()
	return map[string]any{"bytes": st.Bytes, "entries": st.Entries, "blobs": st.Blobs, "memory": r.cache.Memory(),
		"max_bytes": cfg.cacheBudget(r.opt.Amnesia)}
}
