package runtime

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"
)

// DefaultDrainDeadline is used when ManagerOptions.DrainDeadline is zero.
const DefaultDrainDeadline = 3 * time.Second

// stopGrace is how long past the drain deadline the Manager still waits
// for one role's Stop or Run to return before abandoning it (counted in
// ron_tasks_aborted_total{kind="role_stop"|"role_run"}). Roles that
// respect ctx return well within it.
const stopGrace = 250 * time.Millisecond

// ManagerOptions configures a Manager.
type ManagerOptions struct {
	Log           zerolog.Logger
	Metrics       *Metrics      // nil: a private set
	Bus           *Bus          // nil: a private bus
	DrainDeadline time.Duration // 0: DefaultDrainDeadline
}

// Manager owns the static role table: it starts roles in the order they
// were added, runs them, and drives the shutdown sequence of docs/architecture.md
// §3. Roles that implement TaskGrouper report degradation and restarts
// through their group (see TaskGrouper).
type Manager struct {
	opt ManagerOptions
	log zerolog.Logger

	draining atomic.Bool
	request  chan struct{} // closed by RequestShutdown
	reqOnce  sync.Once
	done     chan struct{} // closed when Run has stopped every role

	mu      sync.Mutex
	entries []*entry
	started bool
	ran     bool
	reason  string
}

// entry is one role or node part in the table. state, lastErr and failed
// are guarded by Manager.mu; runCancel and runDone belong to Run.
type entry struct {
	role   Role
	listen string
	// part marks a part of the node itself (AddPart); stopBound is then
	// the time its Stop is given, instead of the drain deadline.
	part      bool
	stopBound time.Duration

	state   State
	lastErr string
	failed  bool

	runCancel context.CancelFunc
	runDone   chan struct{}
}

// NewManager returns a Manager with an empty role table.
func NewManager(opt ManagerOptions) *Manager {
	opt.Metrics = opt.Metrics.orNew()
	if opt.Bus == nil {
		opt.Bus = NewBus(opt.Metrics)
	}
	if opt.DrainDeadline <= 0 {
		opt.DrainDeadline = DefaultDrainDeadline
	}
	return &Manager{
		opt:     opt,
		log:     opt.Log,
		request: make(chan struct{}),
		done:    make(chan struct{}),
	}
}

// Add appends r, served on listen (shown in status), to the role table.
// Roles and parts start in the order added and stop in reverse. Add panics
// after Start or on a duplicate name: both are wiring bugs.
func (m *Manager) Add(r Role, listen string) { m.add(&entry{role: r, listen: listen}) }

// AddPart appends r, a part of the node itself (its admin plane, cluster
// membership, systemd notifications, readiness gauges), to the table. A
// part starts and stops in its place among the roles, but it is not a role:
// status, readiness, Apply, Drain and the role gauges leave it out; its Start and
// Run errors are returned as they are (not "role <name>: …"); and its Stop
// runs under its own bound, stop, since it comes after the roles have used
// the drain deadline. AddPart panics like Add.
func (m *Manager) AddPart(r Role, stop time.Duration) {
	m.add(&entry{role: r, part: true, stopBound: stop})
}

func (m *Manager) add(n *entry) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.started {
		panic("runtime: Manager.Add after Start")
	}
	for _, e := range m.entries {
		if e.role.Name() == n.role.Name() {
			panic(fmt.Sprintf("runtime: role %q added twice", n.role.Name()))
		}
	}
	m.entries = append(m.entries, n)
}

// Start starts every role in table order. If one fails, the roles already
// started are stopped in reverse (under the drain deadline) and the error,
// naming the failed role, is returned; the failed role's Start must
// release whatever it acquired. Start may be called once.
func (m *Manager) Start(ctx context.Context) error {
	m.mu.Lock()
	if m.started {
		m.mu.Unlock()
		return errors.New("runtime: Manager.Start called twice")
	}
	m.started = true
	entries := slices.Clone(m.entries)
	m.mu.Unlock()
	for i, e := range entries {
		if err := m.startRole(ctx, e); err != nil {
			m.rollback(entries[:i])
			return err
		}
	}
	return nil
}

func (m *Manager) startRole(ctx context.Context, e *entry) error {
	name := e.role.Name()
	m.setState(e, StateStarting, nil)
	if e.part {
		m.log.Debug().Str("part", name).Msg("starting node part")
	} else {
		m.log.Info().Str("role", name).Str("listen", e.listen).Msg("starting role")
	}
	if err := e.role.Start(ctx); err != nil {
		if !e.part {
			err = fmt.Errorf("role %s: start: %w", name, err)
		}
		m.setState(e, StateFailed, err)
		return err
	}
	m.setState(e, StateRunning, nil)
	return nil
}

// rollback stops already-started roles after a Start failure.
func (m *Manager) rollback(started []*entry) {
	ctx, cancel := context.WithTimeout(context.Background(), m.opt.DrainDeadline)
	defer cancel()
	m.stopRoles(ctx, started)
}

// Run runs every started role's Run in its own goroutine and blocks until
// ctx ends, RequestShutdown is called, or a role's Run fails. It then runs
// the shutdown sequence (Draining, Shutdown event, Drain, Stop in reverse
// under one drain deadline, aborts counted), closes ShutdownDone and
// returns: nil, or the failing role's error (which names the role). The
// caller then stops the admin listener. Run may be called once.
func (m *Manager) Run(ctx context.Context) error {
	entries, err := m.beginRun()
	if err != nil {
		return err
	}
	failed := make(chan error, len(entries)) // one slot per role: senders never block
	for _, e := range entries {
		m.runRole(ctx, e, failed)
	}
	var cause error
	reason := ""
	select {
	case <-ctx.Done():
		reason = "context ended"
	case <-m.request:
		reason = m.shutdownReason()
	case cause = <-failed:
		reason = cause.Error()
	}
	m.shutdown(entries, reason)
	close(m.done)
	return cause
}

// beginRun marks Run as called and returns the started roles.
func (m *Manager) beginRun() ([]*entry, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.ran {
		return nil, errors.New("runtime: Manager.Run called twice")
	}
	m.ran = true
	var out []*entry
	for _, e := range m.entries {
		if e.state == StateRunning {
			out = append(out, e)
		}
	}
	return out, nil
}

// runRole starts e's Run. Its ctx keeps ctx's values but is cancelled only
// by the Manager, right before the role's Stop, so roles stop in order.
func (m *Manager) runRole(ctx context.Context, e *entry, failed chan<- error) {
	rctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	e.runCancel = cancel
	e.runDone = make(chan struct{})
	// Goroutine "run:<role>": owned by Run, awaited in stopRole.
	go func() {
		defer close(e.runDone)
		err := e.role.Run(rctx)
		if err == nil {
			return
		}
		if rctx.Err() != nil {
			m.log.Debug().Str("role", e.role.Name()).Err(err).Msg("run returned after cancel")
			return
		}
		if !e.part {
			err = fmt.Errorf("role %s: run: %w", e.role.Name(), err)
		}
		m.log.Error().Str("role", e.role.Name()).Err(err).Msg("role failed")
		m.setState(e, StateFailed, err)
		failed <- err
	}()
}

// shutdown runs steps 1–5 of the shutdown sequence.
func (m *Manager) shutdown(entries []*entry, reason string) {
	m.draining.Store(true)
	m.log.Info().Str("reason", reason).Dur("drain_deadline", m.opt.DrainDeadline).Msg("shutting down")
	m.opt.Bus.Publish(Shutdown{})
	ctx, cancel := context.WithTimeout(context.Background(), m.opt.DrainDeadline)
	defer cancel()
	for _, e := range slices.Backward(entries) {
		if d, ok := e.role.(Drainer); ok && !e.part {
			d.Drain()
		}
	}
	m.stopRoles(ctx, entries)
	m.log.Info().Msg("roles stopped")
}

// stopRoles stops entries in reverse order, all under ctx.
func (m *Manager) stopRoles(ctx context.Context, entries []*entry) {
	for _, e := range slices.Backward(entries) {
		m.stopRole(ctx, e)
	}
}

// stopRole cancels e's Run, calls its Stop under ctx and waits for both
// until stopGrace after ctx's deadline (or after now, when the deadline
// has passed: a role stopped late still gets the grace to notice its
// expired ctx); then stops its task group (a no-op if Stop did). The whole
// shutdown is thus bounded by the drain deadline + one grace per role.
func (m *Manager) stopRole(ctx context.Context, e *entry) {
	if e.part {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(context.WithoutCancel(ctx), e.stopBound)
		defer cancel()
	}
	name := e.role.Name()
	hard, cancel := context.WithTimeout(context.Background(), max(time.Until(deadlineOf(ctx)), 0)+stopGrace)
	defer cancel()
	m.setState(e, StateStopping, nil)
	if e.runCancel != nil {
		e.runCancel()
	}
	stopped := make(chan error, 1) // buffered: an abandoned Stop never blocks
	// Goroutine "stop:<role>": owned by stopRole; abandoned (and counted)
	// only if Stop ignores ctx past the grace period.
	go func() { stopped <- e.role.Stop(ctx) }()
	var err error
	select {
	case err = <-stopped:
	case <-hard.Done():
		err = m.abandon(name, "role_stop", "Stop did not return by the drain deadline")
	}
	if e.runDone != nil {
		select {
		case <-e.runDone:
		case <-hard.Done():
			err = errors.Join(err, m.abandon(name, "role_run", "Run did not return by the drain deadline"))
		}
	}
	if g := taskGroupOf(e.role); g != nil {
		if n := g.Stop(ctx); n > 0 {
			m.log.Warn().Str("role", name).Int("aborted", n).Msg("workers aborted at drain deadline")
		}
	}
	m.finishStop(e, err)
}

// abandon counts a role goroutine left running past the deadline.
func (m *Manager) abandon(role, kind, msg string) error {
	m.opt.Metrics.Counter("tasks_aborted_total", "role", role, "kind", kind).Inc()
	m.log.Error().Str("role", role).Str("kind", kind).Msg(msg)
	return errors.New(msg)
}

// finishStop records the final state: Failed if the role failed or Stop
// returned an error, Terminated otherwise.
func (m *Manager) finishStop(e *entry, err error) {
	if err != nil {
		err = fmt.Errorf("role %s: stop: %w", e.role.Name(), err)
		m.log.Error().Str("role", e.role.Name()).Err(err).Msg("stop failed")
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if err != nil {
		e.failed, e.lastErr = true, err.Error()
	}
	e.state = StateTerminated
	if e.failed {
		e.state = StateFailed
	}
}

// setState sets e's state; a non-nil err marks it failed and is kept as
// its last error.
func (m *Manager) setState(e *entry, s State, err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e.state = s
	if err != nil {
		e.failed, e.lastErr = true, err.Error()
	}
}

// RequestShutdown starts the shutdown sequence (POST /api/v1/shutdown, a
// signal). Draining becomes true at once. Later calls are no-ops.
func (m *Manager) RequestShutdown(reason string) {
	m.reqOnce.Do(func() {
		m.mu.Lock()
		m.reason = reason
		m.mu.Unlock()
		m.draining.Store(true)
		close(m.request)
	})
}

func (m *Manager) shutdownReason() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.reason
}

// Draining reports whether the shutdown sequence has begun; /readyz
// answers 503 from then on.
func (m *Manager) Draining() bool { return m.draining.Load() }

// ShutdownDone is closed when Run has stopped every role (step 5); the
// admin listener is stopped after it.
func (m *Manager) ShutdownDone() <-chan struct{} { return m.done }

// Apply hands cfg to every role implementing Applier, in table order, and
// returns the joined errors, each naming its role.
func (m *Manager) Apply(cfg any) error {
	var errs []error
	for _, e := range m.snapshot() {
		if a, ok := e.role.(Applier); ok {
			if err := a.Apply(cfg); err != nil {
				errs = append(errs, fmt.Errorf("role %s: apply: %w", e.role.Name(), err))
			}
		}
	}
	return errors.Join(errs...)
}

// deadlineOf returns ctx's deadline, or now when it has none.
func deadlineOf(ctx context.Context) time.Time {
	if d, ok := ctx.Deadline(); ok {
		return d
	}
	return time.Now()
}

// taskGroupOf returns r's task group, if it exposes one.
func taskGroupOf(r Role) *TaskGroup {
	if tg, ok := r.(TaskGrouper); ok {
		return tg.TaskGroup()
	}
	return nil
}
