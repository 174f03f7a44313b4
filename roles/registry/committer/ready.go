package committer

import (
	"slices"
	"sync"
	"sync/atomic"
)

// Write-unready reasons of docs/registry.md §6.
const (
	ReasonStarting      = "starting"
	ReasonMaintenance   = "maintenance"
	ReasonVerifyFailed  = "verify_failed"
	ReasonStorage       = "storage"
	ReasonCheckpointLag = "checkpoint_lag"
	ReasonDraining      = "draining"
)

// reasonOrder ranks reasons: the first one present is the one a rejected
// write names.
var reasonOrder = []string{ReasonDraining, ReasonStarting, ReasonMaintenance, ReasonStorage,
	ReasonVerifyFailed, ReasonCheckpointLag}

// readiness tracks write readiness. The role's reasons live in a small map
// under mu (never held across anything but map access); storage failure,
// drain and the committer's running state are atomics.
type readiness struct {
	mu      sync.Mutex
	reasons map[string]bool

	running  atomic.Bool // Run is active
	storage  atomic.Bool // sticky until restart
	draining atomic.Bool
}

func newReadiness() *readiness { return &readiness{reasons: map[string]bool{}} }

// set turns the role-supplied reason on or off.
func (r *readiness) set(reason string, on bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if on {
		r.reasons[reason] = true
	} else {
		delete(r.reasons, reason)
	}
}

// list returns the current reasons: known ones in reasonOrder, then any
// other role-supplied ones sorted.
func (r *readiness) list() []string {
	r.mu.Lock()
	have := make(map[string]bool, len(r.reasons)+3)
	for k := range r.reasons {
		have[k] = true
	}
	r.mu.Unlock()
	if r.storage.Load() {
		have[ReasonStorage] = true
	}
	if r.draining.Load() {
		have[ReasonDraining] = true
	} else if !r.running.Load() {
		have[ReasonStarting] = true
	}
	out := make([]string, 0, len(have))
	for _, k := range reasonOrder {
		if have[k] {
			out = append(out, k)
			delete(have, k)
		}
	}
	rest := make([]string, 0, len(have))
	for k := range have {
		rest = append(rest, k)
	}
	slices.Sort(rest)
	return append(out, rest...)
}

// admit returns the 503 a write gets now, or nil when writes are ready.
func (r *readiness) admit() error {
	reasons := r.list()
	if len(reasons) == 0 {
		return nil
	}
	if reasons[0] == ReasonDraining {
		return errDraining()
	}
	return errNotReady(reasons[0])
}

// SetWriteUnready turns a write-unready reason on or off: the role's
// maintenance (read_only), verify_failed, checkpoint_lag and draining.
// "storage" (set internally on a log or registry.db I/O error, or by the
// role for tlog.db) stays until restart: clearing it has no effect.
// Turning "draining" on is Drain, which cannot be undone.
func (c *Committer) SetWriteUnready(reason string, on bool) {
	switch {
	case reason == ReasonDraining && on:
		c.Drain()
	case reason == ReasonStorage:
		if on {
			c.ready.storage.Store(true)
		}
	default:
		c.ready.set(reason, on)
	}
}

// WriteUnready returns the reasons writes are refused now, most important
// first (draining, starting, maintenance, storage, verify_failed,
// checkpoint_lag, then others); empty means write-ready.
func (c *Committer) WriteUnready() []string { return c.ready.list() }

// Drain makes every new Propose/Approve/Commit get 503 draining and closes
// the queues; messages already queued are still processed while Run runs,
// and get 503 draining when Run's ctx ends first.
func (c *Committer) Drain() {
	c.ready.draining.Store(true)
	c.qProposals.Close()
	c.qApprovals.Close()
	c.qCommits.Close()
}
