package committer

import (
	"context"
	"errors"
	goruntime "runtime"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"github.com/ronhq/ron/roles/registry/registryapi"
	"github.com/ronhq/ron/roles/registry/registryapi/descriptor"
	"github.com/ronhq/ron/roles/registry/segment"
	"github.com/ronhq/ron/runtime"
	"github.com/ronhq/ron/store/kv"
)

// Clock returns the current time; tests inject a fake one.
type Clock func() time.Time

// Options configure Open. Log and DB are required; the rest have defaults.
type Options struct {
	// Log is the opened segment log (the committer is its only appender).
	Log *segment.Log
	// DB is registry.db: buckets meta (head, origin, min_index,
	// retired_signers) and proposals.
	DB kv.DB
	// Limits returns the live limits, read per message or batch (hot
	// reload); nil means DefaultLimits. Zero fields take the defaults.
	Limits func() Limits
	// QueueCapacity sizes the three queues (restart-only); 0 = 512.
	QueueCapacity struct{ Proposals, Approvals, Commits int }
	// Now is the clock for every time stamp and TTL; nil = time.Now.
	Now Clock
	// Metrics receives the docs/registry.md §8 metrics; nil = a private set.
	Metrics *runtime.Metrics
	// Logger receives audit events (info) and storage failures (error).
	Logger zerolog.Logger
	// OnCommit is called for each new commit after its snapshot swap and
	// reply, in commit order, on the committer goroutine: it must not block.
	OnCommit func(registryapi.Committed)
	// CPU is the semaphore Approve takes around signature checks; nil = a
	// private one of size GOMAXPROCS.
	CPU chan struct{}

	// Replicate, when set, puts the committer in replicated mode
	// (docs/cluster.md §14): persist proposes each batch's effects to the
	// control plane instead of writing the stores, and returns once the
	// entry is committed and applied here (the registry's state machine,
	// roles/registry/reglog, writes the stores on every member, this one
	// included). Its errors are the plane's: consensus.ErrNoQuorum or
	// *consensus.NotLeaderError (nothing was written), anything else (the
	// outcome is unknown). Leading and Barrier are required with it.
	Replicate func(ctx context.Context, fx Effects) error
	// Leading reports whether this member leads the control plane: only
	// the leader takes batches and runs sweeps.
	Leading func() bool
	// Barrier returns once this member, as leader, has applied every entry
	// committed before the call (consensus.Plane.Barrier).
	Barrier func(ctx context.Context) error
}

// Committer is the registry's single writer. Run is its only goroutine
// that mutates state; Propose, Approve and Commit validate on the caller's
// goroutine, enqueue, and wait for the reply; Head, Proposal,
// OpenProposals and SignerSet read an immutable snapshot without locks.
type Committer struct {
	log      *segment.Log
	db       kv.DB
	limitsFn func() Limits
	now      Clock
	mt       *meters
	logger   zerolog.Logger
	onCommit func(registryapi.Committed)
	cpu      chan struct{}

	qProposals *runtime.Queue[*message]
	qApprovals *runtime.Queue[*message]
	qCommits   *runtime.Queue[*message]
	bell       chan struct{} // capacity 1: "a queue may be non-empty"

	ready *readiness
	snap  atomic.Pointer[snapshot]

	repl replica // replicated mode (Options.Replicate set)

	active   atomic.Bool // a Run is active (CompareAndSwap refuses a second one)
	st       *state      // owned by Open, then by the active Run's goroutine
	poisoned atomic.Bool // a batch began and did not finish: st must be reloaded
}

// errDoubleRun is returned by a second concurrent Run.
var errDoubleRun = errors.New("committer: Run is already running")

// Open loads HEAD, proposals, tombstones and retired signers from
// registry.db. In replicated mode (Options.Replicate) that is all: the
// stores are the state machine's, so Open appends no genesis, rolls
// nothing forward and writes nothing (an empty registry has no HEAD and
// writes stay unready, "no_log", until the log's init entry is applied).
// Otherwise it applies rec.Beyond (and any further log records beyond
// the stored HEAD): HEAD rolls forward and matching proposals are marked
// committed; with an empty log and genesis != nil it appends genesis
// (version 0, no approvals, committed_at = created_at) durably. It marks
// stale proposals, expires due ones, persists the result and publishes the
// first snapshot. Writes stay unready ("starting") until Run runs.
func Open(ctx context.Context, opt Options, genesis *descriptor.Set, rec segment.Recovery) (*Committer, error) {
	if opt.Log == nil || opt.DB == nil {
		return nil, errors.New("committer: Options.Log and Options.DB are required")
	}
	if opt.Replicate != nil && (opt.Leading == nil || opt.Barrier == nil) {
		return nil, errors.New("committer: Options.Replicate needs Leading and Barrier")
	}
	c := newCommitter(opt)
	if rec.Kind != "" {
		for _, k := range rec.Kinds() {
			c.mt.recovery(k)
		}
	}
	load := func() error { return c.load(ctx, genesis, rec.Beyond) }
	if c.repl.on() {
		load = func() error { return c.loadReplica(ctx) }
	}
	if err := load(); err != nil {
		return nil, err
	}
	c.registerGauges()
	return c, nil
}

// newCommitter builds a committer from opt without touching the stores.
func newCommitter(opt Options) *Committer {
	m := opt.Metrics
	if m == nil {
		m = runtime.NewMetrics(nil)
	}
	c := &Committer{
		log: opt.Log, db: opt.DB, limitsFn: opt.Limits, now: opt.Now, mt: newMeters(m),
		logger: opt.Logger.With().Str("role", roleName).Logger(), onCommit: opt.OnCommit, cpu: opt.CPU,
		bell: make(chan struct{}, 1), ready: newReadiness(),
	}
	if c.now == nil {
		c.now = time.Now
	}
	if c.cpu == nil {
		c.cpu = make(chan struct{}, goruntime.GOMAXPROCS(0))
	}
	c.repl = newReplica(opt)
	qc := opt.QueueCapacity
	c.qProposals = runtime.NewQueue[*message](m, roleName, "registry_proposals", orDefault(qc.Proposals), runtime.Reject)
	c.qApprovals = runtime.NewQueue[*message](m, roleName, "registry_approvals", orDefault(qc.Approvals), runtime.Reject)
	c.qCommits = runtime.NewQueue[*message](m, roleName, "registry_commits", orDefault(qc.Commits), runtime.Reject)
	return c
}

func orDefault(n int) int {
	if n <= 0 {
		return DefaultQueueCapacity
	}
	return n
}

// limits returns the live limits with defaults filled in.
func (c *Committer) limits() Limits {
	if c.limitsFn == nil {
		return DefaultLimits()
	}
	return c.limitsFn().withDefaults()
}
