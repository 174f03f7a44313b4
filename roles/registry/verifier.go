package registry

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"github.com/ronhq/ron/roles/registry/segment"
	"github.com/ronhq/ron/roles/registry/tiles"
	"github.com/ronhq/ron/runtime"
)

// maxSliceVersions ends a slice after this many versions even when the
// clock has not moved (a fake clock).
const maxSliceVersions = 256

// slicePause is the pause after a slice as a multiple of its length: 4
// keeps the verifier at ≤ 20 % of a core (docs/registry.md §6). Tests of other things
// set it to 0 before starting a role.
var slicePause = 4

// verifier is the deep verifier (worker registry-verifier, docs/registry.md §6): a
// full pass from min_index over everything the checkpoint covers at start
// and every verify_full_interval, and incremental checks of each new
// checkpoint and the versions it newly covers. Work runs in slices of at
// most verify_slice, each followed by a pause four times as long.
type verifier struct {
	log      *segment.Log
	tree     *tiles.Tree
	cfg      func() Config
	now      func() time.Time
	met      roleMetrics
	logger   zerolog.Logger
	fail     func(*mismatch) // the role's verify_failed handler
	wake     chan struct{}   // capacity 1: a new checkpoint was published
	progress *signal         // broadcast after every pass and incremental step

	// Owned by the verifier goroutine.
	next      uint64 // first version not yet checked incrementally
	prev      *link  // link of version next−1 (nil: next is the anchor)
	checkedCP uint64 // size of the last checkpoint checked
	broken    bool   // a check failed: the verified prefix stops growing

	through     atomic.Int64 // every version in [min_index, through] passed in this process; -1 = none
	passStarted atomic.Int64 // unix ns of the current or last full pass; 0 = none yet
}

func newVerifier(log *segment.Log, tree *tiles.Tree, cfg func() Config, met roleMetrics, fail func(*mismatch)) *verifier {
	v := &verifier{log: log, tree: tree, cfg: cfg, now: time.Now, met: met, fail: fail,
		wake: make(chan struct{}, 1), progress: newSignal()}
	v.through.Store(-1)
	return v
}

// Through returns the last version of the verified prefix ([min_index,
// through], checked in this process without a failure), -1 for none.
func (v *verifier) Through() int64 { return v.through.Load() }

// notify asks for an incremental step without blocking.
func (v *verifier) notify() { poke(v.wake) }

// run is the registry-verifier worker.
func (v *verifier) run(ctx context.Context) error {
	v.fullPass(ctx)
	for ctx.Err() == nil {
		due := time.Unix(0, v.passStarted.Load()).Add(v.cfg().VerifyFullInterval)
		t := time.NewTimer(max(due.Sub(v.now()), 0))
		select {
		case <-ctx.Done():
		case <-v.wake:
			v.incremental(ctx)
		case <-t.C:
			v.fullPass(ctx)
		}
		t.Stop()
	}
	return nil
}

// fullPass checks the published checkpoint and every version from
// min_index to its size − 1.
func (v *verifier) fullPass(ctx context.Context) {
	v.passStarted.Store(v.now().UnixNano())
	size := v.tree.Size()
	v.checkpoint(size)
	prev, done := v.verifyRange(ctx, v.log.MinIndex(), size, nil)
	if done && size >= v.next {
		v.next, v.prev = size, prev
	}
	v.progress.broadcast()
}

// incremental checks a new checkpoint and the versions it newly covers.
func (v *verifier) incremental(ctx context.Context) {
	size := v.tree.Size()
	if size > v.checkedCP {
		v.checkpoint(size)
	}
	if lo := v.log.MinIndex(); v.next < lo {
		v.next, v.prev = lo, nil
	}
	if prev, done := v.verifyRange(ctx, v.next, size, v.prev); done {
		v.next, v.prev = size, prev
	}
	v.progress.broadcast()
}

// checkpoint checks the published checkpoint (signature and root).
func (v *verifier) checkpoint(size uint64) {
	m, err := checkCheckpoint(v.tree)
	switch {
	case m != nil:
		v.report(m)
	case err != nil:
		v.logger.Warn().Err(err).Msg("deep verifier: checkpoint check did not run")
	}
	v.checkedCP = max(v.checkedCP, size)
}

// verifyRange checks versions [from, end) in slices, prev being the link
// of from−1 (nil at the anchor). It returns the last link and whether the
// range was finished (false: ctx ended or the log refused a read that is
// no verdict, e.g. a version pruned meanwhile).
func (v *verifier) verifyRange(ctx context.Context, from, end uint64, prev *link) (*link, bool) {
	sl := newSlicer(v.cfg().VerifySlice, v.now, v.met)
	defer sl.finish()
	for ver := from; ver < end; ver++ {
		rec, err := v.log.Read(ver)
		var m *mismatch
		switch {
		case err == nil:
			prev, m = checkRecord(ver, rec.Artifact, prev, v.tree)
		case readFailure(ver, err) != nil:
			prev, m = nil, readFailure(ver, err)
		default: // not a verdict on the chain
			v.logger.Warn().Err(err).Uint64("version", ver).Msg("deep verifier: read failed; pass cut short")
			return prev, false
		}
		if m != nil {
			v.report(m)
		} else if !v.broken && int64(ver) > v.through.Load() {
			v.through.Store(int64(ver))
		}
		if !sl.tick(ctx) {
			return prev, false
		}
	}
	return prev, true
}

// report records a mismatch: the verified prefix ends before it and the
// role turns write-unready (verify_failed).
func (v *verifier) report(m *mismatch) {
	v.broken = true
	if int64(m.version)-1 < v.through.Load() {
		v.through.Store(int64(m.version) - 1)
	}
	v.fail(m)
}

// slicer cuts verification work into slices of at most budget, each
// followed by a pause four times as long (≤ 20 % of a core), and records
// each slice in ron_audit_chain_verify_seconds.
type slicer struct {
	budget time.Duration
	now    func() time.Time
	met    roleMetrics
	start  time.Time
	n      int
}

func newSlicer(budget time.Duration, now func() time.Time, met roleMetrics) *slicer {
	return &slicer{budget: budget, now: now, met: met, start: now()}
}

// tick counts one unit of work; when the slice is spent it records it and
// pauses. It reports false when ctx ended.
func (s *slicer) tick(ctx context.Context) bool {
	s.n++
	spent := s.now().Sub(s.start)
	if spent < s.budget && s.n < maxSliceVersions {
		return true
	}
	s.met.verifySlice(spent.Seconds())
	if pause := time.Duration(slicePause) * spent; pause > 0 && !runtime.Sleep(ctx, pause) {
		return false
	}
	s.start, s.n = s.now(), 0
	return ctx.Err() == nil
}

// finish records the last, partial slice.
func (s *slicer) finish() {
	if s.n > 0 {
		s.met.verifySlice(s.now().Sub(s.start).Seconds())
	}
}
