package replicate

import (
	"context"
	"errors"
	"io"
	"maps"
	"net/http"
	"slices"

	"github.com/VictoriaMetrics/metrics"
	"github.com/rs/zerolog"

	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/roles/storage/peer"
	"github.com/ronhq/ron/roles/storage/storageapi"
	"github.com/ronhq/ron/runtime"
	"github.com/ronhq/ron/runtime/cluster"
	"github.com/ronhq/ron/runtime/cluster/placement"
	"github.com/ronhq/ron/store"
)

// maxCopyTargets is how many members a write tries for its synchronous copy
// (docs/cluster.md §4 step 2).
const maxCopyTargets = 3

// requiredCopies is Q = min(RF, 2).
func requiredCopies(rf int) int { return min(rf, 2) }

// Results of ron_storage_replica_copies_total.
const (
	copyOK       = "ok"
	copyExisting = "existing"
	copyFailed   = "failed"
)

// Options are what a Replicator needs from the storage role.
type Options struct {
	// Members is the cluster membership; its view's Self is this node.
	Members cluster.Membership
	// ReplicationFactor returns storage.replication_factor in force.
	ReplicationFactor func() int
	// Peers is the node-to-node client (replica PUTs, inventory checks).
	Peers *peer.Client
	// Open opens the local copy of id for a verified read: every chunk is
	// checked before its bytes are read (a corrupt one is quarantined). Its
	// errors, and those of the reader, are the answers for the write's
	// client (the envelope of the role's engine errors).
	Open func(ctx context.Context, id store.ID) (io.ReadCloser, store.Info, error)
	// Has reports, in input order, which ids the local engine holds.
	Has func(ctx context.Context, ids []store.ID) ([]bool, error)
	// QueueRest queues pushes of the local object id (size bytes) to the
	// member ids of targets on repair's normal lane (a full lane skips them).
	QueueRest func(id store.ID, size int64, targets []string)
	// Metrics receives ron_storage_replica_copies_total{role="storage",result}.
	Metrics *runtime.Metrics
	// Log is the role's logger.
	Log zerolog.Logger
}

// Replicator makes and finds the copies of objects in cluster mode. Build
// it with New; it is safe for concurrent use.
type Replicator struct {
	opt Options
}

// New returns a Replicator and creates every result series of
// ron_storage_replica_copies_total at 0, so rates and dashboards see the
// first copy.
func New(opt Options) *Replicator {
	x := &Replicator{opt: opt}
	for _, res := range []string{copyOK, copyExisting, copyFailed} {
		x.copies(res)
	}
	return x
}

// copies is the counter of synchronous copy attempts with result res.
func (x *Replicator) copies(res string) *metrics.Counter {
	return x.opt.Metrics.Counter("storage_replica_copies_total", "role", storageapi.RoleName, "result", res)
}

// AbortedError is the error of a copy cut short because the write's context
// ended (its client went away): there is no one to answer. Err is the
// context's error.
type AbortedError struct{ Err error }

// Error names the cause.
func (e *AbortedError) Error() string { return "replica copy aborted: " + e.Err.Error() }

// Unwrap returns the context's error.
func (e *AbortedError) Unwrap() error { return e.Err }

// Replicate makes sure a held object has its required copies
// (docs/cluster.md §4 steps 2–7) and returns the "copies" of the reply: 1
// for an honoured replica write (never
// copied further) or RF 1, else Q. With RF ≥ 2 it fails with 503
// upstream_unavailable (details copies 1, required 2, Retry-After 2) when
// fewer than 2 storage members are alive or no target took the copy; the
// local copy stays either way. A local copy that fails its verified read
// fails with that read's error (500 corrupt: it is quarantined); a write
// whose context ended mid-copy fails with *AbortedError.
func (x *Replicator) Replicate(ctx context.Context, info store.Info, created, replica bool) (int, error) {
	rf := x.opt.ReplicationFactor()
	if replica || requiredCopies(rf) < 2 {
		return 1, nil
	}
	p := NewPlan(x.opt.Members.View(), rf, info.ID)
	if p.Alive < 2 {
		return 0, x.missingCopy(info.ID, "fewer than 2 alive storage members")
	}
	var held map[string]bool
	if !created {
		if held = x.askTargets(ctx, p.Targets, info.ID); slices.Contains(slices.Collect(maps.Values(held)), true) {
			x.copies(copyExisting).Inc()
			x.queueRest(info, p, held, "")
			return requiredCopies(rf), nil
		}
	}
	to, err := x.syncCopy(ctx, info, p.Order)
	if err != nil {
		return 0, err
	}
	x.queueRest(info, p, held, to)
	return requiredCopies(rf), nil
}

// askTargets asks each target whether it holds id (POST /inventory/has).
// A member that does not answer is left out (unknown).
func (x *Replicator) askTargets(ctx context.Context, targets []cluster.Member, id store.ID) map[string]bool {
	held := make(map[string]bool, len(targets))
	for _, m := range targets {
		base := m.URL(placement.Role)
		if base == "" {
			continue
		}
		got, err := x.opt.Peers.Has(ctx, base, []store.ID{id})
		if err != nil {
			x.opt.Log.Debug().Err(err).Str("member", m.ID).Str("b3_prefix", id.Prefix()).Msg("inventory check failed")
			continue
		}
		held[m.ID] = got[id]
	}
	return held
}

// syncCopy pushes the local copy to the first of order that takes it, trying
// at most maxCopyTargets members with a storage URL, and returns that
// member's id.
func (x *Replicator) syncCopy(ctx context.Context, info store.Info, order []cluster.Member) (string, error) {
	var last error
	tried := 0
	for _, m := range order {
		base := m.URL(placement.Role)
		if base == "" {
			continue
		}
		if tried == maxCopyTargets {
			break
		}
		tried++
		existing, err := x.copyTo(ctx, base, info.ID)
		if err == nil {
			x.copies(map[bool]string{true: copyExisting, false: copyOK}[existing]).Inc()
			return m.ID, nil
		}
		x.copies(copyFailed).Inc()
		if isLocalCopyError(err) || ctx.Err() != nil {
			return "", x.copyAborted(ctx, err)
		}
		x.opt.Log.Debug().Err(err).Str("member", m.ID).Str("b3_prefix", info.ID.Prefix()).Msg("replica copy failed: trying the next member")
		last = err
	}
	x.opt.Log.Warn().AnErr("last_error", last).Int("tried", tried).Str("b3_prefix", info.ID.Prefix()).
		Msg("second copy failed: the object stays here and repair will place it")
	return "", x.missingCopy(info.ID, "no storage member took the second copy")
}

// copyAborted maps a copy that cannot go on: the client went away (nothing
// is answered), or the local copy failed its read (its error answers).
func (x *Replicator) copyAborted(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return &AbortedError{ctx.Err()}
	}
	var le *localCopyError
	if errors.As(err, &le) {
		return le.err
	}
	return err
}

// missingCopy is the 503 of docs/cluster.md §4 step 3.
func (x *Replicator) missingCopy(id store.ID, why string) error {
	x.opt.Log.Debug().Str("b3_prefix", id.Prefix()).Str("why", why).Msg("write refused: one copy only")
	return httpx.NewError(http.StatusServiceUnavailable, httpx.CodeUpstreamUnavailable,
		"stored on this node only (%s): retry; repair places the second copy later", why).
		WithDetails(map[string]any{"copies": 1, "required": 2}).WithRetryAfter(2)
}

// queueRest queues the copies beyond Q for RF ≥ 3 (docs/cluster.md §4 step
// 4) on the normal repair lane (skipped when full: the next pass finds them).
func (x *Replicator) queueRest(info store.Info, p Plan, held map[string]bool, done string) {
	if rest := remainingTargets(p, held, done); len(rest) > 0 {
		x.opt.QueueRest(info.ID, info.Size, rest)
	}
}
