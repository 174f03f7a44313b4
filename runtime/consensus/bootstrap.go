package consensus

import (
	"cmp"
	"slices"

	"github.com/hashicorp/raft"
)

// Candidate is a server seen through gossip: its node id, its Raft
// address and whether it already holds Raft state.
type Candidate struct {
	ID, Addr string
	HasState bool
}

// BootstrapSet is the bootstrap_expect rule (docs/cluster.md §14): a server
// with no Raft state bootstraps only once it sees expect servers, itself
// included, none of which holds state; it then bootstraps with exactly the
// first expect of them in id order, so every one of them proposes the same
// configuration. ok is false while that is not (yet) the case, and always
// when any seen server already holds state (the group exists: wait to be
// added) or self is not among the chosen ones.
func BootstrapSet(self string, seen []Candidate, expect int) (servers []raft.Server, ok bool) {
	if expect < 1 || slices.ContainsFunc(seen, func(c Candidate) bool { return c.HasState }) {
		return nil, false
	}
	cs := slices.Clone(seen)
	slices.SortFunc(cs, func(a, b Candidate) int { return cmp.Compare(a.ID, b.ID) })
	cs = slices.CompactFunc(cs, func(a, b Candidate) bool { return a.ID == b.ID })
	if len(cs) < expect {
		return nil, false
	}
	cs = cs[:expect]
	if !slices.ContainsFunc(cs, func(c Candidate) bool { return c.ID == self }) {
		return nil, false
	}
	for _, c := range cs {
		servers = append(servers, raft.Server{Suffrage: raft.Voter, ID: raft.ServerID(c.ID), Address: raft.ServerAddress(c.Addr)})
	}
	return servers, true
}
