package storage

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/httpx/rolebase"
	"github.com/ronhq/ron/roles/storage/announcing"
	"github.com/ronhq/ron/roles/storage/peer"
	"github.com/ronhq/ron/roles/storage/repair"
	"github.com/ronhq/ron/roles/storage/repairlink"
	"github.com/ronhq/ron/roles/storage/replicate"
	"github.com/ronhq/ron/roles/storage/storageapi"
	"github.com/ronhq/ron/runtime"
	"github.com/ronhq/ron/runtime/cluster"
	"github.com/ronhq/ron/runtime/module"
	"github.com/ronhq/ron/store"
	"github.com/ronhq/ron/store/fs"
	"github.com/ronhq/ron/store/memory"
)

// Probe and sweep cadence (docs/storage.md §6).
const (
	probeEvery    = 10 * time.Second
	probeDeadline = 2 * time.Second
	probeFresh    = 15 * time.Second
	sweepEvery    = time.Hour
)

// Options are what the composition root passes to New.
type Options struct {
	Config Config
	// Env is the node's shared environment (runtime/module): the role
	// keeps its data in <DataDir>/storage (amnesia forces the memory
	// engine); in cluster mode (Cluster set) it replicates and repairs, with
	// ClusterConfig's repair_*, drop_excess and replica_stall_timeout, and
	// calls other nodes with Node.Token.
	module.Env
	// Sink receives provider announcements and re-provide batches; nil =
	// announcing off. A Sink that is also a Retargeter follows hot reloads of
	// index_urls and index_token (Start points it at the configured ones).
	Sink announcing.Sink
	// AnnounceOff explains why Sink is nil, for /api/v1/status.
	AnnounceOff string
}

// Role is the storage role. Build it with New; the runtime manager drives
// Start, Run and Stop.
type Role struct {
	*rolebase.Base[Config]
	opt     Options
	metrics roleMetrics

	engine    store.BlobStore
	work      *workQueue
	announce  *announcer
	reprovide *reprovider    // nil when announcing is off
	lastProbe atomic.Int64   // unix ns of the last successful probe; 0 = none or failed
	upgrade   sidecarUpgrade // progress of the v1 → v2 sidecar upgrade

	// Cluster mode (docs/cluster.md §4–§5): the node-to-node client (replica
	// copies, inventory checks; nil with cluster mode off), the replicator of
	// writes, the repair engine, its link to this node (pulls, provider
	// lookups), and the [cluster] keys of the last ApplyCluster. repair
	// holds nil with cluster mode off and before Start.
	peer       *peer.Client
	replicas   *replicate.Replicator
	repair     atomic.Pointer[repair.Repairer]
	repairLink *repairlink.Link
	clusterCfg atomic.Pointer[cluster.Config]
}

// New builds the role without side effects: nothing is opened or bound.
func New(opt Options) *Role {
	r := &Role{opt: opt, metrics: roleMetrics{opt.Metrics}}
	r.Base = rolebase.New(roleName, opt.Config, &opt.Env, func(c Config) string { return c.Listen })
	cc := opt.ClusterConfig
	r.clusterCfg.Store(&cc)
	r.upgrade.ended = make(chan struct{})
	// The keys docs/storage.md §7 allows reload live (limits, timeouts, public_reads,
	// min_free_bytes, provider_ttl, index_urls, index_token); the rest are refused by name,
	// and index_urls the sink cannot take are refused too. A new provider_ttl applies to the
	// next announce and re-provide pass.
	r.OnReload(runtime.Reconfig[Config]{Validate: Config.Validate, RestartOnly: Config.restartOnly,
		Refuse: func(cur, n Config) error { return r.announce.checkRetarget(cur, n) }, Reconfigure: r.reconfigure})
	return r
}

// Start opens the engine, runs a first write probe and binds the listener.
func (r *Role) Start(ctx context.Context) error {
	engine, err := r.openEngine()
	if err != nil {
		return fmt.Errorf("storage: open engine: %w", err)
	}
	r.engine = engine
	cfg := r.Cfg.Load()
	r.work = newWorkQueue(r.opt.Metrics, cfg.QueueConfig, cfg.GetWorkers, cfg.PutWorkers)
	r.announce = newAnnouncer(r.opt.Sink, r.opt.Metrics, cfg.AnnounceQueue)
	if err := r.announce.retarget(*cfg); err != nil {
		_ = engine.Close()
		return fmt.Errorf("storage: %w", err)
	}
	if r.announce.enabled() {
		r.reprovide = newReprovider(engine, r.announce, r.Cfg, r.metrics, r.Log)
	}
	if r.opt.Cluster != nil {
		r.buildCluster()
	}
	r.registerGauges()
	r.probe(ctx)
	e := r.NewServer(httpx.ServerOptions{Metrics: r.opt.Metrics.Set(), Limits: cfg.Ingress.Limits(),
		Streaming: isStreamingRoute}).Echo()
	r.routes(e)
	if r.opt.Ops != nil {
		r.opt.Ops(e)
	}
	if err := r.Listen(); err != nil {
		_ = engine.Close()
		return err
	}
	return nil
}

func (r *Role) openEngine() (store.BlobStore, error) {
	cfg := r.Cfg.Load()
	if r.opt.Amnesia || cfg.Engine == "memory" {
		return memory.New(memory.Options{MaxBytes: int64(cfg.MemoryMaxBytes),
			OnCorrupt: r.onCorrupt, OnSidecarRebuilt: r.onSidecarRebuilt}), nil
	}
	return fs.Open(filepath.Join(r.opt.DataDir, storageapi.RoleName), fs.Options{
		MinFreeBytes:      int64(cfg.MinFreeBytes),
		SidecarCacheBytes: int64(cfg.SidecarCacheBytes),
		QuarantineKeep:    cfg.QuarantineKeep,
		OnCorrupt:         r.onCorrupt,
		OnSidecarRebuilt:  r.onSidecarRebuilt,
	})
}

// Run serves until ctx ends; a listener failure is returned (fatal).
func (r *Role) Run(ctx context.Context) error {
	r.Tasks.Go("probe", r.probeLoop)
	r.Tasks.Go("announce", r.announce.run)
	r.Tasks.Go("sidecar-upgrade", r.runSidecarUpgrade)
	if r.reprovide != nil {
		r.Tasks.Go("reprovide", r.reprovide.run)
	}
	if rp := r.repair.Load(); rp != nil {
		rp.Start(r.Tasks.Go)
	}
	if sw, ok := r.engine.(sweeper); ok {
		r.Tasks.Go("sweep", func(ctx context.Context) error {
			return every(ctx, sweepEvery, func(ctx context.Context) error { _, err := sw.Sweep(ctx); return err })
		})
	}
	if rc, ok := r.engine.(recounter); ok {
		r.Tasks.Go("recount", func(ctx context.Context) error { return rc.Recount(ctx) })
	}
	return r.Serve(ctx)
}

type sweeper interface {
	Sweep(ctx context.Context) (int, error)
}
type recounter interface {
	Recount(ctx context.Context) error
}

// every runs fn now and then every d until ctx ends; fn errors are logged by
// returning them to the task group only when ctx is still live.
func every(ctx context.Context, d time.Duration, fn func(context.Context) error) error {
	for {
		if err := fn(ctx); err != nil && ctx.Err() == nil {
			return err
		}
		if !runtime.Sleep(ctx, d) {
			return nil
		}
	}
}

// Stop stops accepting, lets streams finish until ctx's deadline, aborts the
// rest, stops the workers (repair included), releases the node-to-node
// clients and closes the engine.
func (r *Role) Stop(ctx context.Context) error {
	r.Drain()
	if n := r.Shutdown(ctx); n > 0 {
		r.Log.Warn().Int("connections", n).Msg("drain deadline passed: aborted open streams")
	}
	if r.announce.queue != nil {
		r.announce.queue.Close()
	}
	r.stopRepair()
	r.Tasks.Stop(ctx)
	r.closeRepair()
	r.closePeers()
	r.announce.flush(ctx)
	return r.engine.Close()
}

// Ready reports the storage readiness of docs/storage.md §6.
func (r *Role) Ready(ctx context.Context) runtime.Readiness {
	var rd runtime.Readiness
	if r.Draining() {
		rd.Missing = append(rd.Missing, roleName)
		return rd
	}
	if !r.probeOK() {
		rd.Missing = append(rd.Missing, roleName+":disk")
	}
	if r.lowSpace() {
		rd.Degraded = append(rd.Degraded, roleName+":disk")
	}
	return rd
}

func (r *Role) probeOK() bool {
	last := r.lastProbe.Load()
	return last != 0 && time.Since(time.Unix(0, last)) < probeFresh
}

// lowSpace reports free space under min_free_bytes (fs) or a full memory
// engine.
func (r *Role) lowSpace() bool {
	free, err := r.engine.Free()
	return err == nil && (free < r.minFree() || free <= 0)
}

func (r *Role) probeLoop(ctx context.Context) error {
	for runtime.Sleep(ctx, probeEvery) {
		r.probe(ctx)
	}
	return nil
}

func (r *Role) probe(ctx context.Context) {
	pctx, cancel := context.WithTimeout(ctx, probeDeadline)
	defer cancel()
	r.metrics.spawned("probe")
	if err := r.engine.Probe(pctx); err != nil {
		if ctx.Err() == nil {
			r.Log.Error().Err(err).Msg("write probe failed: writes refused until it succeeds")
		}
		r.lastProbe.Store(0)
		return
	}
	r.lastProbe.Store(time.Now().UnixNano())
}

// reconfigure applies a reloaded config (already stored) to the running
// role: the sink's targets, the free-space floor, the queue timeout, the
// ingress limits and the re-provide pace.
func (r *Role) reconfigure(_, n Config) error {
	if err := r.announce.retarget(n); err != nil {
		return err
	}
	if mf, ok := r.engine.(interface{ SetMinFreeBytes(int64) }); ok {
		mf.SetMinFreeBytes(int64(n.MinFreeBytes))
	}
	r.work.q.Configure(n.QueueConfig) // queue_capacity is restart-only: unchanged here
	r.Server().SetLimits(n.Ingress.Limits())
	if r.reprovide != nil {
		r.reprovide.reload()
	}
	return nil
}

// Details is the role's object in /api/v1/status. Its "announce" field is
// "on: local index", "on: index_urls (N)" or "off: <reason>"; in cluster
// mode "repair" holds the repair progress (docs/cluster.md §9);
// "sidecar_upgrade" the v1 → v2 sidecar upgrade's (docs/storage.md §5).
func (r *Role) Details() any {
	st := r.engine.Stats()
	free, _ := r.engine.Free()
	d := map[string]any{
		"engine": r.engineName(), "objects": st.Objects, "bytes": st.Bytes,
		"quarantined": st.Quarantined, "free_bytes": free, "probe_ok": r.probeOK(),
		"announce": r.announce.status(r.opt.AnnounceOff),
	}
	if rp := r.repairDetails(); rp != nil {
		d["repair"] = rp
	}
	d["sidecar_upgrade"] = r.upgrade.details()
	return d
}

func (r *Role) engineName() string {
	if r.opt.Amnesia || r.Cfg.Load().Engine == "memory" {
		return "memory"
	}
	return "fs"
}

func (r *Role) registerGauges() {
	stats := func(f func(store.Stats) int64) func() float64 {
		return func() float64 { return float64(f(r.engine.Stats())) }
	}
	r.metrics.gauge("storage_objects", stats(func(s store.Stats) int64 { return s.Objects }))
	r.metrics.gauge("storage_bytes", stats(func(s store.Stats) int64 { return s.Bytes }))
	r.metrics.gauge("storage_quarantined_objects", stats(func(s store.Stats) int64 { return s.Quarantined }))
	r.metrics.gauge("storage_free_bytes", func() float64 {
		free, _ := r.engine.Free()
		return float64(free)
	})
}

func (r *Role) onCorrupt(id store.ID, chunk int, kind string) {
	r.metrics.corruption(kind)
	r.Log.Error().Str("b3_prefix", id.Prefix()).Int("chunk", chunk).Str("kind", kind).Msg("corrupt object quarantined")
	r.announce.enqueue(announcing.Record{ID: id, TTL: 0})
	r.corruptRepair(id)
}

func (r *Role) onSidecarRebuilt(id store.ID) {
	r.metrics.corruption("sidecar")
	r.Log.Warn().Str("b3_prefix", id.Prefix()).Msg("sidecar rebuilt from data")
}

var errNotReady = errors.New("storage not ready")

// AdvertiseURL is the base URL storage announces to the index
// (storageapi.Local): advertise_url, else http://<bound listener> (valid
// after Start).
func (r *Role) AdvertiseURL() string {
	if u := r.Cfg.Load().AdvertiseURL; u != "" {
		return u
	}
	return "http://" + r.Addr()
}
