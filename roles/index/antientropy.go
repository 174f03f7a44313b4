package index

import (
	"context"
	"time"

	"github.com/ronhq/ron/roles/index/indexdb"
	"github.com/ronhq/ron/runtime/cluster"
)

// antiEntropySettle is how long after an index membership change the
// anti-entropy pass runs (docs/cluster.md §6).
const antiEntropySettle = 10 * time.Second

// antiEntropy is the task index_antientropy (docs/cluster.md §6): a pass
// every interval (read again after each pass, so a reload applies from the
// next one), and one settle after the index membership changed (changes
// during the wait do not postpone it).
type antiEntropy struct {
	interval func() time.Duration
	settle   time.Duration
	mem      cluster.Membership
	pass     func(ctx context.Context)
}

// run schedules passes until ctx ends.
func (a antiEntropy) run(ctx context.Context) error {
	changes, unsubscribe := a.mem.Subscribe()
	defer unsubscribe()
	last := a.mem.View().AliveKey(roleName)
	tick := time.NewTimer(a.interval())
	defer tick.Stop()
	settle := time.NewTimer(a.settle)
	settle.Stop()
	defer settle.Stop()
	waiting := false
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-changes:
			k := a.mem.View().AliveKey(roleName)
			if k == last {
				continue
			}
			last = k
			if !waiting {
				settle.Reset(a.settle)
				waiting = true
			}
		case <-settle.C:
			waiting = false
			a.pass(ctx)
			tick.Reset(a.interval())
		case <-tick.C:
			a.pass(ctx)
			tick.Reset(a.interval())
		}
	}
}

// antiEntropyPass pushes every current name record of this node, 1000 per
// call, to the owners that should hold it (POST /replica/names), and drops
// the copy of a name this node does not own once all R_eff owners
// confirmed it. It returns how many records the owners took and how many
// names were dropped; a failing call leaves its records for the next pass.
func (h *Handlers) antiEntropyPass(ctx context.Context) (pushed, dropped int, err error) {
	after := ""
	for {
		sctx, cancel := context.WithTimeout(ctx, dbTimeout)
		page, err := h.db.ScanNames(sctx, after, indexdb.MaxReplicaBatch)
		cancel()
		if err != nil || len(page) == 0 {
			return pushed, dropped, err
		}
		p, d := h.syncNames(ctx, page)
		pushed, dropped = pushed+p, dropped+d
		if len(page) < indexdb.MaxReplicaBatch {
			return pushed, dropped, nil
		}
		after = page[len(page)-1].Name
	}
}

// syncNames pushes one page of records to their owners and drops the
// confirmed copies of names this node does not own.
func (h *Handlers) syncNames(ctx context.Context, page []indexdb.Record) (pushed, dropped int) {
	own := h.cl.ownership()
	owners := make([][]cluster.Member, len(page))
	groups := map[string][]int{}
	for i, rec := range page {
		owners[i] = own.owners(nameKey(rec.Name))
		for _, m := range owners[i] {
			if m.ID != own.self() {
				groups[m.ID] = append(groups[m.ID], i)
			}
		}
	}
	confirmed := make([]int, len(page))
	ids := make([]string, 0, len(groups))
	bodies := make([][]byte, 0, len(groups))
	for id, idx := range groups {
		body, err := indexdb.EncodeReplicaNames(pick(page, idx))
		if err != nil {
			continue
		}
		ids, bodies = append(ids, id), append(bodies, body)
	}
	for i, ok := range h.cl.fanOut(ctx, ids, pathReplicaNames, bodies) {
		if ok {
			count(confirmed, groups[ids[i]])
			pushed += len(groups[ids[i]])
		}
	}
	h.cl.pushed(pushed)
	for i, rec := range page {
		if containsID(owners[i], own.self()) || len(owners[i]) < own.rEff() || confirmed[i] < len(owners[i]) {
			continue
		}
		if h.dropName(ctx, rec) {
			dropped++
		}
	}
	return pushed, dropped
}

// dropName drops this node's copy of rec's name if it is still rec.
func (h *Handlers) dropName(ctx context.Context, rec indexdb.Record) bool {
	dctx, cancel := context.WithTimeout(ctx, dbTimeout)
	defer cancel()
	ok, err := h.db.DropName(dctx, rec)
	if ok && err == nil {
		h.invalidateName(rec.Name)
	}
	return ok && err == nil
}
