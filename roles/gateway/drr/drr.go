// Package drr is the gateway's fair scheduler (spec/gateway.md §3.5): at most
// Slots requests are forwarded at once; the rest wait in per-tenant FIFO queues
// served by deficit round robin, weighted by tenant. One scheduler goroutine
// (Run) owns every queue; a waiting request blocks in its own handler goroutine
// on a one-slot channel, so nothing is spawned per queued request.
package drr

import (
	"sync/atomic"
	"time"

	"github.com/ronhq/ron/runtime"
)

// Defaults of spec/gateway.md §9, used for zero or negative Options fields.
const (
	DefaultSlots          = 512
	DefaultQueueCap       = 512
	DefaultTenantQueueCap = 64
	DefaultQuantum        = 8
	DefaultMaxWait        = 2 * time.Second
	// MaxCost is the largest cost of one request; MinWeight and MaxWeight
	// bound a tenant's weight. Out-of-range arguments to Acquire are clamped.
	MaxCost   = 64
	MinWeight = 1
	MaxWeight = 1000
	// unknownLengthCost is the cost of a chunked body (as 1 MiB).
	unknownLengthCost = 17
	costUnit          = 65536
)

// Options configures a Scheduler. Zero or negative numbers take the defaults.
type Options struct {
	Slots          int           // requests forwarded at once (sched_inflight)
	QueueCap       int           // waiting requests in total (queue_cap)
	TenantQueueCap int           // waiting requests per tenant (tenant_queue_cap)
	Quantum        int           // cost units per turn per unit of weight (drr_quantum)
	MaxWait        time.Duration // longest wait for a slot (max_queue_wait)
	Metrics        *runtime.Metrics
	Role           string // metric label role; empty means "gateway"
}

func (o Options) withDefaults() Options {
	o.Slots = orDefault(o.Slots, DefaultSlots)
	o.QueueCap = orDefault(o.QueueCap, DefaultQueueCap)
	o.TenantQueueCap = orDefault(o.TenantQueueCap, DefaultTenantQueueCap)
	o.Quantum = orDefault(o.Quantum, DefaultQuantum)
	if o.MaxWait <= 0 {
		o.MaxWait = DefaultMaxWait
	}
	if o.Metrics == nil {
		o.Metrics = runtime.NewMetrics(nil)
	}
	if o.Role == "" {
		o.Role = "gateway"
	}
	return o
}

func orDefault(v, def int) int {
	if v <= 0 {
		return def
	}
	return v
}

func clamp(v, lo, hi int) int {
	return max(lo, min(hi, v))
}

// Cost is the scheduling cost of a request with a declared body of
// declaredBytes: min(64, 1 + declaredBytes/65536). A negative value means a
// chunked body of unknown length, which costs 17 (as 1 MiB).
func Cost(declaredBytes int64) int {
	if declaredBytes < 0 {
		return unknownLengthCost
	}
	return int(min(int64(MaxCost), 1+declaredBytes/costUnit))
}

// Scheduler is the DRR fair scheduler. Create it with New, start Run once in
// a supervised goroutine, and call Acquire from request handlers.
type Scheduler struct {
	opt     Options
	arrive  chan *waiter  // unbuffered: a handler hands its request to Run
	leave   chan *waiter  // unbuffered: a waiting handler withdraws
	release chan struct{} // capacity Slots: freed slots, never blocks
	done    chan struct{} // closed when Run has returned
	running atomic.Bool

	waiting  atomic.Int64 // requests queued (written by Run only)
	inflight atomic.Int64 // slots held (written by Run only)
	m        schedMetrics

	state // owned by the Run goroutine
}

// New returns a Scheduler with opt (defaults filled in) and registers its
// metrics: ron_queue_depth / ron_queue_capacity / ron_queue_dropped_total
// {queue="sched"} and ron_gateway_inflight.
func New(opt Options) *Scheduler {
	opt = opt.withDefaults()
	s := &Scheduler{
		opt:     opt,
		arrive:  make(chan *waiter),
		leave:   make(chan *waiter),
		release: make(chan struct{}, opt.Slots),
		done:    make(chan struct{}),
		state:   state{tenants: map[string]*tenantQueue{}},
	}
	s.m = newSchedMetrics(opt, &s.waiting, &s.inflight)
	return s
}

// Waiting reports how many requests wait for a slot.
func (s *Scheduler) Waiting() int { return int(s.waiting.Load()) }

// InFlight reports how many slots are held.
func (s *Scheduler) InFlight() int { return int(s.inflight.Load()) }

// Done is closed once Run has returned; queued requests have then been
// answered with 503 draining.
func (s *Scheduler) Done() <-chan struct{} { return s.done }
