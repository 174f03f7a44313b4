// Package gateway is the gateway role (docs/gateway.md): ron's public front
// door. Every request passes the admission pipeline of docs/gateway.md §3 (pipeline.go)
// before any upstream work; admitted requests are forwarded to storage,
// index, edge or registry, in-process when the role is co-located, over
// HTTP to the configured URL otherwise (upstreams.go) and, in a cluster,
// to alive members running the role (members.go), or answered from index
// providers (/o) and site manifests (/n).
package gateway

import (
	"context"
	"sync/atomic"

	"github.com/ronhq/ron/httpx/rolebase"
	"github.com/ronhq/ron/roles/gateway/admission"
	"github.com/ronhq/ron/roles/gateway/drr"
	"github.com/ronhq/ron/roles/gateway/hygiene"
	"github.com/ronhq/ron/roles/gateway/provider"
	"github.com/ronhq/ron/roles/gateway/sites"
	"github.com/ronhq/ron/roles/gateway/tenant"
	"github.com/ronhq/ron/roles/gateway/tenants"
	"github.com/ronhq/ron/runtime"
	"github.com/ronhq/ron/runtime/module"
)

// Options are what the composition root passes to New.
type Options struct {
	Config Config
	// Env is the node's shared environment (runtime/module). Providers in
	// Node.Zone are tried first. In cluster mode (Cluster set) an upstream
	// role that is neither co-located nor configured by URL is served by
	// the alive members running it, Node.Zone first, one link and breaker
	// per member, following membership changes.
	module.Env
	Local Locals // the roles co-located in this process
}

// Role is the gateway role. Build it with New; the runtime manager drives
// Start, Run and Stop. It implements runtime.Role, Drainer, Readier,
// Applier, ApplyChecker, Detailer, TaskGrouper and Addresser.
type Role struct {
	*rolebase.Base[Config]
	opt Options
	met *gatewayMetrics
	rej *admission.Rejections

	ups      *upstreams
	sched    *drr.Scheduler
	states   *tenant.States
	shed     *admission.Shedder
	streams  *admission.StreamGate
	fetch    *provider.Fetcher
	sites    *sites.Sites
	follower *tenants.Follower

	table  atomic.Pointer[tenants.Table]
	labels atomic.Pointer[admission.Labeler]
	policy atomic.Pointer[policy] // derived settings of the config in force

	drainCtx    context.Context // canceled at Drain: closes event streams, stops dispatch
	drainCancel context.CancelFunc
}

// New builds the role without side effects: nothing is bound or dialled.
func New(opt Options) *Role {
	if opt.Metrics == nil {
		opt.Metrics = runtime.NewMetrics(nil)
	}
	r := &Role{opt: opt}
	r.Base = rolebase.New(roleName, opt.Config, &opt.Env, func(c Config) string { return c.Listen })
	r.drainCtx, r.drainCancel = context.WithCancel(context.Background())
	// Every key but listen and the upstream URLs reloads live (docs/gateway.md §7); the role
	// runs once Start has built its server.
	r.OnReload(runtime.Reconfig[Config]{Validate: r.validate, RestartOnly: Config.restartOnly,
		Running: func() bool { return r.Server() != nil }, Reconfigure: r.reconfigure})
	return r
}

// Start validates the config, builds the upstream links and the admission
// state, and binds the listener.
func (r *Role) Start(ctx context.Context) error {
	cfg := *r.Cfg.Load()
	if err := r.validate(cfg); err != nil {
		return err
	}
	if err := r.build(cfg); err != nil {
		return err
	}
	if err := r.Listen(); err != nil {
		r.ups.close()
		return err
	}
	r.Log.Info().Str("listen", r.Addr()).Strs("upstreams", r.ups.describe()).Msg("gateway listening")
	return nil
}

// validate checks cfg on its own and against the co-located roles (in a
// cluster, members may serve every upstream).
func (r *Role) validate(cfg Config) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	if r.opt.Cluster != nil {
		return cfg.CheckClusterUpstreams(r.opt.Local.colocated)
	}
	return cfg.CheckUpstreams(r.opt.Local.colocated)
}

// Run serves until ctx ends: the scheduler, the tenant follower (when
// there is a registry) and, in a cluster, the member pools' owners run as
// named tasks.
func (r *Role) Run(ctx context.Context) error {
	r.Tasks.Go("scheduler", r.runScheduler)
	r.ups.start(r.Tasks)
	if r.follower != nil {
		r.Tasks.Go("registry-watch", r.followRegistry)
	}
	return r.Serve(ctx)
}

// followRegistry runs the tenant follower; when registry members serve it,
// only once a registry member is alive (a cluster without a registry
// keeps the config table, silently).
func (r *Role) followRegistry(ctx context.Context) error {
	if r.ups.registryPool != nil && !r.ups.waitRegistry(ctx) {
		return nil
	}
	return r.follower.Run(ctx)
}

// Drain (shutdown step 2): new requests and every queued one answer 503
// draining, open event streams close, readiness turns false.
func (r *Role) Drain() {
	r.Base.Drain()
	r.drainCancel()
}

// Stop lets in-flight forwards drain until ctx's deadline, cancels the rest
// (counted in ron_tasks_aborted_total{kind="forward"}), then stops the
// scheduler (queued requests get 503 draining) and the tasks.
func (r *Role) Stop(ctx context.Context) error {
	r.Drain()
	if n := r.Shutdown(ctx); n > 0 {
		r.met.aborted.Add(n)
		r.Log.Warn().Int("connections", n).Msg("drain deadline passed: aborted open forwards")
	}
	r.Tasks.Stop(ctx)
	if r.ups != nil {
		r.ups.close()
	}
	return nil
}

// Ready: ready once the listener is bound and the scheduler runs; degraded
// while shedding (docs/gateway.md §8).
func (r *Role) Ready(context.Context) runtime.Readiness {
	var rd runtime.Readiness
	switch {
	case r.Draining() || r.sched == nil:
		rd.Missing = []string{roleName}
		return rd
	case !r.schedRunning():
		rd.Missing = []string{roleName + ":scheduler"}
		return rd
	}
	if w, rs := r.shed.Writes(), r.shed.Reads(); w || rs {
		rd.Degraded = []string{roleName}
		rd.Shedding = &runtime.Shedding{Writes: w, Reads: rs}
	}
	return rd
}

// schedRunning reports whether the scheduler serves: from Start (requests
// that arrive before its goroutine runs simply wait for it) until Run has
// returned.
func (r *Role) schedRunning() bool {
	select {
	case <-r.sched.Done():
		return false
	default:
		return true
	}
}

// runScheduler is the scheduler task: the one goroutine owning the queues.
// It stops at Drain, answering every queued request 503 draining at once
// (docs/gateway.md §8); requests already holding a slot finish within the drain deadline.
func (r *Role) runScheduler(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(r.drainCtx, cancel)
	defer stop()
	return r.sched.Run(ctx)
}

// Details is the role's object in /api/v1/status: in-flight, waiting and
// breaker states (docs/gateway.md §8).
func (r *Role) Details() any {
	d := map[string]any{"inflight": 0, "waiting": 0, "breakers": map[string]string{}}
	if r.sched != nil {
		d["inflight"], d["waiting"] = r.sched.InFlight(), r.sched.Waiting()
	}
	if r.ups != nil {
		d["breakers"] = r.ups.breakerStates()
		d["upstreams"] = r.ups.describe()
	}
	if t := r.table.Load(); t != nil {
		d["tenants_version"] = t.Version()
	}
	if r.shed != nil {
		d["shedding"] = runtime.Shedding{Writes: r.shed.Writes(), Reads: r.shed.Reads()}
	}
	return d
}

// corsFor returns the CORS policy in force.
func (r *Role) corsFor() hygiene.CORS { return r.policy.Load().cors }
