package registry

import (
	"context"
	"crypto/ed25519"
	"fmt"
	goruntime "runtime"
	"slices"
	"sync/atomic"
	"time"

	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/httpx/rolebase"
	"github.com/ronhq/ron/roles/registry/committer"
	"github.com/ronhq/ron/roles/registry/httpapi"
	"github.com/ronhq/ron/roles/registry/registryapi"
	"github.com/ronhq/ron/roles/registry/regstore"
	"github.com/ronhq/ron/roles/registry/tiles"
	"github.com/ronhq/ron/runtime"
	"github.com/ronhq/ron/runtime/consensus"
	"github.com/ronhq/ron/runtime/module"
)

// writerStartWait bounds how long Start waits for the committer to come up
// before it returns (writes answer 503 starting until then).
const writerStartWait = 5 * time.Second

// Options are what the composition root passes to New.
type Options struct {
	Config Config
	// Env is the node's shared environment (runtime/module): stores in
	// <DataDir>/registry, keys in <DataDir>/keys; amnesia keeps everything
	// in memory and prunes nothing.
	module.Env
}

// Role is the registry role (docs/registry.md). Build it with New; the
// runtime manager drives Start, Run and Stop. It implements runtime.Role,
// Drainer, Readier, Applier, ApplyChecker, Detailer, TaskGrouper and
// Addresser.
type Role struct {
	*rolebase.Base[Config]
	opt Options
	met roleMetrics
	now func() time.Time
	cpu chan struct{} // CPU semaphore for signature checks

	st   *regstore.Stores
	com  *committer.Committer
	tree *tiles.Tree
	api  *httpapi.API
	ckpt *checkpointer
	ver  *verifier
	ret  *retention
	dev  *regstore.DevSigner

	replicaFields // replicated mode (docs/cluster.md §14)

	running     atomic.Bool // Start finished: every field above is set
	open        atomic.Bool
	stopped     atomic.Bool
	lastFailure atomic.Pointer[failureRecord]
	lastErr     atomic.Pointer[string]
}

// The runtime interfaces the role implements.
var (
	_ runtime.Role         = (*Role)(nil)
	_ runtime.Drainer      = (*Role)(nil)
	_ runtime.Readier      = (*Role)(nil)
	_ runtime.Applier      = (*Role)(nil)
	_ runtime.ApplyChecker = (*Role)(nil)
	_ runtime.Detailer     = (*Role)(nil)
	_ runtime.TaskGrouper  = (*Role)(nil)
	_ runtime.Addresser    = (*Role)(nil)
)

// failureRecord is the latest chain mismatch with the time it was found.
type failureRecord struct {
	m  *mismatch
	at time.Time
}

// New builds the role without side effects: nothing is opened or bound.
func New(opt Options) *Role {
	if opt.Metrics == nil {
		opt.Metrics = runtime.NewMetrics(nil)
	}
	r := &Role{opt: opt, met: roleMetrics{opt.Metrics}, now: time.Now, cpu: make(chan struct{}, goruntime.GOMAXPROCS(0))}
	r.Base = rolebase.New(roleName, opt.Config, &opt.Env, func(c Config) string { return c.Listen })
	if r.replicated() {
		opt.Plane.Register(consensus.KindRegistry, registryMachine{r})
	}
	// The live keys of docs/registry.md §7 reload; trust_roots and trust_roots_b3 are forbidden
	// (forbidden_config), listen, allow_dev_signer, log_origin, the three queue capacities and
	// segment_records need a restart; a rejection counts in ron_registry_reload_fail_total{reason}
	// and names the keys. reconfigure runs before Start too: it counts the accepted reload.
	r.OnReload(runtime.Reconfig[Config]{Validate: r.validate, Refuse: r.checkKeys,
		Running: func() bool { return true }, Reconfigure: r.reconfigure})
	return r
}

// headVersion is HEAD's version, -1 when there is none (a replicated
// registry before its init entry).
func (r *Role) headVersion() int64 {
	if h := r.com.Head(); h != nil {
		return int64(h.Version)
	}
	return -1
}

// config returns the current config.
func (r *Role) config() Config { return *r.Cfg.Load() }

// API returns the role's HTTP API after Start (nil before);
// httpapi.NewLocalClient(r.API()) is how in-process callers talk to it.
func (r *Role) API() *httpapi.API { return r.api }

// DevSigner returns the dev signer's id and private key when the registry
// runs on the dev signer (no trust roots; in amnesia the key exists only
// in memory). ok is false otherwise or before Start.
func (r *Role) DevSigner() (id string, key ed25519.PrivateKey, ok bool) {
	if r.dev == nil {
		return "", nil, false
	}
	return r.dev.ID, r.dev.Key, true
}

// AdvertiseURL is advertise_url, else "http://" + the bound listener
// address (valid after Start).
func (r *Role) AdvertiseURL() string {
	if u := r.Cfg.Load().AdvertiseURL; u != "" {
		return u
	}
	return "http://" + r.Addr()
}

// Start runs docs/registry.md §6: open the stores and the log key and
// recover the log (bootstrapping genesis when no log exists); verify the
// tail; bring the tiles up to date and sign a checkpoint covering HEAD;
// bind the listener (reads are served from here on); start the committer,
// checkpointer, deep verifier and retention; then writes turn ready. A
// tail that fails verification still serves reads but leaves writes
// unready (verify_failed).
func (r *Role) Start(ctx context.Context) error {
	cfg := *r.Cfg.Load()
	if err := cfg.Validate(); err != nil {
		return err
	}
	if err := r.openAll(ctx, cfg); err != nil {
		return err
	}
	ok := r.verifyTail()
	r.catchUp(ctx, ok)
	if err := r.serve(cfg); err != nil {
		r.open.Store(false)
		_ = r.st.Close()
		return err
	}
	r.startWorkers()
	r.awaitWriter(ctx)
	r.running.Store(true)
	r.Log.Info().Str("listen", r.Addr()).Int64("head", r.headVersion()).Str("origin", r.tree.Key().Origin()).
		Strs("write_unready", r.com.WriteUnready()).Msg("registry listening")
	return nil
}

// serve builds the API and the listener with its routes and binds it.
func (r *Role) serve(cfg Config) error {
	opt := httpapi.Options{Committer: r.com, Tree: r.tree, Log: r.st.Log, Keys: r.opt.Keys,
		Settings: r.settings, Status: r.status, MinIndex: r.st.Log.MinIndex, Now: r.now,
		Metrics: r.opt.Metrics, Logger: r.opt.Log}
	if r.replicated() {
		opt.Forward = r.forward
	}
	r.api = httpapi.New(opt)
	e := r.NewServer(httpx.ServerOptions{Metrics: r.opt.Metrics.Set(), Limits: cfg.Ingress.Limits(),
		Streaming: httpapi.Streaming, LongLived: httpapi.Streaming}).Echo()
	r.api.Mount(e)
	if r.opt.Ops != nil {
		r.opt.Ops(e)
	}
	return r.Listen()
}

// settings are the API's live settings from the current config.
func (r *Role) settings() httpapi.Settings {
	c := r.Cfg.Load()
	l := c.limits()
	return httpapi.Settings{PublicReads: c.PublicReads, ReadOnly: c.ReadOnly, Limits: l.Limits,
		StreamHeartbeat: c.StreamHeartbeat, StreamMaxClients: c.StreamMaxClients, StreamMaxLag: c.StreamMaxLag,
		CommitTimeout: c.CommitTimeout}
}

// startWorkers starts the supervised workers (docs/registry.md §4–§6).
func (r *Role) startWorkers() {
	r.Tasks.Go("registry-committer", r.com.Run)
	r.Tasks.Go("registry-checkpointer", r.ckpt.run)
	r.Tasks.Go("registry-verifier", r.ver.run)
	if !r.opt.Amnesia { // amnesia prunes nothing
		r.Tasks.Go("registry-retention", r.ret.run)
	}
	if r.replicated() {
		r.Tasks.Go("registry-init", r.initLog)
	}
}

// awaitWriter waits (bounded) until the committer runs, so writes are
// ready when Start returns unless something else holds them back.
func (r *Role) awaitWriter(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, writerStartWait)
	defer cancel()
	for slices.Contains(r.com.WriteUnready(), committer.ReasonStarting) {
		if !runtime.Sleep(ctx, time.Millisecond) {
			return
		}
	}
}

// onCommit is the committer's OnCommit (after durability, in commit
// order, never blocking): wake the checkpointer, feed the SSE hub and
// publish RegistryUpdated on the bus.
func (r *Role) onCommit(c registryapi.Committed) {
	r.ckpt.notify()
	if r.api != nil {
		r.api.Hub().Notify(c)
	}
	if r.opt.Bus != nil {
		r.opt.Bus.Publish(runtime.RegistryUpdated{Version: c.Version, B3: c.PayloadB3})
	}
}

// Run serves until ctx ends; a listener failure is returned (fatal).
func (r *Role) Run(ctx context.Context) error {
	return r.Serve(ctx)
}

// Drain stops taking writes at once (503 draining) and turns readiness
// false (shutdown step 2).
func (r *Role) Drain() {
	if r.com != nil {
		r.com.Drain()
	}
	r.Base.Drain()
}

// Stop runs the docs/registry.md §6 shutdown: writes get 503 draining, streams end, the
// listener drains until ctx's deadline while the committer finishes the
// messages already taken, the workers stop, a final checkpoint is signed
// if time allows, then the log and both databases are closed.
func (r *Role) Stop(ctx context.Context) error {
	if r.stopped.Swap(true) {
		return nil
	}
	r.Drain()
	if r.api != nil {
		r.api.Hub().Close()
	}
	if n := r.Shutdown(ctx); n > 0 {
		r.Log.Warn().Int("connections", n).Msg("drain deadline passed: aborted open requests")
	}
	if n := r.Tasks.Stop(ctx); n > 0 {
		r.Log.Error().Int("workers", n).Msg("registry workers still running at the drain deadline; stores left open")
		return fmt.Errorf("registry: %d workers did not stop", n)
	}
	if r.st == nil {
		return nil
	}
	if r.ckpt != nil {
		if err := r.ckpt.final(ctx); err != nil {
			r.Log.Warn().Err(err).Msg("final checkpoint not signed")
		}
	}
	r.open.Store(false)
	return r.st.Close()
}

// Ready reports read readiness (/readyz): stores open and not draining.
// Write readiness never fails /readyz; it shows in /registry/status,
// ron_registry_write_ready and the status details' last_error.
func (r *Role) Ready(context.Context) runtime.Readiness {
	var rd runtime.Readiness
	switch {
	case r.Draining():
		rd.Missing = append(rd.Missing, roleName)
	case !r.open.Load():
		rd.Missing = append(rd.Missing, roleName+":store")
	}
	return rd
}

// readReady is Ready without a context.
func (r *Role) readReady() bool { return !r.Draining() && r.open.Load() }

// LocalClient is the in-process client of the running registry
// (registryapi.Local); call it after Start.
func (r *Role) LocalClient() registryapi.Client { return httpapi.NewLocalClient(r.API()) }
