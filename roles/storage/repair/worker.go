package repair

import (
	"context"
	"fmt"
	"time"

	"github.com/ronhq/ron/runtime/cluster"
	"github.com/ronhq/ron/runtime/cluster/placement"
	"github.com/ronhq/ron/store"
)

// statTimeout bounds the local Stat of an object check.
const statTimeout = 10 * time.Second

// worker returns the task body of worker i: it drains the lanes, urgent
// first, until its context ends or a reload lowers K below i+1. No item's
// failure stops it.
func (r *Repairer) worker(i int) func(context.Context) error {
	return func(ctx context.Context) error {
		for !r.retire(i) {
			it, ok := r.lanes.next(ctx, r.reconfigured())
			if ok {
				r.execute(ctx, it)
			} else if ctx.Err() != nil {
				return nil
			}
		}
		return nil
	}
}

// retire reports whether worker i is beyond K; it is then marked stopped
// in the same critical section, so a concurrent Apply respawns it.
func (r *Repairer) retire(i int) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if i < r.cfg().Workers {
		return false
	}
	r.workers[i] = false
	return true
}

// execute runs one item and counts its outcome.
func (r *Repairer) execute(ctx context.Context, it Item) {
	defer r.lanes.release(it)
	switch it.Kind {
	case KindPush:
		existing, err := r.push(ctx, it)
		r.outcome(ctx, it.Kind, existing, err)
	case KindPull:
		r.outcome(ctx, it.Kind, false, r.pull(ctx, it.ID))
	case KindCheck:
		r.check(ctx, it.ID)
	}
}

func (r *Repairer) meter() Meter {
	return Meter{p: r.pacer, count: func(n int) {
		r.prog.addBytes(n)
		r.metrics.executed.Add(n)
	}}
}

// push copies the local object to the item's target, holding one of the
// target's repair_per_target slots.
func (r *Repairer) push(ctx context.Context, it Item) (existing bool, err error) {
	m, ok := r.members.View().Member(it.Target)
	base := m.URL(placement.Role)
	if !ok || !m.Alive() || base == "" {
		return false, Fail(ReasonTargetGone, fmt.Errorf("member %s is not an alive storage member", it.Target))
	}
	release, err := r.slots.acquire(ctx, it.Target, r.cfg().PerTarget)
	if err != nil {
		return false, err
	}
	defer release()
	return r.exec.Push(ctx, it.ID, base, r.meter())
}

// pull fetches id from another holder; this node is the transfer's target,
// so it takes one of its own slots.
func (r *Repairer) pull(ctx context.Context, id store.ID) error {
	v := r.members.View()
	release, err := r.slots.acquire(ctx, v.Self, r.cfg().PerTarget)
	if err != nil {
		return err
	}
	defer release()
	return r.exec.Pull(ctx, id, pullSources(v, r.cfg(), id), r.meter())
}

// pullSources are the storage URLs of the alive members of T other than
// self, then of the other alive storage members in score order.
func pullSources(v *cluster.View, cfg Config, id store.ID) []string {
	var out []string
	seen := map[string]bool{v.Self: true}
	add := func(ms []cluster.Member) {
		for _, m := range ms {
			if u := m.URL(placement.Role); !seen[m.ID] && m.Alive() && u != "" {
				seen[m.ID] = true
				out = append(out, u)
			}
		}
	}
	add(placement.Top(cfg.RF, placement.Repairable(v, cfg.RepairAfter, time.Now()), id))
	add(placement.Ranked(placement.Writable(v), id))
	return out
}

// check decides one object now, as urgent: missing copies are offered to
// the urgent lane (skipped when it is full), and a node of T that lacks the
// object pulls it in this worker.
func (r *Repairer) check(ctx context.Context, id store.ID) {
	cfg := r.cfg()
	sctx, cancel := context.WithTimeout(ctx, statTimeout)
	info, err := r.local.Stat(sctx, id)
	cancel()
	held := err == nil
	pl := newPlacer(r.members.View(), cfg, time.Now())
	o := pl.object(id, info.Size)
	ask := map[string][]store.ID{}
	pl.ask(ask, o)
	d := Decide(pl.input(o, held, r.askAll(ctx, pl.view, ask)))
	for _, t := range d.Push {
		r.offerCounted(Item{Kind: KindPush, ID: id, Size: o.size, Target: t, Urgent: true})
	}
	if d.Pull {
		it := Item{Kind: KindPull, ID: id, Urgent: true}
		if r.lanes.claim(it) {
			defer r.lanes.release(it)
			r.outcome(ctx, KindPull, false, r.pull(ctx, id))
		}
	}
}

// outcome counts one transfer in ron_repair_objects_total and the pass's
// errors. A transfer cut short by the role stopping is counted but is not
// an error of the pass.
func (r *Repairer) outcome(ctx context.Context, k Kind, existing bool, err error) {
	if err == nil {
		reason := ReasonCopied
		if existing {
			reason = ReasonExisting
		}
		r.metrics.objects(k, "ok", reason, 1)
		return
	}
	reason := ReasonOf(err)
	if ctx.Err() != nil {
		reason = ReasonCanceled
	} else {
		r.prog.fail(fmt.Errorf("%s: %w", k, err))
	}
	r.metrics.objects(k, "error", reason, 1)
	r.log.Debug().Err(err).Str("kind", k.String()).Str("reason", reason).Msg("repair transfer failed")
}
