// Package fillq is the edge's one bounded work queue (docs/edge.md §7.5):
// every upstream request for GET or HEAD — cache misses, revalidations,
// background revalidations and /o fills — is a Job on it, served by a fixed
// pool of workers. Submit never waits: a full queue refuses the job (the
// caller answers 429 busy), a closed one refuses it as draining.
//
// At shutdown (docs/edge.md §9) Close stops intake and drops the queued jobs, Drain lets
// the running ones finish until its ctx ends and then aborts them by
// cancelling their ctx.
package fillq

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/VictoriaMetrics/metrics"

	"github.com/ronhq/ron/runtime"
)

// Errors of Submit and of Job.Dropped.
var (
	// ErrBusy: the queue is full (HTTP 429 busy, Retry-After 1).
	ErrBusy = errors.New("fillq: work queue full")
	// ErrDraining: the queue is closed for shutdown (HTTP 503 draining).
	ErrDraining = errors.New("fillq: draining")
	// ErrExpired: the job's client deadline passed before a worker took it.
	ErrExpired = errors.New("fillq: deadline passed while queued")
)

// Job is one upstream request.
type Job struct {
	// Kind labels the task metrics: "fill" or "revalidate".
	Kind string
	// Deadline is the client's deadline; a job still queued when it passes
	// is dropped. Zero means none (a background revalidation).
	Deadline time.Time
	// Run does the work on a worker. Its ctx ends only when the job is
	// aborted at shutdown; the job bounds its own I/O.
	Run func(ctx context.Context)
	// Dropped, when set, is called instead of Run with ErrExpired or
	// ErrDraining.
	Dropped func(err error)
}

// Queue is the bounded work queue and its workers. Safe for concurrent use.
type Queue struct {
	q    *runtime.Queue[Job]
	role string
	m    *runtime.Metrics

	jobCtx    context.Context // parent of every running job; cancelled by Drain's abort
	abortJobs context.CancelFunc
	degraded  atomic.Bool

	mu      sync.Mutex
	running int           // jobs inside Run
	stopped bool          // Close was called: no job starts any more
	idle    chan struct{} // closed when running drops to 0 while Drain waits

	dropped *metrics.Counter
}

// New builds a queue of the given capacity (at least 1). It exports
// ron_queue_depth, ron_queue_capacity and ron_queue_dropped_total with
// queue="work" for role.
func New(m *runtime.Metrics, role string, capacity int) *Queue {
	if m == nil {
		m = runtime.NewMetrics(nil)
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Queue{
		q:    runtime.NewQueue[Job](m, role, "work", max(capacity, 1), runtime.Reject),
		role: role, m: m, jobCtx: ctx, abortJobs: cancel,
		dropped: m.Counter("queue_dropped_total", "role", role, "queue", "work"),
	}
}

// Submit enqueues j without waiting: nil, ErrBusy when the queue is full,
// ErrDraining after Close.
func (q *Queue) Submit(j Job) error {
	_, _, err := q.q.Offer(j)
	switch {
	case errors.Is(err, runtime.ErrClosed):
		return ErrDraining
	case errors.Is(err, runtime.ErrBusy):
		q.updateDegraded()
		return ErrBusy
	case err != nil:
		return err
	}
	q.updateDegraded()
	return nil
}

// Start runs workers on g, named "fill_worker".
func (q *Queue) Start(g *runtime.TaskGroup, workers int) {
	for range max(workers, 1) {
		g.Go("fill_worker", q.work)
	}
}

// work takes jobs until the group stops or the queue is closed and empty.
func (q *Queue) work(ctx context.Context) error {
	for {
		j, err := q.q.Pop(ctx)
		if err != nil { // closed and empty, or the group is stopping
			return nil
		}
		q.updateDegraded()
		q.runJob(j)
	}
}

// runJob runs one job, or drops it when its deadline passed or the queue
// was closed meanwhile.
func (q *Queue) runJob(j Job) {
	if !j.Deadline.IsZero() && !time.Now().Before(j.Deadline) {
		q.drop(j, ErrExpired)
		return
	}
	if !q.begin() {
		q.drop(j, ErrDraining)
		return
	}
	defer q.end()
	q.m.Counter("tasks_spawned_total", "role", q.role, "kind", q.kind(j)).Inc()
	j.Run(q.jobCtx)
	if q.jobCtx.Err() != nil {
		q.m.Counter("tasks_canceled_total", "role", q.role, "kind", q.kind(j)).Inc()
	}
}

// begin counts a job as running unless Close was called.
func (q *Queue) begin() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.stopped {
		return false
	}
	q.running++
	return true
}

// end counts a job as finished and wakes Drain on the last one.
func (q *Queue) end() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.running--
	if q.running == 0 && q.idle != nil {
		close(q.idle)
		q.idle = nil
	}
}

// drop reports a job that will not run.
func (q *Queue) drop(j Job, err error) {
	q.dropped.Inc()
	if j.Dropped != nil {
		j.Dropped(err)
	}
}

// kind is j's metric label ("fill" when unset).
func (q *Queue) kind(j Job) string {
	if j.Kind == "" {
		return "fill"
	}
	return j.Kind
}

// Close stops intake: later Submits return ErrDraining and every job still
// queued is dropped with ErrDraining. Running jobs go on. Idempotent.
func (q *Queue) Close() {
	q.mu.Lock()
	q.stopped = true
	q.mu.Unlock()
	q.q.Close()
	for {
		j, ok := q.q.TryPop()
		if !ok {
			break
		}
		q.drop(j, ErrDraining)
	}
	q.updateDegraded()
}

// Drain waits until the running jobs have finished or ctx ends; then it
// cancels the ctx of those still running, counts them in
// ron_tasks_aborted_total{kind="fill"} and returns how many there were.
// It closes the queue first. Aborted jobs end on their own once they observe
// their ctx; Drain does not wait for them.
func (q *Queue) Drain(ctx context.Context) int {
	q.Close()
	q.mu.Lock()
	if q.running == 0 {
		q.mu.Unlock()
		q.abortJobs()
		return 0
	}
	if q.idle == nil {
		q.idle = make(chan struct{})
	}
	idle := q.idle
	q.mu.Unlock()
	select {
	case <-idle:
		q.abortJobs()
		return 0
	case <-ctx.Done():
	}
	q.mu.Lock()
	n := q.running
	q.mu.Unlock()
	q.abortJobs()
	if n > 0 {
		q.m.Counter("tasks_aborted_total", "role", q.role, "kind", "fill").Add(n)
	}
	return n
}

// Degraded reports queue pressure with hysteresis: true from 80 % full
// until the queue is below 50 % (readiness "edge:fill_queue", docs/edge.md §9).
func (q *Queue) Degraded() bool {
	q.updateDegraded()
	return q.degraded.Load()
}

// updateDegraded applies the 80 % / 50 % hysteresis to the current depth.
func (q *Queue) updateDegraded() {
	n, c := q.q.Len(), q.q.Cap()
	switch {
	case n*10 >= c*8:
		q.degraded.Store(true)
	case n*2 < c:
		q.degraded.Store(false)
	}
}

// Len is the number of queued jobs.
func (q *Queue) Len() int { return q.q.Len() }

// Cap is the queue's capacity.
func (q *Queue) Cap() int { return q.q.Cap() }
