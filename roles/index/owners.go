package index

import (
	"github.com/ronhq/ron/runtime/cluster"
	"github.com/ronhq/ron/runtime/cluster/rendezvous"
	"github.com/ronhq/ron/store"
)

// ownership answers who owns which index record in one membership View
// (docs/cluster.md §6). Index members are the members with the index role;
// keys are raw object digests (provider records) or rendezvous.NameKey
// (names).
type ownership struct {
	view *cluster.View
	r    int    // index_replicas (R)
	me   string // this node's id; "" = view.Self
}

// self is this node's id.
func (o ownership) self() string {
	if o.me != "" {
		return o.me
	}
	return o.view.Self
}

// alive returns the alive index members, by id.
func (o ownership) alive() []cluster.Member { return o.view.Alive(roleName) }

// owners returns top(R, alive index members, key) in choice order (the
// first is the primary).
func (o ownership) owners(key []byte) []cluster.Member {
	return o.members(rendezvous.Top(o.r, cluster.Candidates(o.alive()), key))
}

// primary returns the first alive owner of key.
func (o ownership) primary(key []byte) (cluster.Member, bool) {
	ow := o.owners(key)
	if len(ow) == 0 {
		return cluster.Member{}, false
	}
	return ow[0], true
}

// owns reports whether this node is an owner of key.
func (o ownership) owns(key []byte) bool { return containsID(o.owners(key), o.self()) }

// rEff is min(R, index members known: alive or departed within
// forget_after, which is what the View holds).
func (o ownership) rEff() int { return min(o.r, len(o.view.WithRole(roleName))) }

// wIdx is the number of durable copies a write needs: min(2, R_eff), at
// least 1.
func (o ownership) wIdx() int { return max(1, min(2, o.rEff())) }

// candidates are the peers a lookup of key asks (docs/cluster.md §6): the
// owners in score order, then the other alive index members in score
// order, this node excluded.
func (o ownership) candidates(key []byte) []cluster.Member {
	owners := o.owners(key)
	var first, rest []rendezvous.Candidate
	for _, c := range rendezvous.Rank(cluster.Candidates(o.alive()), key) {
		switch {
		case c.ID == o.self():
		case containsID(owners, c.ID):
			first = append(first, c)
		default:
			rest = append(rest, c)
		}
	}
	return o.members(append(first, rest...))
}

// members maps candidates back to the View's members.
func (o ownership) members(cs []rendezvous.Candidate) []cluster.Member {
	out := make([]cluster.Member, 0, len(cs))
	for _, c := range cs {
		if m, ok := o.view.Member(c.ID); ok {
			out = append(out, m)
		}
	}
	return out
}

// containsID reports whether ms holds the member id.
func containsID(ms []cluster.Member, id string) bool {
	for _, m := range ms {
		if m.ID == id {
			return true
		}
	}
	return false
}

// withoutID returns ms minus the member id (a new slice).
func withoutID(ms []cluster.Member, id string) []cluster.Member {
	out := make([]cluster.Member, 0, len(ms))
	for _, m := range ms {
		if m.ID != id {
			out = append(out, m)
		}
	}
	return out
}

// nameKey is the rendezvous key of a name: BLAKE3("name:" + name).
func nameKey(name string) []byte { return rendezvous.NameKey(name) }

// objectKey is the rendezvous key of an object: its raw digest.
func objectKey(id store.ID) []byte { return id[:] }
