// Package rolebase is the one HTTP shell every role embeds
// (docs/architecture.md §3): the role's name, its config snapshot, its
// logger and task group, its listener (built, bound, served, drained, shut
// down), its draining flag, and its typed reload, whose restart-only keys
// and hooks a role declares once. A role supplies its routes, workers,
// readiness and reload hooks, and calls the Base from its Start, Run, Drain
// and Stop.
package rolebase

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"

	"github.com/rs/zerolog"

	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/runtime"
	"github.com/ronhq/ron/runtime/module"
)

// Base is a role's shell over its config section C. Build it with New,
// embed it, and declare the reload with OnReload. Its methods implement the
// runtime.Role name and the Addresser, TaskGrouper, Applier and
// ApplyChecker interfaces for the role.
type Base[C any] struct {
	Log   zerolog.Logger       // the role's logger (role=<name>)
	Cfg   *runtime.Snapshot[C] // the config in force
	Tasks *runtime.TaskGroup   // the role's supervised workers
	// ApplyMu serialises Apply; a role may hold it for its own changes
	// that must not interleave with a reload.
	ApplyMu sync.Mutex

	name     string
	listen   func(C) string
	server   atomic.Pointer[httpx.Server]
	serving  atomic.Bool // Listen succeeded
	draining atomic.Bool
	reload   runtime.Reconfig[C]
}

// New returns the shell of the role name over cfg: a logger with
// role=name, the config snapshot, and the task group (reporting crashes on
// env's bus). listen returns a config's listen address. It does no I/O.
func New[C any](name string, cfg C, env *module.Env, listen func(C) string) *Base[C] {
	b := &Base[C]{name: name, listen: listen, Log: env.Log.With().Str("role", name).Logger()}
	b.Cfg = runtime.NewSnapshot(&cfg)
	b.Tasks = runtime.NewTaskGroup(name, b.Log, env.Metrics, runtime.WithBus(env.Bus))
	b.reload = runtime.Reconfig[C]{Role: name, Config: b.Cfg, Lock: &b.ApplyMu}
	return b
}

// Name implements runtime.Role.
func (b *Base[C]) Name() string { return b.name }

// TaskGroup implements runtime.TaskGrouper: the Manager reads its crash
// budget and stops it after the role's Stop.
func (b *Base[C]) TaskGroup() *runtime.TaskGroup { return b.Tasks }

// Config is the config in force.
func (b *Base[C]) Config() C { return *b.Cfg.Load() }

// NewServer builds the role's listener, not yet bound, from opt, which
// gets the role's name, its configured listen address and its logger; the
// role then mounts its routes on its echo router.
func (b *Base[C]) NewServer(opt httpx.ServerOptions) *httpx.Server {
	opt.Role, opt.Addr, opt.Log = b.name, b.listen(b.Config()), b.Log
	s := httpx.NewServer(opt)
	b.server.Store(s)
	return s
}

// Server is the listener NewServer built; nil before.
func (b *Base[C]) Server() *httpx.Server { return b.server.Load() }

// Listen binds the listener. Its error names the role and the address.
func (b *Base[C]) Listen() error {
	s := b.server.Load()
	if err := s.Listen(); err != nil {
		return fmt.Errorf("%s: listen %s: %w", b.name, b.listen(b.Config()), err)
	}
	b.serving.Store(true)
	return nil
}

// Serve serves until ctx ends; a listener failure is returned (fatal for
// the role).
func (b *Base[C]) Serve(ctx context.Context) error {
	if err := b.server.Load().Run(ctx); err != nil {
		return fmt.Errorf("%s listener: %w", b.name, err)
	}
	return nil
}

// Serving reports whether the listener is bound (Listen succeeded).
func (b *Base[C]) Serving() bool { return b.serving.Load() }

// Addr implements runtime.Addresser: the bound listener address once
// bound, the configured one before.
func (b *Base[C]) Addr() string {
	if s := b.server.Load(); s != nil && b.serving.Load() {
		return s.Addr()
	}
	return b.listen(b.Config())
}

// Handler is the role's HTTP handler (its routes behind the shared
// middleware chain), for in-process callers; nil until the listener is
// bound.
func (b *Base[C]) Handler() http.Handler {
	if !b.serving.Load() {
		return nil
	}
	return b.server.Load().Echo()
}

// Drain (shutdown step 2) marks the role draining and makes its listener
// answer new requests 503 draining. It never blocks.
func (b *Base[C]) Drain() {
	b.draining.Store(true)
	if s := b.server.Load(); s != nil {
		s.Drain()
	}
}

// Draining reports whether Drain ran.
func (b *Base[C]) Draining() bool { return b.draining.Load() }

// SetDraining sets the role's draining flag alone, leaving the listener as
// it is: tests use it to see the role's own draining answers (503
// draining) and to end them again.
func (b *Base[C]) SetDraining(on bool) { b.draining.Store(on) }

// Shutdown stops the listener: in-flight requests drain until ctx's
// deadline, then open connections are closed; it returns how many were.
func (b *Base[C]) Shutdown(ctx context.Context) (aborted int) {
	if s := b.server.Load(); s != nil {
		return s.Shutdown(ctx)
	}
	return 0
}

// Unready returns the readiness of a role that is not serving or is
// draining (the role itself missing), and whether that is the case; a role's
// Ready returns it before its own checks.
func (b *Base[C]) Unready() (runtime.Readiness, bool) {
	if !b.serving.Load() || b.draining.Load() {
		return runtime.Readiness{Missing: []string{b.name}}, true
	}
	return runtime.Readiness{}, false
}

// OnReload declares the role's reload (runtime.Reconfig): how a candidate
// validates, which keys need a restart, what else is refused, and how the
// running role takes it. The Base fills in the role's name, snapshot and
// lock; Running defaults to Serving.
func (b *Base[C]) OnReload(rc runtime.Reconfig[C]) {
	rc.Role, rc.Config, rc.Lock = b.name, b.Cfg, &b.ApplyMu
	if rc.Running == nil {
		rc.Running = b.serving.Load
	}
	b.reload = rc
}

// CheckApply implements runtime.ApplyChecker.
func (b *Base[C]) CheckApply(cfg any) error {
	_, err := b.reload.Check(cfg)
	return err
}

// Apply implements runtime.Applier: before the role serves it only stores
// cfg, which the role reads when it starts.
func (b *Base[C]) Apply(cfg any) error { return b.reload.Apply(cfg) }
