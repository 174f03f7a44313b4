package ownership

import (
	"errors"
	"strings"

	"github.com/ronhq/ron/roles/index/indexapi"
	"github.com/ronhq/ron/runtime/cluster"
	"github.com/ronhq/ron/runtime/cluster/rendezvous"
	"github.com/ronhq/ron/store"
)

// View answers who owns which index record in one membership View
// (docs/cluster.md §6). Index members are the members with the index role;
// keys are raw object digests (ObjectKey) or rendezvous.NameKey (NameKey).
// The zero R owns nothing; build a View with Of.
type View struct {
	view *cluster.View
	r    int    // index_replicas (R)
	me   string // this node's id; "" = view.Self
}

// Of returns the ownership of view with r owners per key (index_replicas)
// for the node me ("" = the View's Self).
func Of(view *cluster.View, r int, me string) View { return View{view: view, r: r, me: me} }

// Self is this node's id.
func (o View) Self() string {
	if o.me != "" {
		return o.me
	}
	return o.view.Self
}

// Alive returns the alive index members, by id.
func (o View) Alive() []cluster.Member { return o.view.Alive(indexapi.RoleName) }

// Owners returns top(R, alive index members, key) in choice order (the
// first is the primary).
func (o View) Owners(key []byte) []cluster.Member {
	return o.members(rendezvous.Top(o.r, cluster.Candidates(o.Alive()), key))
}

// Primary returns the first alive owner of key.
func (o View) Primary(key []byte) (cluster.Member, bool) {
	ow := o.Owners(key)
	if len(ow) == 0 {
		return cluster.Member{}, false
	}
	return ow[0], true
}

// Owns reports whether this node is an owner of key.
func (o View) Owns(key []byte) bool { return ContainsID(o.Owners(key), o.Self()) }

// R is index_replicas: the owners of a key while enough members are alive.
func (o View) R() int { return o.r }

// Known returns the index members the View holds: alive, or departed
// within forget_after.
func (o View) Known() []cluster.Member { return o.view.WithRole(indexapi.RoleName) }

// REff is min(R, index members known: alive or departed within
// forget_after, which is what the View holds).
func (o View) REff() int { return min(o.r, len(o.Known())) }

// WIdx is the number of durable copies a write needs: min(2, R_eff), at
// least 1.
func (o View) WIdx() int { return max(1, min(2, o.REff())) }

// candidates are the peers a lookup of key asks (docs/cluster.md §6): the
// owners in score order, then the other alive index members in score
// order, this node excluded.
func (o View) candidates(key []byte) []cluster.Member {
	owners := o.Owners(key)
	var first, rest []rendezvous.Candidate
	for _, c := range rendezvous.Rank(cluster.Candidates(o.Alive()), key) {
		switch {
		case c.ID == o.Self():
		case ContainsID(owners, c.ID):
			first = append(first, c)
		default:
			rest = append(rest, c)
		}
	}
	return o.members(append(first, rest...))
}

// members maps candidates back to the View's members.
func (o View) members(cs []rendezvous.Candidate) []cluster.Member {
	out := make([]cluster.Member, 0, len(cs))
	for _, c := range cs {
		if m, ok := o.view.Member(c.ID); ok {
			out = append(out, m)
		}
	}
	return out
}

// ContainsID reports whether ms holds the member id.
func ContainsID(ms []cluster.Member, id string) bool {
	for _, m := range ms {
		if m.ID == id {
			return true
		}
	}
	return false
}

// WithoutID returns ms minus the member id (a new slice).
func WithoutID(ms []cluster.Member, id string) []cluster.Member {
	out := make([]cluster.Member, 0, len(ms))
	for _, m := range ms {
		if m.ID != id {
			out = append(out, m)
		}
	}
	return out
}

// NameKey is the rendezvous key of a name: BLAKE3("name:" + name).
func NameKey(name string) []byte { return rendezvous.NameKey(name) }

// ObjectKey is the rendezvous key of an object: its raw digest.
func ObjectKey(id store.ID) []byte { return id[:] }

// NameOf returns the name of key (a name or "name@version"), 400
// bad_request when malformed.
func NameOf(key string) (string, error) {
	if strings.Contains(key, "@") {
		n, _, err := indexapi.ParseNameVersion(key)
		if errors.Is(err, indexapi.ErrInvalid) {
			return "", indexapi.InvalidInput(err)
		}
		if err != nil {
			return "", err
		}
		return n, nil
	}
	if err := indexapi.CheckName(key); err != nil {
		return "", err
	}
	return key, nil
}
