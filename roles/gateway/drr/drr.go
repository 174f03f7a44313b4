// Package drr is the gateway's fair scheduler (docs/gateway.md §3.5): at most
// Slots requests are forwarded at once; the rest wait in per-tenant FIFO queues
// served by deficit round robin, weighted by tenant. One scheduler goroutine
// (Run) owns every queue; a waiting request blocks in its own handler goroutine
// on a one-slot channel, so nothing is spawned per queued request.
//
// A request that finds a free slot and nobody waiting takes the slot at once,
// without a round trip to Run (a compare-and-swap on the in-flight count, so
// slots are never over-committed); a slot given back while nobody waits is
// freed the same way, and Run is woken only when someone does.
package drr

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/ronhq/ron/roles/gateway/gatewayapi"
	"github.com/ronhq/ron/runtime"
)

// Defaults of docs/gateway.md §9, used for zero or negative Options fields.
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
// Slots, QueueCap, TenantQueueCap, Quantum and MaxWait can change live
// (SetOptions); the other fields are fixed by New.
type Options struct {
	Slots          int           // requests forwarded at once (sched_inflight)
	QueueCap       int           // waiting requests in total (queue_cap)
	TenantQueueCap int           // waiting requests per tenant (tenant_queue_cap)
	Quantum        int           // cost units per turn per unit of weight (drr_quantum)
	MaxWait        time.Duration // longest wait for a slot (max_queue_wait)
	Metrics        *runtime.Metrics
	Role           string // metric label role; empty means "gateway"

	// Label maps a tenant to the value of the tenant label of the per-tenant
	// metrics (docs/gateway.md §10 rule); nil means the tenant id itself, and
	// "" means "other". Values past the first MaxLabels distinct ones count
	// as "other". It runs on the scheduler goroutine once per arrival that
	// goes through Run (the fast path reuses the label Run last found for the
	// tenant, for at most one epoch): it must be fast and never block.
	Label func(tenant string) string
	// OnDrop, when set, is called once for every waiting request the
	// scheduler gave up on: dropped as the oldest of a full queue, or timed
	// out (max_queue_wait or its deadline; not a client that went away). It
	// feeds write/read shedding (docs/gateway.md §8). It may run on any
	// goroutine, concurrently: it must be fast and never block.
	OnDrop func()
	// OnWaiting, when set, is called on the scheduler goroutine with the
	// number of waiting requests each time that number changes (for
	// admission.Shedder.Observe). It must be fast and never block.
	OnWaiting func(waiting int)
}

// tunables are the live options (SetOptions), defaults filled in.
type tunables struct {
	Slots, QueueCap, TenantQueueCap, Quantum int
	MaxWait                                  time.Duration
}

func (o Options) tunables() *tunables {
	t := &tunables{
		Slots:          orDefault(o.Slots, DefaultSlots),
		QueueCap:       orDefault(o.QueueCap, DefaultQueueCap),
		TenantQueueCap: orDefault(o.TenantQueueCap, DefaultTenantQueueCap),
		Quantum:        orDefault(o.Quantum, DefaultQuantum),
		MaxWait:        o.MaxWait,
	}
	if t.MaxWait <= 0 {
		t.MaxWait = DefaultMaxWait
	}
	return t
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
		o.Role = gatewayapi.RoleName
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
	opt     Options                  // as given to New; its live fields are only the initial values
	tun     atomic.Pointer[tunables] // live options (SetOptions)
	poke    chan struct{}            // capacity 1: SetOptions and releases wake Run
	arrive  chan *waiter             // unbuffered: a handler hands its request to Run
	leave   chan *waiter             // unbuffered: a waiting handler withdraws
	done    chan struct{}            // closed when Run has returned
	running atomic.Bool

	waiting  atomic.Int64 // requests queued (written by Run only)
	inflight atomic.Int64 // slots held: taken by compare-and-swap (take), freed by releases
	m        schedMetrics
	snap     atomic.Pointer[snapshot] // per-tenant metrics, published by Run
	fast     sync.Map                 // tenant → *labelStats for the fast path (filled by Run)
	fastLen  int                      // entries Run stored in fast since its last Clear (Run only)

	state          // owned by the Run goroutine
	stats          // owned by the Run goroutine
	reported int64 // waiting count last given to OnWaiting (Run only)
}

// New returns a Scheduler with opt (defaults filled in) and registers its
// metrics: ron_queue_depth / ron_queue_capacity / ron_queue_dropped_total
// {queue="sched"}, ron_gateway_inflight, and the DRR series of
// docs/gateway.md §10 (ron_gateway_drr_*; see Run for how they are kept).
func New(opt Options) *Scheduler {
	opt = opt.withDefaults()
	s := &Scheduler{
		opt:    opt,
		poke:   make(chan struct{}, 1),
		arrive: make(chan *waiter),
		leave:  make(chan *waiter),
		done:   make(chan struct{}),
		state:  state{tenants: map[string]*tenantQueue{}},
		stats:  stats{labels: map[string]*labelStats{}},
	}
	s.tun.Store(opt.tunables())
	s.snap.Store(emptySnapshot())
	s.m = newSchedMetrics(s)
	return s
}

// SetOptions changes the live options at once: Slots, QueueCap,
// TenantQueueCap, Quantum and MaxWait (zero or negative take the defaults);
// Metrics, Role, Label, OnDrop and OnWaiting are fixed by New and ignored
// here. Shrinking Slots never revokes a held slot: dispatch resumes once
// fewer than the new Slots are held. Shrinking a queue cap keeps every
// request already waiting (an arrival at a total queue above QueueCap still
// drops only the one oldest). MaxWait applies to requests arriving from now
// on; new weights come with each arrival (Acquire). It never blocks, also
// before Run starts or after it stopped.
func (s *Scheduler) SetOptions(opt Options) {
	s.tun.Store(opt.tunables())
	s.wake()
}

// wake makes Run look at the queues again; it never blocks.
func (s *Scheduler) wake() {
	select {
	case s.poke <- struct{}{}:
	default: // a wake-up is already pending
	}
}

// tunables returns the live options.
func (s *Scheduler) tunables() *tunables { return s.tun.Load() }

// Waiting reports how many requests wait for a slot.
func (s *Scheduler) Waiting() int { return int(s.waiting.Load()) }

// InFlight reports how many slots are held.
func (s *Scheduler) InFlight() int { return int(s.inflight.Load()) }

// Done is closed once Run has returned; queued requests have then been
// answered with 503 draining.
func (s *Scheduler) Done() <-chan struct{} { return s.done }
