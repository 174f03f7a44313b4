package runtime

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"
)

// Crash budget of docs/architecture.md §3: more than 5 restarts in 60 s marks a
// role degraded.
const (
	crashLimit  = 5
	crashWindow = 60 * time.Second
)

// errPanic marks a worker failure caused by a recovered panic.
var errPanic = errors.New("panic")

// TaskGroup supervises a role's long-lived workers. Each worker is started
// by Go with a name and runs until it returns nil or the group is stopped.
// A worker that panics or returns an error while the group is live is
// restarted after DefaultBackoff (or WithBackoff's policy); the attempt
// counter resets after a run that lasted longer than the backoff's Max.
//
// Metrics (role = the group's role): ron_tasks_spawned_total{kind="worker"}
// per Go, ron_tasks_panicked_total{task} per panic,
// ron_service_restarts_total per restart, ron_tasks_aborted_total
// {kind="worker"} for workers still running when Stop's ctx ends.
type TaskGroup struct {
	role    string
	log     zerolog.Logger
	m       *Metrics
	bus     *Bus
	backoff Backoff
	budget  *CrashBudget

	ctx      context.Context // cancelled by Stop; parent of every worker ctx
	cancel   context.CancelFunc
	restarts atomic.Int64

	mu       sync.Mutex
	active   int           // workers whose goroutine has not returned
	stopped  bool          // Stop was called; Go starts nothing
	idle     chan struct{} // closed when stopped && active == 0
	idleDone bool          // idle is closed
	recorded bool          // aborts already counted
}

// TaskGroupOption configures a TaskGroup.
type TaskGroupOption func(*TaskGroup)

// WithBus publishes ServiceCrashed on b for every crash.
func WithBus(b *Bus) TaskGroupOption { return func(g *TaskGroup) { g.bus = b } }

// WithBackoff replaces DefaultBackoff as the restart policy.
func WithBackoff(b Backoff) TaskGroupOption { return func(g *TaskGroup) { g.backoff = b } }

// NewTaskGroup returns a live, empty group for role. m may be nil (metrics
// then go to a private set).
func NewTaskGroup(role string, log zerolog.Logger, m *Metrics, opts ...TaskGroupOption) *TaskGroup {
	ctx, cancel := context.WithCancel(context.Background())
	g := &TaskGroup{
		role:    role,
		log:     log.With().Str("role", role).Logger(),
		m:       m.orNew(),
		backoff: DefaultBackoff,
		budget:  NewCrashBudget(crashLimit, crashWindow, nil),
		ctx:     ctx,
		cancel:  cancel,
		idle:    make(chan struct{}),
	}
	for _, o := range opts {
		o(g)
	}
	// Registered at 0 so the first restart shows in increase() (alerts).
	g.m.Counter("service_restarts_total", "role", role)
	return g
}

// Role returns the role name the group reports metrics under.
func (g *TaskGroup) Role() string { return g.role }

// Go starts the supervised worker name running fn(ctx); ctx ends when the
// group is stopped. After Stop, Go starts nothing and logs a warning.
func (g *TaskGroup) Go(name string, fn func(ctx context.Context) error) {
	g.mu.Lock()
	if g.stopped {
		g.mu.Unlock()
		g.log.Warn().Str("task", name).Msg("task group stopped; worker not started")
		return
	}
	g.active++
	g.mu.Unlock()
	g.m.Counter("tasks_spawned_total", "role", g.role, "kind", "worker").Inc()
	go g.supervise(name, fn) // worker goroutine: named by name, owned by g
}

// supervise runs fn until it returns nil or the group stops, restarting it
// after a backoff on failure.
func (g *TaskGroup) supervise(name string, fn func(ctx context.Context) error) {
	defer g.exited()
	attempt := 0
	for {
		began := time.Now()
		err := g.runOnce(name, fn)
		if err == nil || g.ctx.Err() != nil {
			return
		}
		if time.Since(began) > g.backoff.Max {
			attempt = 0
		}
		delay := g.backoff.Delay(attempt, nil)
		g.crashed(name, err, delay)
		if !g.sleep(delay) {
			return
		}
		g.restarts.Add(1)
		g.m.Counter("service_restarts_total", "role", g.role).Inc()
		attempt++
	}
}

// runOnce calls fn once, turning a panic into an error wrapping errPanic.
func (g *TaskGroup) runOnce(name string, fn func(ctx context.Context) error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			g.m.Counter("tasks_panicked_total", "role", g.role, "task", name).Inc()
			g.log.Error().Str("task", name).Bytes("stack", debug.Stack()).Msgf("worker panicked: %v", r)
			err = fmt.Errorf("%w: %v", errPanic, r)
		}
	}()
	return fn(g.ctx)
}

// crashed records a failure: crash budget, log, bus event.
func (g *TaskGroup) crashed(name string, err error, delay time.Duration) {
	g.budget.Record()
	g.log.Error().Str("task", name).Err(err).Dur("backoff", delay).Msg("worker failed; restarting")
	if g.bus != nil {
		g.bus.Publish(ServiceCrashed{Service: g.role + "/" + name, Reason: err.Error()})
	}
}

// sleep waits d or until the group stops; false means stopped.
func (g *TaskGroup) sleep(d time.Duration) bool {
	return Sleep(g.ctx, d)
}

// exited is a worker goroutine's last act.
func (g *TaskGroup) exited() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.active--
	g.closeIdleLocked()
}

func (g *TaskGroup) closeIdleLocked() {
	if g.stopped && g.active == 0 && !g.idleDone {
		g.idleDone = true
		close(g.idle)
	}
}

// Restarts returns how many restarts the group's workers have had.
func (g *TaskGroup) Restarts() int { return int(g.restarts.Load()) }

// Degraded reports whether more than 5 crashes happened in the last 60 s.
func (g *TaskGroup) Degraded() bool { return g.budget.Exceeded() }

// Running returns the number of workers whose goroutine has not returned.
func (g *TaskGroup) Running() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.active
}

// Stop cancels every worker's ctx and waits until all have returned or ctx
// ends. It returns the number of workers still running (stragglers), which
// the first timed-out Stop also adds to ron_tasks_aborted_total
// {role,kind="worker"}. Stop is idempotent; stragglers keep running until
// they observe their cancelled ctx.
func (g *TaskGroup) Stop(ctx context.Context) (aborted int) {
	g.mu.Lock()
	g.stopped = true
	g.closeIdleLocked()
	g.mu.Unlock()
	g.cancel()
	select {
	case <-g.idle:
		return 0
	case <-ctx.Done():
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.active > 0 && !g.recorded {
		g.recorded = true
		g.m.Counter("tasks_aborted_total", "role", g.role, "kind", "worker").Add(g.active)
	}
	return g.active
}
