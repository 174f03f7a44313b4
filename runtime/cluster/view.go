package cluster

import (
	"slices"
	"strings"
	"time"

	"github.com/ronhq/ron/runtime/cluster/rendezvous"
)

// State is a member's liveness as gossip sees it.
type State string

// Member states (docs/cluster.md §2): a departed member is dead (failed) or
// left (said goodbye).
const (
	StateAlive State = "alive"
	StateDead  State = "dead"
	StateLeft  State = "left"
)

// Member is one node of the membership table. Values are immutable once in a
// View: treat the slices and map as read-only.
type Member struct {
	ID    string
	Roles []string
	URLs  map[string]string // role → base URL (no trailing slash)
	Zone  string
	State State
	Since time.Time // when it entered State
	// Raft is the member's control-plane part; zero (no address) when it
	// takes no part in the control-plane group.
	Raft RaftMeta
}

// HasRole reports whether the member runs role.
func (m Member) HasRole(role string) bool { return slices.Contains(m.Roles, role) }

// URL returns the member's base URL for role ("" when it has none).
func (m Member) URL(role string) string { return m.URLs[role] }

// Alive reports whether the member is alive.
func (m Member) Alive() bool { return m.State == StateAlive }

// DepartedFor returns how long a dead or left member has been gone at now
// (0 for an alive member).
func (m Member) DepartedFor(now time.Time) time.Duration {
	if m.Alive() {
		return 0
	}
	return now.Sub(m.Since)
}

// View is an immutable snapshot of the membership table: readers get one
// through Membership.View and never see it change.
type View struct {
	// Self is this node's id; it is one of Members.
	Self string
	// Members are the allowed members known (alive, or departed less than
	// forget_after ago), sorted by ID.
	Members []Member
	// Changed is when any member last joined, changed state or metadata, or
	// was forgotten (the zero time for a table that never changed).
	Changed time.Time
}

// NewView builds a View, sorting members by id.
func NewView(self string, members []Member, changed time.Time) *View {
	ms := slices.Clone(members)
	slices.SortFunc(ms, func(a, b Member) int { return strings.Compare(a.ID, b.ID) })
	return &View{Self: self, Members: ms, Changed: changed}
}

// Member returns the member with id.
func (v *View) Member(id string) (Member, bool) {
	i, ok := slices.BinarySearchFunc(v.Members, id, func(m Member, id string) int { return strings.Compare(m.ID, id) })
	if !ok {
		return Member{}, false
	}
	return v.Members[i], true
}

// WithRole returns the members running role in any state, by id.
func (v *View) WithRole(role string) []Member {
	return v.filter(func(m Member) bool { return m.HasRole(role) })
}

// Alive returns the alive members running role, by id.
func (v *View) Alive(role string) []Member {
	return v.filter(func(m Member) bool { return m.Alive() && m.HasRole(role) })
}

// AliveOrDepartedWithin returns the members running role that are alive or
// departed less than d before now, by id (docs/cluster.md §3 sets P and L).
func (v *View) AliveOrDepartedWithin(role string, d time.Duration, now time.Time) []Member {
	return v.filter(func(m Member) bool { return m.HasRole(role) && (m.Alive() || m.DepartedFor(now) < d) })
}

// AliveURL returns whether the member serving role at base URL u is alive,
// and whether any member of the view serves role at u.
func (v *View) AliveURL(role, u string) (alive, known bool) {
	for _, m := range v.Members {
		if m.URL(role) == u {
			known = true
			if m.Alive() {
				return true, true
			}
		}
	}
	return false, known
}

// AliveKey renders the alive members running role as "id=url " pairs in
// id order: it changes exactly when such a member joins, departs or moves
// its URL, which is when ownership over them moves (change detection).
func (v *View) AliveKey(role string) string {
	var b strings.Builder
	for _, m := range v.Alive(role) {
		b.WriteString(m.ID + "=" + m.URL(role) + " ")
	}
	return b.String()
}

func (v *View) filter(keep func(Member) bool) []Member {
	var out []Member
	for _, m := range v.Members {
		if keep(m) {
			out = append(out, m)
		}
	}
	return out
}

// Candidates converts members to rendezvous candidates (id and zone).
func Candidates(ms []Member) []rendezvous.Candidate {
	out := make([]rendezvous.Candidate, len(ms))
	for i, m := range ms {
		out[i] = rendezvous.Candidate{ID: m.ID, Zone: m.Zone}
	}
	return out
}

// Membership is what roles read: the current table and change signals.
// *Cluster implements it over gossip, *Static for tests and single boxes.
type Membership interface {
	// View returns the current snapshot (never nil).
	View() *View
	// Subscribe returns a channel that receives a value after each change of
	// the table (signals coalesce: the channel holds at most one), and a
	// cancel function that stops the signals. The channel is never closed.
	Subscribe() (<-chan struct{}, func())
}
