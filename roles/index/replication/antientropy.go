package replication

import (
	"context"
	"time"

	"github.com/ronhq/ron/roles/index/indexapi"
	"github.com/ronhq/ron/roles/index/indexdb"
	"github.com/ronhq/ron/roles/index/ownership"
	"github.com/ronhq/ron/runtime/cluster"
)

// AntiEntropySettle is how long after an index membership change the
// anti-entropy pass runs (docs/cluster.md §6).
const AntiEntropySettle = 10 * time.Second

// storeTimeout bounds one store transaction of a pass.
const storeTimeout = 2 * time.Second

// AntiEntropy schedules the task index_antientropy (docs/cluster.md §6):
// Pass every Interval (read again after each pass, so a reload applies
// from the next one), and once Settle after the alive index members of
// Membership changed (changes during the wait do not postpone it).
type AntiEntropy struct {
	Interval   func() time.Duration
	Settle     time.Duration
	Membership cluster.Membership
	Pass       func(ctx context.Context)
}

// Run schedules passes until ctx ends; it returns nil.
func (a AntiEntropy) Run(ctx context.Context) error {
	changes, unsubscribe := a.Membership.Subscribe()
	defer unsubscribe()
	last := a.Membership.View().AliveKey(indexapi.RoleName)
	tick := time.NewTimer(a.Interval())
	defer tick.Stop()
	settle := time.NewTimer(a.Settle)
	settle.Stop()
	defer settle.Stop()
	waiting := false
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-changes:
			k := a.Membership.View().AliveKey(indexapi.RoleName)
			if k == last {
				continue
			}
			last = k
			if !waiting {
				settle.Reset(a.Settle)
				waiting = true
			}
		case <-settle.C:
			waiting = false
			a.Pass(ctx)
			tick.Reset(a.Interval())
		case <-tick.C:
			a.Pass(ctx)
			tick.Reset(a.Interval())
		}
	}
}

// AntiEntropyPass pushes every current name record of this node, 1000 per
// call, to the owners that should hold it (POST /replica/names), and drops
// the copy of a name this node does not own once all R_eff owners
// confirmed it. It returns how many records the owners took and how many
// names were dropped; a failing call leaves its records for the next pass.
func (n *Node) AntiEntropyPass(ctx context.Context) (pushed, dropped int, err error) {
	after := ""
	for {
		sctx, cancel := context.WithTimeout(ctx, storeTimeout)
		page, err := n.db.ScanNames(sctx, after, indexdb.MaxReplicaBatch)
		cancel()
		if err != nil || len(page) == 0 {
			return pushed, dropped, err
		}
		p, d := n.syncNames(ctx, page)
		pushed, dropped = pushed+p, dropped+d
		if len(page) < indexdb.MaxReplicaBatch {
			return pushed, dropped, nil
		}
		after = page[len(page)-1].Name
	}
}

// syncNames pushes one page of records to their owners and drops the
// confirmed copies of names this node does not own.
func (n *Node) syncNames(ctx context.Context, page []indexdb.Record) (pushed, dropped int) {
	own := n.ownership()
	owners := make([][]cluster.Member, len(page))
	groups := map[string][]int{}
	for i, rec := range page {
		owners[i] = own.Owners(ownership.NameKey(rec.Name))
		for _, m := range owners[i] {
			if m.ID != own.Self() {
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
	for i, ok := range n.fanOut(ctx, ids, PathReplicaNames, bodies) {
		if ok {
			count(confirmed, groups[ids[i]])
			pushed += len(groups[ids[i]])
		}
	}
	n.pushed(pushed)
	for i, rec := range page {
		if ownership.ContainsID(owners[i], own.Self()) || len(owners[i]) < own.REff() || confirmed[i] < len(owners[i]) {
			continue
		}
		if n.dropName(ctx, rec) {
			dropped++
		}
	}
	return pushed, dropped
}

// dropName drops this node's copy of rec's name if it is still rec.
func (n *Node) dropName(ctx context.Context, rec indexdb.Record) bool {
	dctx, cancel := context.WithTimeout(ctx, storeTimeout)
	defer cancel()
	ok, err := n.db.DropName(dctx, rec)
	if ok && err == nil {
		n.local.InvalidateName(rec.Name)
	}
	return ok && err == nil
}
