package repair

import (
	"context"
	"errors"
	"io"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"github.com/ronhq/ron/roles/storage/storageapi"
	"github.com/ronhq/ron/runtime"
	"github.com/ronhq/ron/runtime/cluster"
	"github.com/ronhq/ron/store"
)

// Local is the node's own store as repair sees it.
type Local interface {
	// List returns up to limit objects with ids after *after (all if nil),
	// ascending (store.BlobStore.List).
	List(ctx context.Context, after *store.ID, limit int) ([]store.Info, error)
	// Stat describes a local object (store.ErrNotFound, store.ErrQuarantined).
	Stat(ctx context.Context, id store.ID) (store.Info, error)
	// Count is the number of local objects (a pass's total).
	Count() int64
}

// Remote asks another storage member which objects it holds.
type Remote interface {
	// Has asks base's POST /inventory/has for ids (1–1000).
	Has(ctx context.Context, base string, ids []store.ID) (map[store.ID]bool, error)
}

// Meter paces and counts one transfer's bytes.
type Meter struct {
	p     *Pacer
	count func(int)
}

// NewMeter returns a Meter over p that reports each chunk's length to
// count (may be nil).
func NewMeter(p *Pacer, count func(int)) Meter { return Meter{p: p, count: count} }

// Reader is Pacer.Reader with the engine's byte counting.
func (m Meter) Reader(ctx context.Context, size int64, src ChunkSource) io.Reader {
	return m.p.Reader(ctx, size, src, m.count)
}

// Executor moves bytes. Its errors should be *Failure values naming the
// reason (ron_repair_objects_total{reason}); others count as "error".
type Executor interface {
	// Push streams the local object id to base's PUT /o/{b3} as a replica,
	// reading it through m.Reader. existing: the target already held it.
	Push(ctx context.Context, id store.ID, base string, m Meter) (existing bool, err error)
	// Pull fetches id with the verified transfer from another holder (its
	// own sources first, then sources, the storage base URLs of T and the
	// other alive members) through m.Reader, and commits it locally.
	Pull(ctx context.Context, id store.ID, sources []string, m Meter) error
	// Drop deletes the local excess copy and withdraws its provider record.
	Drop(ctx context.Context, id store.ID) error
}

// Options are what New needs.
type Options struct {
	Members cluster.Membership // the view's Self is this node
	Local   Local
	Remote  Remote
	Exec    Executor
	Metrics *runtime.Metrics
	Log     zerolog.Logger
}

// Repairer is the engine. Build it with New, start its tasks with Start,
// stop them by ending the spawn context and calling Stop.
type Repairer struct {
	members cluster.Membership
	local   Local
	remote  Remote
	exec    Executor
	log     zerolog.Logger
	metrics engineMetrics
	config  atomic.Pointer[Config]
	pacer   *Pacer
	lanes   *lanes
	slots   *slots
	prog    progress
	kick    chan struct{} // capacity 1: run a pass now

	mu      sync.Mutex
	spawn   func(name string, fn func(context.Context) error)
	workers [maxWorkers]bool // worker i is running
	stopped bool
	reconf  chan struct{} // closed and replaced by Apply
}

// New builds the engine; it starts nothing. Every metric of docs/cluster.md
// §11 that repair owns is registered here, at 0.
func New(opt Options, cfg Config) *Repairer {
	cfg = cfg.normalized()
	em := newEngineMetrics(opt.Metrics)
	r := &Repairer{members: opt.Members, local: opt.Local, remote: opt.Remote, exec: opt.Exec,
		log: opt.Log, metrics: em, lanes: newLanes(opt.Metrics, role, cfg.Queue), slots: newSlots(),
		kick: make(chan struct{}, 1), reconf: make(chan struct{})}
	r.config.Store(&cfg)
	r.pacer = NewPacer(cfg.Pace, func(d time.Duration) { em.wait.Update(d.Seconds()) })
	r.registerGauges()
	return r
}

func (r *Repairer) cfg() Config { return *r.config.Load() }

// Start spawns the planner (task repair_planner) and K workers through
// spawn, which runs each as an owned, supervised task (runtime.TaskGroup.Go)
// until its context ends. A later Apply that raises K spawns more.
func (r *Repairer) Start(spawn func(name string, fn func(context.Context) error)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.spawn = spawn
	spawn("repair_planner", r.plan)
	r.spawnWorkersLocked(r.cfg().Workers)
}

func (r *Repairer) spawnWorkersLocked(k int) {
	if r.spawn == nil || r.stopped {
		return
	}
	for i := 0; i < k; i++ {
		if !r.workers[i] {
			r.workers[i] = true
			r.spawn("repair_worker_"+strconv.Itoa(i), r.worker(i))
		}
	}
}

// Stop closes the lanes (a planner blocked on the urgent lane returns) and
// cancels a boost's timer. The tasks themselves end with their context.
func (r *Repairer) Stop() {
	r.mu.Lock()
	r.stopped = true
	r.mu.Unlock()
	r.lanes.close()
	r.pacer.Stop()
}

// Apply hot-applies cfg: pace, interval, repair_after, batch, scan rate,
// workers, per-target limit, drop_excess and RF. The lane capacity stays.
func (r *Repairer) Apply(cfg Config) {
	cfg = cfg.normalized()
	cfg.Queue = r.cfg().Queue
	r.config.Store(&cfg)
	r.pacer.SetConfigured(cfg.Pace)
	r.mu.Lock()
	defer r.mu.Unlock()
	close(r.reconf)
	r.reconf = make(chan struct{})
	r.spawnWorkersLocked(cfg.Workers)
}

func (r *Repairer) reconfigured() <-chan struct{} {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.reconf
}

// RunPass asks the planner to start a pass now (after the current one,
// when a pass is running).
func (r *Repairer) RunPass() {
	select {
	case r.kick <- struct{}{}:
	default:
	}
}

// Boost sets the pace to bytesPerS (0 pauses) for d ≤ storageapi.MaxRepairBoost.
func (r *Repairer) Boost(bytesPerS int64, d time.Duration) (time.Time, error) {
	return r.pacer.Boost(bytesPerS, d)
}

// ErrBusy: the lane an item needs is full.
var ErrBusy = runtime.ErrBusy

// CheckObject queues an urgent check of id (admin POST /repair/object): a
// worker decides it at once, pushes missing copies urgently, and pulls it
// when this node is a target that lacks it. ErrBusy when the urgent lane is
// full; nil when a check of id is already pending.
func (r *Repairer) CheckObject(id store.ID) error {
	return r.offer(Item{Kind: KindCheck, ID: id, Urgent: true})
}

// QueuePull queues an urgent pull of id (after a quarantine) without
// waiting: a full lane skips it (counted), and the holders' passes push it
// back if this node is a target.
func (r *Repairer) QueuePull(id store.ID) {
	if err := r.offer(Item{Kind: KindPull, ID: id, Urgent: true}); errors.Is(err, ErrBusy) {
		r.skip(0)
	}
}

// QueuePush queues normal pushes of the local object id (size bytes) to
// the member ids targets (a write's remaining copies, RF ≥ 3); each one
// that finds the normal lane full is skipped and counted.
func (r *Repairer) QueuePush(id store.ID, size int64, targets []string) {
	for _, t := range targets {
		r.offerCounted(Item{Kind: KindPush, ID: id, Size: size, Target: t})
	}
}

// offerCounted offers it without waiting and counts it as queued, or as
// skipped when its lane is full.
func (r *Repairer) offerCounted(it Item) {
	if err := r.offer(it); errors.Is(err, ErrBusy) {
		r.skip(it.Size)
	} else if err == nil {
		r.queued(it.Size)
	}
}

func (r *Repairer) offer(it Item) error {
	err := r.lanes.offer(it)
	if errors.Is(err, errDuplicate) {
		return nil
	}
	return err
}

func (r *Repairer) skip(size int64) {
	r.prog.skipped(size)
	r.metrics.skipped.Inc()
}

func (r *Repairer) queued(size int64) {
	r.prog.queued()
	r.metrics.planned.Add(int(size))
}

// pending is bytes_pending: queued and in-flight items plus this pass's
// skipped ones.
func (r *Repairer) pending() int64 {
	_, skipped, _ := r.prog.snapshot()
	return r.lanes.pendingBytes() + skipped
}

// eta is bytes_pending / max(rate, 1) seconds; nil when nothing is pending.
func (r *Repairer) eta() *float64 { return etaOf(r.pending(), r.prog.rateNow()) }

// etaOf is pending / max(rate, 1) seconds; nil when nothing is pending.
func etaOf(pending int64, rate float64) *float64 {
	if pending <= 0 {
		return nil
	}
	eta := float64(pending) / max(rate, 1)
	return &eta
}

// observedRF is the lowest copy count of the last pass; the RF target when
// that pass decided no object (nothing seen is nothing missing).
func (r *Repairer) observedRF() int {
	s, _, ok := r.prog.lastPass()
	if !ok || s.minCopies < 0 {
		return r.cfg().RF
	}
	return s.minCopies
}

// Progress is the status object of docs/cluster.md §9.
func (r *Repairer) Progress() storageapi.RepairProgress {
	out, skipped, running := r.prog.snapshot()
	out.BytesPending = r.lanes.pendingBytes() + skipped
	out.PaceBytesPerS = r.pacer.Pace()
	if until := r.pacer.BoostUntil(); !until.IsZero() {
		u := until.UTC()
		out.BoostUntil = &u
	}
	out.EtaS = etaOf(out.BytesPending, out.RateBytesPerS)
	switch {
	case out.PaceBytesPerS == 0:
		out.State = "paused"
	case running:
		out.State = "scanning"
	case out.BytesPending > 0:
		out.State = "transferring"
	default:
		out.State = "idle"
	}
	return out
}
