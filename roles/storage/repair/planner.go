package repair

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"golang.org/x/time/rate"

	"github.com/ronhq/ron/runtime"
	"github.com/ronhq/ron/runtime/cluster"
	"github.com/ronhq/ron/runtime/cluster/placement"
	"github.com/ronhq/ron/runtime/cluster/rendezvous"
	"github.com/ronhq/ron/store"
)

// Planner deadlines.
const (
	// listTimeout bounds one List of the local inventory.
	listTimeout = 30 * time.Second
	// hasTimeout bounds one POST /inventory/has to a member.
	hasTimeout = 10 * time.Second
	// dropTimeout bounds the deletion of one excess copy.
	dropTimeout = 10 * time.Second
)

// plan is the repair_planner task: passes on the schedule until ctx ends.
func (r *Repairer) plan(ctx context.Context) error {
	sig, cancel := r.members.Subscribe()
	defer cancel()
	s := newSchedule(r.members.View(), time.Now(), r.cfg().RepairAfter)
	for {
		cfg := r.cfg()
		s.observe(r.members.View(), time.Now(), cfg.RepairAfter)
		if wait := time.Until(s.due(time.Now(), cfg.Interval)); wait > 0 {
			if !r.sleep(ctx, wait, sig, s) {
				return nil
			}
			continue
		}
		s.begin(r.members.View(), time.Now(), cfg.RepairAfter)
		r.pass(ctx)
		if ctx.Err() != nil {
			return nil
		}
		s.ended(time.Now())
	}
}

// sleep waits for d, a membership change, a run request or a reload; it
// reports false when ctx ended.
func (r *Repairer) sleep(ctx context.Context, d time.Duration, sig <-chan struct{}, s *schedule) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-sig:
	case <-r.kick:
		s.forced = true
	case <-r.reconfigured():
	case <-ctx.Done():
		return false
	}
	return true
}

// pass walks the local inventory once in batches of repair_batch at no
// more than repair_scan_rate ids per second.
func (r *Repairer) pass(ctx context.Context) {
	cfg := r.cfg()
	start := time.Now()
	r.prog.begin(r.local.Count())
	r.metrics.passes.Inc()
	lim := rate.NewLimiter(rate.Limit(cfg.ScanRate), cfg.Batch)
	var after *store.ID
	for {
		infos, err := r.list(ctx, after, cfg.Batch)
		if err != nil {
			if ctx.Err() == nil {
				r.prog.fail(fmt.Errorf("list inventory: %w", err))
			}
			break
		}
		if len(infos) == 0 || lim.WaitN(ctx, len(infos)) != nil {
			break
		}
		r.batch(ctx, cfg, infos)
		if len(infos) < cfg.Batch || ctx.Err() != nil {
			break
		}
		after = &infos[len(infos)-1].ID
	}
	r.prog.end(time.Since(start))
}

func (r *Repairer) list(ctx context.Context, after *store.ID, n int) ([]store.Info, error) {
	lctx, cancel := context.WithTimeout(ctx, listTimeout)
	defer cancel()
	return r.local.List(lctx, after, n)
}

// batch decides every object of one batch: one Has per alive target member,
// then Decide and act for each object.
func (r *Repairer) batch(ctx context.Context, cfg Config, infos []store.Info) {
	pl := newPlacer(r.members.View(), cfg, time.Now())
	objs := make([]object, len(infos))
	ask := map[string][]store.ID{}
	for i, info := range infos {
		objs[i] = pl.object(info.ID, info.Size)
		pl.ask(ask, objs[i])
	}
	answers := r.askAll(ctx, pl.view, ask)
	for _, o := range objs {
		r.act(ctx, o, Decide(pl.input(o, true, answers)))
	}
}

// askAll sends one Has per member (in id order). A member that fails is
// absent from the result: its ids stay undecided, and the failure counts as
// one error of the pass.
func (r *Repairer) askAll(ctx context.Context, v *cluster.View, ask map[string][]store.ID) map[string]map[store.ID]bool {
	ids := make([]string, 0, len(ask))
	for id := range ask {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	out := make(map[string]map[store.ID]bool, len(ids))
	for _, id := range ids {
		if ctx.Err() != nil {
			break
		}
		got, err := r.has(ctx, v, id, ask[id])
		if err != nil {
			if ctx.Err() == nil {
				r.prog.fail(fmt.Errorf("inventory/has on %s: %w", id, err))
			}
			continue
		}
		out[id] = got
	}
	return out
}

func (r *Repairer) has(ctx context.Context, v *cluster.View, member string, ids []store.ID) (map[store.ID]bool, error) {
	m, _ := v.Member(member)
	base := m.URL(placement.Role)
	if base == "" {
		return nil, errors.New("no storage URL")
	}
	hctx, cancel := context.WithTimeout(ctx, hasTimeout)
	defer cancel()
	got, err := r.remote.Has(hctx, base, ids)
	if got == nil && err == nil {
		got = map[store.ID]bool{}
	}
	return got, err
}

// act queues the decision's pushes and drops a confirmed excess copy.
func (r *Repairer) act(ctx context.Context, o object, d Decision) {
	for _, t := range d.Push {
		r.planItem(ctx, Item{Kind: KindPush, ID: o.id, Size: o.size, Target: t, Urgent: d.Urgent})
	}
	kept := d.Excess
	if d.Drop && !r.lanes.busy(o.id) {
		kept = !r.drop(ctx, o.id)
	}
	r.prog.decided(d, kept)
}

// planItem queues one item: urgent ones wait for room with the pass
// context; a full normal lane skips the item (planned again next pass).
func (r *Repairer) planItem(ctx context.Context, it Item) {
	err := r.lanes.put(ctx, it)
	switch {
	case err == nil:
		r.queued(it.Size)
	case errors.Is(err, runtime.ErrBusy):
		r.skip(it.Size)
	}
}

// drop deletes an excess copy; it reports whether the copy is gone.
func (r *Repairer) drop(ctx context.Context, id store.ID) bool {
	dctx, cancel := context.WithTimeout(ctx, dropTimeout)
	defer cancel()
	if err := r.exec.Drop(dctx, id); err != nil {
		if ctx.Err() == nil {
			r.prog.fail(fmt.Errorf("drop excess %s: %w", id.Prefix(), err))
		}
		return false
	}
	r.log.Debug().Str("b3_prefix", id.Prefix()).Msg("repair: dropped a confirmed excess copy")
	return true
}

// placer computes T, L and the stability of one membership view.
type placer struct {
	view   *cluster.View
	self   string
	rf     int
	p, l   []cluster.Member
	now    time.Time
	after  time.Duration
	stable bool
	drop   bool
}

func newPlacer(v *cluster.View, cfg Config, now time.Time) *placer {
	return &placer{view: v, self: v.Self, rf: cfg.RF, now: now, after: cfg.RepairAfter,
		p: placement.Repairable(v, cfg.RepairAfter, now), l: placement.Known(v),
		stable: !now.Before(v.Changed.Add(cfg.RepairAfter)), drop: cfg.DropExcess}
}

// object is one object with its targets.
type object struct {
	id   store.ID
	size int64
	t    []cluster.Member // top(RF, P, x)
	lost bool             // top(RF, L, x) holds a member departed ≥ repair_after
}

func (p *placer) object(id store.ID, size int64) object {
	o := object{id: id, size: size, t: placement.Top(p.rf, p.p, id)}
	for _, m := range placement.Top(p.rf, p.l, id) {
		if !m.Alive() && m.DepartedFor(p.now) >= p.after {
			o.lost = true
		}
	}
	return o
}

// ask adds o's id to the questions for each alive member of its targets
// but self.
func (p *placer) ask(ask map[string][]store.ID, o object) {
	for _, m := range o.t {
		if m.ID != p.self && m.Alive() {
			ask[m.ID] = append(ask[m.ID], o.id)
		}
	}
}

// input builds Decide's input from the answers of askAll.
func (p *placer) input(o object, selfHolds bool, answers map[string]map[store.ID]bool) Input {
	in := Input{Self: p.self, SelfHolds: selfHolds, Lost: o.lost, DropExcess: p.drop, Stable: p.stable,
		T: make([]Target, len(o.t))}
	for i, m := range o.t {
		t := Target{ID: m.ID, Score: rendezvous.Score(m.ID, o.id[:]), Alive: m.Alive()}
		got, answered := answers[m.ID]
		switch {
		case m.ID == p.self:
			t.Holding = holding(selfHolds)
		case !m.Alive():
			t.Holding = Assumed
		case !answered:
			t.Holding = Unknown
		default:
			t.Holding = holding(got[o.id])
		}
		in.T[i] = t
	}
	return in
}
