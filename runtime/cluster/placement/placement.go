// Package placement applies rendezvous placement to storage members
// (docs/cluster.md §3): the candidate sets W, P and L over a membership View
// and top(n, S, x) for an object id.
package placement

import (
	"time"

	"github.com/ronhq/ron/runtime/cluster"
	"github.com/ronhq/ron/runtime/cluster/rendezvous"
	"github.com/ronhq/ron/store"
)

// Role is the role name storage members carry in their metadata.
const Role = "storage"

// Writable is W: the alive storage members (writes, reads).
func Writable(v *cluster.View) []cluster.Member { return v.Alive(Role) }

// Repairable is P: W plus storage members departed less than repairAfter
// before now (a short absence moves nothing).
func Repairable(v *cluster.View, repairAfter time.Duration, now time.Time) []cluster.Member {
	return v.AliveOrDepartedWithin(Role, repairAfter, now)
}

// Known is L: every storage member the view remembers (alive, or departed
// less than forget_after ago: the table forgets older ones).
func Known(v *cluster.View) []cluster.Member { return v.WithRole(Role) }

// Top is top(n, ms, id): the members chosen for id, zone spread first, in
// choice order.
func Top(n int, ms []cluster.Member, id store.ID) []cluster.Member {
	return pick(ms, rendezvous.Top(n, cluster.Candidates(ms), id[:]))
}

// Ranked returns ms in score order for id (no zone spread): the order in
// which fallback targets are tried.
func Ranked(ms []cluster.Member, id store.ID) []cluster.Member {
	return pick(ms, rendezvous.Rank(cluster.Candidates(ms), id[:]))
}

// pick maps candidates chosen among ms back to their members, in order.
func pick(ms []cluster.Member, cs []rendezvous.Candidate) []cluster.Member {
	byID := make(map[string]cluster.Member, len(ms))
	for _, m := range ms {
		byID[m.ID] = m
	}
	out := make([]cluster.Member, len(cs))
	for i, c := range cs {
		out[i] = byID[c.ID]
	}
	return out
}

// IDs returns the ids of ms in order.
func IDs(ms []cluster.Member) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.ID
	}
	return out
}
