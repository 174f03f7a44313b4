package replicate

import (
	"github.com/ronhq/ron/runtime/cluster"
	"github.com/ronhq/ron/runtime/cluster/placement"
	"github.com/ronhq/ron/store"
)

// Plan is where one object's copies go, seen from this node.
type Plan struct {
	RF      int              // the replication factor
	Alive   int              // |W|
	Targets []cluster.Member // top(RF, W, x) without self, in choice order
	Order   []cluster.Member // sync copy candidates: Targets, then the rest of W by score
}

// NewPlan computes the plan for id over view v with replication factor rf.
// Decided here: fallbacks try the other members of top(RF, W, x) first (zone spread kept), then the
// rest of W in score order; without zones this is plain score order.
func NewPlan(v *cluster.View, rf int, id store.ID) Plan {
	w := placement.Writable(v)
	p := Plan{RF: rf, Alive: len(w)}
	seen := map[string]bool{v.Self: true}
	for _, m := range placement.Top(rf, w, id) {
		if !seen[m.ID] {
			seen[m.ID] = true
			p.Targets = append(p.Targets, m)
		}
	}
	p.Order = append(p.Order, p.Targets...)
	for _, m := range placement.Ranked(w, id) {
		if !seen[m.ID] {
			seen[m.ID] = true
			p.Order = append(p.Order, m)
		}
	}
	return p
}

// remainingTargets lists, for RF ≥ 3, the targets still to copy to: every
// member of top(RF, W, x) but self, the one that took the synchronous copy
// (done) and those known to hold x.
func remainingTargets(p Plan, held map[string]bool, done string) []string {
	if p.RF < 3 {
		return nil
	}
	var rest []string
	for _, m := range p.Targets {
		if m.ID != done && !held[m.ID] {
			rest = append(rest, m.ID)
		}
	}
	return rest
}
