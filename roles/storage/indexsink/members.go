package indexsink

import (
	"slices"
	"strings"

	"github.com/ronhq/ron/roles/index/indexapi"
	"github.com/ronhq/ron/roles/storage/announcing"
	"github.com/ronhq/ron/runtime/cluster"
	"github.com/ronhq/ron/runtime/cluster/rendezvous"
)

var _ announcing.IndexWatcher = (*Sink)(nil)

// memberTargets are the HTTP targets built from one membership view.
type memberTargets struct {
	view *cluster.View
	list []*target
}

// memberTargets returns the targets of the current view's alive index
// members, rebuilding them (reusing the clients of URLs kept) only when the
// view changed since the last call.
func (s *Sink) memberTargets() []*target {
	v := s.opt.Cluster.View()
	if cur := s.members.Load(); cur != nil && cur.view == v {
		return cur.list
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	cur := s.members.Load()
	if cur != nil && cur.view == v {
		return cur.list
	}
	var old []*target
	if cur != nil {
		old = cur.list
	}
	next := &memberTargets{view: v, list: s.rebuild(old, memberURLs(v, s.opt.Node))}
	s.members.Store(next)
	return next.list
}

// memberURLs lists the index URLs of v's alive index members in rendezvous
// order for this node's id: each storage node prefers its own member, which
// spreads announce load, and keeps it while the member lives. Members whose
// URL is missing or unusable are skipped.
func memberURLs(v *cluster.View, node string) []string {
	byID := map[string]string{}
	var cands []rendezvous.Candidate
	for _, m := range v.Alive(indexapi.RoleName) {
		u := strings.TrimRight(m.URL(indexapi.RoleName), "/")
		if u == "" || announcing.CheckIndexURL(u) != nil {
			continue
		}
		byID[m.ID] = u
		cands = append(cands, rendezvous.Candidate{ID: m.ID, Zone: m.Zone})
	}
	ranked := rendezvous.Rank(cands, rendezvous.NameKey(node))
	urls := make([]string, 0, len(ranked))
	for _, c := range ranked {
		if u := byID[c.ID]; !slices.Contains(urls, u) {
			urls = append(urls, u)
		}
	}
	return urls
}

// IndexChanges implements announcing.IndexWatcher: a channel signalled
// (coalescing) after any membership change, and its cancel. Without a
// cluster the channel is nil: it never fires.
func (s *Sink) IndexChanges() (<-chan struct{}, func()) {
	if s.opt.Cluster == nil {
		return nil, func() {}
	}
	return s.opt.Cluster.Subscribe()
}

// IndexMembers implements announcing.IndexWatcher: the alive index members
// as "id=url" pairs in id order, "" without a cluster. It changes exactly
// when an index member joins, departs or moves, which is when provider
// ownership moves (docs/cluster.md §6).
func (s *Sink) IndexMembers() string {
	if s.opt.Cluster == nil {
		return ""
	}
	return s.opt.Cluster.View().AliveKey(indexapi.RoleName)
}
