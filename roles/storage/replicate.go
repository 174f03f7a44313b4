package storage

import (
	"context"
	"errors"
	"maps"
	"net/http"
	"slices"

	"github.com/ronhq/ron/httpx"
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

// registerReplicaCopies creates every result series at 0 (cluster mode),
// so rates and dashboards see the first copy.
func (m roleMetrics) registerReplicaCopies() {
	for _, res := range []string{copyOK, copyExisting, copyFailed} {
		m.counter("storage_replica_copies_total", "result", res)
	}
}

// replicaCopy counts one synchronous copy attempt.
func (m roleMetrics) replicaCopy(result string) {
	m.counter("storage_replica_copies_total", "result", result).Inc()
}

// replicate makes sure a held object has its required copies
// (docs/cluster.md §4 steps 2–7) and returns the "copies" of the reply: 0
// when cluster mode is off (no field), 1 for an honoured replica write (never
// copied further) or RF 1, else Q. With RF ≥ 2 it fails with 503
// upstream_unavailable (details copies 1, required 2, Retry-After 2) when
// fewer than 2 storage members are alive or no target took the copy; the
// local copy stays either way. A local copy that fails its verified read
// fails with that read's error (500 corrupt: it is quarantined).
func (r *Role) replicate(ctx context.Context, info store.Info, created, replica bool) (int, error) {
	if r.opt.Cluster == nil {
		return 0, nil
	}
	rf := r.Cfg.Load().ReplicationFactor
	if replica || requiredCopies(rf) < 2 {
		return 1, nil
	}
	p := newCopyPlan(r.opt.Cluster.View(), rf, info.ID)
	if p.alive < 2 {
		return 0, r.missingCopy(info.ID, "fewer than 2 alive storage members")
	}
	var held map[string]bool
	if !created {
		if held = r.askTargets(ctx, p.targets, info.ID); slices.Contains(slices.Collect(maps.Values(held)), true) {
			r.metrics.replicaCopy(copyExisting)
			r.queueRest(info, p, held, "")
			return requiredCopies(rf), nil
		}
	}
	to, err := r.syncCopy(ctx, info, p.order)
	if err != nil {
		return 0, err
	}
	r.queueRest(info, p, held, to)
	return requiredCopies(rf), nil
}

// copyPlan is where one object's copies go, seen from this node.
type copyPlan struct {
	rf      int
	alive   int              // |W|
	targets []cluster.Member // top(RF, W, x) without self, in choice order
	order   []cluster.Member // sync copy candidates: targets, then the rest of W by score
}

// newCopyPlan computes the plan for id over view v. Decided here: fallbacks
// try the other members of top(RF, W, x) first (zone spread kept), then the
// rest of W in score order; without zones this is plain score order.
func newCopyPlan(v *cluster.View, rf int, id store.ID) copyPlan {
	w := placement.Writable(v)
	p := copyPlan{rf: rf, alive: len(w)}
	seen := map[string]bool{v.Self: true}
	for _, m := range placement.Top(rf, w, id) {
		if !seen[m.ID] {
			seen[m.ID] = true
			p.targets = append(p.targets, m)
		}
	}
	p.order = append(p.order, p.targets...)
	for _, m := range placement.Ranked(w, id) {
		if !seen[m.ID] {
			seen[m.ID] = true
			p.order = append(p.order, m)
		}
	}
	return p
}

// askTargets asks each target whether it holds id (POST /inventory/has).
// A member that does not answer is left out (unknown).
func (r *Role) askTargets(ctx context.Context, targets []cluster.Member, id store.ID) map[string]bool {
	held := make(map[string]bool, len(targets))
	pc := r.peers()
	for _, m := range targets {
		base := m.URL(placement.Role)
		if base == "" {
			continue
		}
		got, err := pc.Has(ctx, base, []store.ID{id})
		if err != nil {
			r.Log.Debug().Err(err).Str("member", m.ID).Str("b3_prefix", id.Prefix()).Msg("inventory check failed")
			continue
		}
		held[m.ID] = got[id]
	}
	return held
}

// syncCopy pushes the local copy to the first of order that takes it, trying
// at most maxCopyTargets members with a storage URL, and returns that
// member's id.
func (r *Role) syncCopy(ctx context.Context, info store.Info, order []cluster.Member) (string, error) {
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
		existing, err := r.copyTo(ctx, base, info.ID)
		if err == nil {
			r.metrics.replicaCopy(map[bool]string{true: copyExisting, false: copyOK}[existing])
			return m.ID, nil
		}
		r.metrics.replicaCopy(copyFailed)
		if isLocalCopyError(err) || ctx.Err() != nil {
			return "", r.copyAborted(ctx, err)
		}
		r.Log.Debug().Err(err).Str("member", m.ID).Str("b3_prefix", info.ID.Prefix()).Msg("replica copy failed: trying the next member")
		last = err
	}
	r.Log.Warn().AnErr("last_error", last).Int("tried", tried).Str("b3_prefix", info.ID.Prefix()).
		Msg("second copy failed: the object stays here and repair will place it")
	return "", r.missingCopy(info.ID, "no storage member took the second copy")
}

// copyAborted maps a copy that cannot go on: the client went away (nothing
// is answered), or the local copy failed its read (its error answers).
func (r *Role) copyAborted(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return &errAborted{ctx.Err()}
	}
	var le *localCopyError
	if errors.As(err, &le) {
		return le.err
	}
	return err
}

// missingCopy is the 503 of docs/cluster.md §4 step 3.
func (r *Role) missingCopy(id store.ID, why string) error {
	r.Log.Debug().Str("b3_prefix", id.Prefix()).Str("why", why).Msg("write refused: one copy only")
	return httpx.NewError(http.StatusServiceUnavailable, httpx.CodeUpstreamUnavailable,
		"stored on this node only (%s): retry; repair places the second copy later", why).
		WithDetails(map[string]any{"copies": 1, "required": 2}).WithRetryAfter(2)
}

// queueRest queues the copies beyond Q for RF ≥ 3 (docs/cluster.md §4 step
// 4) on the normal repair lane (skipped when full: the next pass finds them).
func (r *Role) queueRest(info store.Info, p copyPlan, held map[string]bool, done string) {
	if rest := remainingTargets(p, held, done); len(rest) > 0 {
		r.queueRemaining(info.ID, info.Size, rest)
	}
}

// remainingTargets lists, for RF ≥ 3, the targets still to copy to: every
// member of top(RF, W, x) but self, the one that took the synchronous copy
// (done) and those known to hold x.
func remainingTargets(p copyPlan, held map[string]bool, done string) []string {
	if p.rf < 3 {
		return nil
	}
	var rest []string
	for _, m := range p.targets {
		if m.ID != done && !held[m.ID] {
			rest = append(rest, m.ID)
		}
	}
	return rest
}
