package index

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	goruntime "runtime"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/httpx/rolebase"
	"github.com/ronhq/ron/roles/index/cache"
	"github.com/ronhq/ron/roles/index/indexapi"
	"github.com/ronhq/ron/roles/index/indexdb"
	"github.com/ronhq/ron/roles/index/namelog"
	"github.com/ronhq/ron/roles/index/ownership"
	"github.com/ronhq/ron/runtime"
	"github.com/ronhq/ron/runtime/consensus"
	"github.com/ronhq/ron/runtime/module"
	"github.com/ronhq/ron/store/kv"
	"github.com/ronhq/ron/store/kv/bolt"
	"github.com/ronhq/ron/store/kv/memkv"
)

// Store cadence (docs/index.md §9, §11) and shutdown grace.
const (
	probeEvery    = 10 * time.Second
	probeDeadline = 2 * time.Second
	probeFresh    = 15 * time.Second
	dbTimeout     = 2 * time.Second        // one janitor or count transaction
	openTimeout   = time.Second            // bbolt file lock wait
	abortGrace    = 500 * time.Millisecond // for cancelled requests to return
)

// Options are what the composition root passes to New.
type Options struct {
	Config Config
	// Env is the node's shared environment (runtime/module): bbolt at
	// <DataDir>/index/index.db (amnesia: memory KV); Node.Zone is the
	// region sorted first. In cluster mode (Cluster set) names go through
	// the control-plane log (Plane, required; docs/cluster.md §14),
	// provider records are owned by index members (docs/cluster.md §6) and
	// index.peers is ignored; ClusterConfig's index_replicas applies,
	// Node.ID names this node ("" = the view's Self), Node.Token mints the
	// bearer of node-to-node calls and Fatal stops the node when the names
	// log can no longer be applied.
	module.Env
}

// Role is the index role. Build it with New; the runtime manager drives
// Start, Run and Stop. It implements runtime.Role, Drainer, Readier,
// Applier, ApplyChecker, Detailer, TaskGrouper and Addresser.
type Role struct {
	*rolebase.Base[Config]
	opt Options
	met roleMetrics

	kv     kv.DB
	db     *indexdb.DB
	h      *Handlers
	cache  *cache.Cache[[]byte]
	work   *workQueue
	compat map[string]bool // route templates of the docs/index.md §10 routes

	peers  atomic.Pointer[HedgedPeers]
	cpeers *ownership.Peers // cluster mode's peers; nil in static mode
	// names is the names log's state machine over db, set when the store
	// opens (cluster mode; the control plane opens after the role started).
	nameLog atomic.Pointer[namelog.FSM]
	setup   peerSetup // guarded by applyMu
	built   bool      // setup was built once; guarded by applyMu
	stopped bool      // Stop closed the peers; guarded by applyMu
	moves   *runtime.Queue[breakerMove]

	open      atomic.Bool  // the store is open
	lastProbe atomic.Int64 // unix ns of the last good probe; 0 = none or failed
	names     atomic.Int64 // live names, refreshed by the janitor
	records   atomic.Int64 // provider records, refreshed by the janitor
}

// New builds the role without side effects: nothing is opened or bound.
func New(opt Options) *Role {
	if opt.Metrics == nil {
		opt.Metrics = runtime.NewMetrics(nil)
	}
	r := &Role{opt: opt, met: roleMetrics{opt.Metrics}}
	r.Base = rolebase.New(roleName, opt.Config, &opt.Env, func(c Config) string { return c.Listen })
	if opt.Cluster != nil && opt.Plane != nil {
		opt.Plane.Register(consensus.KindNames, namesMachine{r})
	}
	// Every key but listen reloads live; the role runs from Start (its handlers exist) until
	// Stop closed its peers. ApplyMu also serialises peer rebuilds.
	r.OnReload(runtime.Reconfig[Config]{Validate: Config.Validate, RestartOnly: Config.restartOnly,
		Running:     func() bool { return r.h != nil && !r.stopped },
		Reconfigure: func(_, n Config) error { return r.reconfigure(n) }})
	return r
}

// Handlers returns the role's handlers after Start (nil before).
// NewLocalClient(r.Handlers()) is how in-process callers talk to the role.
func (r *Role) Handlers() *Handlers { return r.h }

// AdvertiseURL is advertise_url, else "http://" + the bound listener address
// (valid after Start).
func (r *Role) AdvertiseURL() string {
	if u := r.Cfg.Load().AdvertiseURL; u != "" {
		return u
	}
	return "http://" + r.Addr()
}

// Start validates the config, opens the store, runs a first write probe,
// binds the listener and builds the peer source from index.peers minus this
// node.
func (r *Role) Start(ctx context.Context) error {
	cfg := r.Cfg.Load()
	if err := cfg.Validate(); err != nil {
		return err
	}
	if r.opt.Cluster != nil && r.opt.Node.Token == nil {
		return errors.New("index: cluster mode needs a node token (Options.NodeToken)")
	}
	if r.opt.Cluster != nil && (r.opt.Plane == nil || r.opt.Fatal == nil) {
		return errors.New("index: cluster mode needs the control plane (Options.Plane, Options.Fatal)")
	}
	if err := r.openStore(ctx, *cfg); err != nil {
		return err
	}
	if err := r.build(*cfg); err != nil {
		_ = r.closeStore()
		return err
	}
	if err := r.Listen(); err != nil {
		r.work.abort()
		_ = r.closeStore()
		return err
	}
	r.moves = runtime.NewQueue[breakerMove](r.opt.Metrics, roleName, "breaker_log", 64, runtime.DropOldest)
	r.ApplyMu.Lock()
	defer r.ApplyMu.Unlock()
	if err := r.rebuildPeers(*cfg); err != nil { // unlikely: the peers were validated
		r.work.abort()
		_ = r.closeStore()
		return err
	}
	r.Log.Info().Str("listen", r.Addr()).Str("version", r.opt.Version).Msg("index listening")
	return nil
}

// openStore opens the KV, indexdb, cache and handlers and probes once.
func (r *Role) openStore(ctx context.Context, cfg Config) error {
	kdb, err := r.openKV()
	if err != nil {
		return err
	}
	r.kv = kdb
	r.db, err = indexdb.Open(ctx, kdb, time.Now, indexdb.WithLimits(cfg.limits()))
	if err == nil {
		r.cache, err = cache.New[[]byte](cache.Config{Entries: cfg.CacheEntries, TTL: cfg.CacheTTL,
			NegTTL: cfg.NegCacheTTL, Metrics: r.opt.Metrics})
	}
	if err != nil {
		_ = kdb.Close()
		return fmt.Errorf("index: open store: %w", err)
	}
	r.open.Store(true)
	r.h = NewHandlers(r.db, r.opt.Keys, nil)
	r.h.Metrics = r.opt.Metrics
	if r.opt.Cluster != nil {
		r.enableCluster(cfg)
		if err := r.parkUnlogged(ctx); err != nil {
			_ = kdb.Close()
			return err
		}
	}
	r.h.Reconfigure(r.settings(cfg, nil))
	r.met.register(func() float64 { return float64(r.names.Load()) },
		func() float64 { return float64(r.records.Load()) })
	r.probe(ctx)
	r.refreshCounts(ctx)
	return nil
}

// openKV opens the memory KV (amnesia) or bbolt at <data>/index/index.db.
func (r *Role) openKV() (kv.DB, error) {
	if r.opt.Amnesia {
		return memkv.New(), nil
	}
	path := filepath.Join(r.opt.DataDir, indexapi.RoleName, "index.db")
	kdb, err := bolt.Open(path, bolt.Options{OpenTimeout: openTimeout})
	if errors.Is(err, bolt.ErrLocked) {
		return nil, fmt.Errorf("index database locked by another process: %s", path)
	}
	if err != nil {
		return nil, fmt.Errorf("index: open %s: %w", path, err)
	}
	return kdb, nil
}

// closeStore closes the KV once.
func (r *Role) closeStore() error {
	if r.kv == nil || !r.open.Swap(false) {
		return nil
	}
	return r.kv.Close()
}

// build makes the work queue and the listener with its routes (unbound).
func (r *Role) build(cfg Config) error {
	wq, err := newWorkQueue(r.opt.Metrics, cfg)
	if err != nil {
		return fmt.Errorf("index: admission: %w", err)
	}
	r.work = wq
	e := r.NewServer(httpx.ServerOptions{Metrics: r.opt.Metrics.Set(), Limits: cfg.Ingress.Limits()}).Echo()
	r.h.Mount(e, r.work.middleware)
	r.mountCompat(e)
	if r.opt.Ops != nil {
		r.opt.Ops(e)
	}
	return nil
}

// mountCompat mounts the docs/index.md §10 routes behind a gate that answers 404 while
// compat_routes is false and admits them like the other routes when true,
// so the key can change live.
func (r *Role) mountCompat(e *echo.Echo) {
	before := map[string]bool{}
	for _, rt := range e.Routes() {
		before[rt.Method+" "+rt.Path] = true
	}
	r.h.MountCompat(e)
	r.compat = map[string]bool{}
	for _, rt := range e.Routes() {
		if !before[rt.Method+" "+rt.Path] {
			r.compat[rt.Path] = true
		}
	}
	e.Use(r.compatGate)
}

// compatGate is the gate of mountCompat.
func (r *Role) compatGate(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if !r.compat[c.Path()] {
			return next(c)
		}
		if !r.Cfg.Load().CompatRoutes {
			return echo.ErrNotFound
		}
		return r.work.middleware(next)(c)
	}
}

// settings are the handlers' settings for cfg with peer source hp.
func (r *Role) settings(cfg Config, hp *HedgedPeers) Settings {
	s := Settings{Zone: r.opt.Node.Zone, DefaultTTL: cfg.ProviderTTLDefault, Cache: r.cache,
		ResolveBudget: cfg.deadline(), PrivateReads: !cfg.PublicReads}
	if hp != nil {
		s.Peers = hp
	}
	return s
}

// rebuildPeers builds the peer source of cfg when its inputs changed
// (purging the answer cache then) and hands the handlers their settings.
// Callers hold applyMu.
func (r *Role) rebuildPeers(cfg Config) error {
	if r.cpeers != nil {
		r.reconfigureCluster(cfg)
		return nil
	}
	ps, skipped := newPeerSetup(cfg, r.AdvertiseURL(), r.opt.Metrics)
	if r.built && ps.equal(r.setup) {
		r.h.Reconfigure(r.settings(cfg, r.peers.Load()))
		return nil
	}
	hp, err := ps.build(r.opt.Metrics, r.breakerMoved)
	if err != nil {
		return fmt.Errorf("index.peers: %w", err)
	}
	for _, s := range skipped {
		r.Log.Info().Str("peer", s).Msg("peer is this node (advertise_url); skipped")
	}
	r.setup, r.built = ps, true
	r.h.Reconfigure(r.settings(cfg, hp))
	if old := r.peers.Swap(hp); old != nil {
		old.Close()
	}
	r.cache.Purge() // answers learnt from (or missed at) the old peers
	return nil
}

// Run serves until ctx ends; a listener failure is returned (fatal).
func (r *Role) Run(ctx context.Context) error {
	r.Tasks.Go("probe", r.probeLoop)
	r.Tasks.Go("janitor", r.janitorLoop)
	r.Tasks.Go("breaker-log", r.logMoves)
	if r.cpeers != nil {
		r.Tasks.Go(taskNamesImport, r.importNames)
	}
	return r.Serve(ctx)
}

// Drain stops taking work at once: new requests answer 503 draining and
// readiness turns false (shutdown step 2).
func (r *Role) Drain() {
	if r.work != nil {
		r.work.drain()
	}
	r.Base.Drain()
}

// Stop stops accepting, lets in-flight lookups finish until ctx's deadline,
// then cancels them (and their peer legs), stops the workers and closes the
// peers and the store.
func (r *Role) Stop(ctx context.Context) error {
	r.Drain()
	if n := r.Shutdown(ctx); n > 0 {
		r.Log.Warn().Int("connections", n).Msg("drain deadline passed: aborting open lookups")
	}
	if r.work != nil {
		if n := r.work.stop(abortGrace); n > 0 {
			r.Log.Warn().Int("requests", n).Msg("cancelled requests still running at the drain deadline")
		}
	}
	if r.moves != nil {
		r.moves.Close()
	}
	r.Tasks.Stop(ctx)
	r.ApplyMu.Lock()
	r.stopped = true // a racing Apply builds no new peer source
	hp := r.peers.Swap(nil)
	r.ApplyMu.Unlock()
	if hp != nil {
		hp.Close()
	}
	if r.cpeers != nil {
		r.cpeers.Close()
	}
	return r.closeStore()
}

// Ready reports docs/index.md §11 readiness: store open, a write probe within 15 s, not
// draining.
func (r *Role) Ready(context.Context) runtime.Readiness {
	var rd runtime.Readiness
	switch {
	case r.Draining():
		rd.Missing = append(rd.Missing, roleName)
	case !r.open.Load() || !r.probeOK():
		rd.Missing = append(rd.Missing, roleName+":store")
	}
	return rd
}

// probeOK reports a successful probe within probeFresh.
func (r *Role) probeOK() bool {
	last := r.lastProbe.Load()
	return last != 0 && time.Since(time.Unix(0, last)) < probeFresh
}

// Details is the role's object in /api/v1/status.
func (r *Role) Details() any {
	d := map[string]any{
		"names": r.names.Load(), "provider_records": r.records.Load(),
		"peers": 0, "peers_open": 0, "cache_entries": 0, "probe_ok": r.probeOK(),
		"public_reads": r.Cfg.Load().PublicReads,
	}
	if hp := r.peers.Load(); hp != nil {
		d["peers"], d["peers_open"] = hp.Len(), hp.OpenCount()
	}
	if r.cpeers != nil {
		d["peers"], d["peers_open"] = r.cpeers.Len(), r.cpeers.OpenCount()
		d["cluster"] = r.clusterDetails()
	}
	if r.cache != nil {
		d["cache_entries"] = r.cache.Len()
	}
	return d
}

// reconfigure applies a validated config to the running role. Callers
// hold applyMu.
func (r *Role) reconfigure(n Config) error {
	r.db.SetLimits(n.limits())
	if err := r.cache.Reconfigure(cache.Config{Entries: n.CacheEntries, TTL: n.CacheTTL, NegTTL: n.NegCacheTTL}); err != nil {
		return err
	}
	r.Server().SetLimits(n.Ingress.Limits())
	if err := r.work.apply(n); err != nil {
		return err
	}
	return r.rebuildPeers(n)
}

// probeLoop runs the write probe every probeEvery.
func (r *Role) probeLoop(ctx context.Context) error {
	for runtime.Sleep(ctx, probeEvery) {
		r.probe(ctx)
	}
	return nil
}

// probe runs one write probe (a transaction updating meta/probe) under
// probeDeadline and records when it last succeeded.
func (r *Role) probe(ctx context.Context) {
	r.met.spawned(kindProbe)
	pctx, cancel := context.WithTimeout(ctx, probeDeadline)
	defer cancel()
	err := writeProbe(pctx, r.kv, time.Now())
	if err == nil {
		r.lastProbe.Store(time.Now().UnixNano())
		return
	}
	r.lastProbe.Store(0)
	switch {
	case ctx.Err() != nil:
		r.met.canceled(kindProbe)
		return
	case errors.Is(err, context.DeadlineExceeded):
		r.met.ioTimeout(opDB)
	}
	r.Log.Error().Err(err).Msg("write probe failed: not ready until it succeeds")
}

// writeProbe updates meta/probe with now (unix ms) in one transaction.
func writeProbe(ctx context.Context, db kv.DB, now time.Time) error {
	return db.Update(ctx, func(tx kv.Tx) error {
		b := tx.Bucket(bucketMeta)
		if b == nil {
			return errors.New("index: meta bucket missing")
		}
		return b.Put([]byte(probeKey), strconv.AppendInt(nil, now.UnixMilli(), 10))
	})
}

// Buckets and keys the role touches directly (docs/index.md §9).
const (
	bucketMeta      = "meta"
	bucketNames     = "names"
	bucketProviders = "providers"
	probeKey        = "probe"
)

// janitorLoop prunes expired provider records every janitor_interval and
// refreshes the record gauges.
func (r *Role) janitorLoop(ctx context.Context) error {
	for runtime.Sleep(ctx, r.Cfg.Load().JanitorInterval) {
		r.met.spawned(kindJanitor)
		j := janitor{db: r.db, batch: r.Cfg.Load().JanitorBatch, met: r.met}
		n, err := j.run(ctx)
		switch {
		case ctx.Err() != nil:
			r.met.canceled(kindJanitor)
			return nil
		case err != nil:
			r.Log.Error().Err(err).Int("pruned", n).Msg("janitor pass failed; next pass retries")
		}
		r.refreshCounts(ctx)
	}
	return nil
}

// pruner is the janitor's view of indexdb.DB.
type pruner interface {
	Prune(ctx context.Context, limit int) (int, error)
}

// Janitor retry policy for a failed transaction (op="db").
var (
	janitorRetries = 3
	janitorBackoff = runtime.Backoff{Base: 100 * time.Millisecond, Max: time.Second, Factor: 2, Jitter: 0.2}
)

// janitor is one pruning pass (docs/index.md §9): transactions of at most batch expired
// records, soonest expiry first, yielding between them, until one stops
// short (it reached the first unexpired key).
type janitor struct {
	db    pruner
	batch int
	met   roleMetrics
}

// run makes the pass and returns how many records it pruned.
func (j janitor) run(ctx context.Context) (int, error) {
	total := 0
	for {
		n, err := j.step(ctx)
		total += n
		j.met.pruned(n)
		if err != nil || n < j.batch {
			return total, err
		}
		goruntime.Gosched() // let waiting writers take the write lock
	}
}

// step runs one transaction under dbTimeout, retrying failures with backoff.
func (j janitor) step(ctx context.Context) (int, error) {
	for attempt := 0; ; attempt++ {
		tctx, cancel := context.WithTimeout(ctx, dbTimeout)
		n, err := j.db.Prune(tctx, j.batch)
		cancel()
		if err == nil || ctx.Err() != nil || errors.Is(err, kv.ErrClosed) || attempt >= janitorRetries {
			return n, err
		}
		if errors.Is(err, context.DeadlineExceeded) {
			j.met.ioTimeout(opDB)
		}
		if !runtime.Sleep(ctx, janitorBackoff.Delay(attempt, nil)) {
			return 0, ctx.Err()
		}
		j.met.retry(opDB)
	}
}
