// Package topology answers "where is role X, and how do I reach the next
// one" for every reader (docs/architecture.md §4, docs/cluster.md §7). Find
// is the one order — this process, then the configured URL, then the
// cluster's alive members — and Route holds its answer: one fixed value or
// a Pool. A Pool keeps one value (a link, a client) per alive member
// running a role, following the membership table, ranked for a key with
// the reader's zone first; Try calls them in that order until one answers,
// with ReadAgain and WriteAgain deciding which failures may go on to the
// next member.
package topology

import (
	"cmp"
	"context"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/rs/zerolog"

	"github.com/ronhq/ron/runtime/cluster"
	"github.com/ronhq/ron/runtime/cluster/rendezvous"
)

// Entry is one alive member's value in a Pool.
type Entry[T any] struct {
	ID, Zone string
	URL      string // the member's base URL for the pool's role, without a trailing slash
	Value    T
}

// IDs returns the member ids of es, in order.
func IDs[T any](es []Entry[T]) []string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = e.ID
	}
	return out
}

// PoolOptions configure NewPool.
type PoolOptions[T any] struct {
	// Membership is the table the pool follows (required).
	Membership cluster.Membership
	// Role selects the members: alive, running Role, with a URL for it.
	Role string
	// Zone is the reader's zone: its members rank first.
	Zone string
	// Build makes a member's value (a link, a client); it must do no I/O.
	// An error leaves the member out (logged) until the next change.
	Build func(id, url string) (T, error)
	// Retire releases a value the pool no longer hands out (nil: nothing to
	// do). Calls that already hold it may still use it.
	Retire func(T)
	// Log receives build failures.
	Log zerolog.Logger
}

// Pool holds one value per alive member running a role, built once per
// member (and again when its URL changes) and retired when the member is no
// longer alive. Run is its one owner goroutine: it alone builds and retires
// values; readers get immutable snapshots, so no lock is held by anyone.
type Pool[T any] struct {
	opt    PoolOptions[T]
	self   []byte // the default rank key: this reader's own
	cur    atomic.Pointer[[]Entry[T]]
	synced atomic.Pointer[chan struct{}] // closed by the next sync
}

// NewPool returns a pool holding the values of the current view's members.
// It does no I/O; Run keeps it current.
func NewPool[T any](opt PoolOptions[T]) *Pool[T] {
	p := &Pool[T]{opt: opt, self: []byte("reader:" + opt.Membership.View().Self)}
	p.cur.Store(&[]Entry[T]{})
	ch := make(chan struct{})
	p.synced.Store(&ch)
	p.sync(opt.Membership.View())
	return p
}

// Run follows membership changes until ctx ends, then retires every value
// (they stay in the pool: Retire must leave them usable) and returns nil.
// Call it once, from one goroutine.
func (p *Pool[T]) Run(ctx context.Context) error {
	ch, cancel := p.opt.Membership.Subscribe()
	defer cancel()
	p.sync(p.opt.Membership.View()) // a change between NewPool and Subscribe
	for {
		select {
		case <-ctx.Done():
			p.retire(*p.cur.Load())
			return nil
		case <-ch:
			p.sync(p.opt.Membership.View())
		}
	}
}

// Synced returns a channel closed once the pool has next been brought in
// line with the table (after the entries are in place). To wait for a
// condition on the entries: take Synced, check, then wait on it.
func (p *Pool[T]) Synced() <-chan struct{} { return *p.synced.Load() }

// WaitFor blocks until cond holds for the pool's entries, checked now and
// after every sync, and reports true; false when ctx ends first.
func (p *Pool[T]) WaitFor(ctx context.Context, cond func([]Entry[T]) bool) bool {
	for {
		synced := p.Synced()
		if cond(p.Entries()) {
			return true
		}
		select {
		case <-ctx.Done():
			return false
		case <-synced:
		}
	}
}

// Len returns the number of members in the pool.
func (p *Pool[T]) Len() int { return len(*p.cur.Load()) }

// Entries returns the pool's members by id (a snapshot: do not modify).
func (p *Pool[T]) Entries() []Entry[T] { return *p.cur.Load() }

// Ranked returns the pool's members in the order a reader tries them: the
// reader's zone first, then by rendezvous score of key (rendezvous.Score;
// nil key: the reader's own node id, so each reader has its own order and
// readers spread over the members), then by id.
func (p *Pool[T]) Ranked(key []byte) []Entry[T] {
	if key == nil {
		key = p.self
	}
	type ranked struct {
		e     Entry[T]
		other bool // not in the reader's zone
		score uint64
	}
	es := *p.cur.Load()
	rs := make([]ranked, len(es))
	for i, e := range es {
		rs[i] = ranked{e: e, other: e.Zone != p.opt.Zone, score: rendezvous.Score(e.ID, key)}
	}
	slices.SortFunc(rs, func(a, b ranked) int {
		if a.other != b.other {
			if a.other {
				return 1
			}
			return -1
		}
		if a.score != b.score {
			return cmp.Compare(b.score, a.score)
		}
		return cmp.Compare(a.e.ID, b.e.ID)
	})
	out := make([]Entry[T], len(rs))
	for i, r := range rs {
		out[i] = r.e
	}
	return out
}

// sync makes the pool match v: it keeps the values of members still alive
// at the same URL, builds those of new members and retires the others.
func (p *Pool[T]) sync(v *cluster.View) {
	old := *p.cur.Load()
	byID := make(map[string]Entry[T], len(old))
	for _, e := range old {
		byID[e.ID] = e
	}
	next := make([]Entry[T], 0, len(old))
	for _, m := range v.Alive(p.opt.Role) {
		u := strings.TrimSuffix(m.URL(p.opt.Role), "/")
		if u == "" {
			continue
		}
		if e, ok := byID[m.ID]; ok && e.URL == u {
			e.Zone = m.Zone
			next = append(next, e)
			delete(byID, m.ID)
			continue
		}
		val, err := p.opt.Build(m.ID, u)
		if err != nil {
			p.opt.Log.Warn().Err(err).Str("member", m.ID).Str("upstream", p.opt.Role).Msg("cluster member left out")
			continue
		}
		next = append(next, Entry[T]{ID: m.ID, Zone: m.Zone, URL: u, Value: val})
	}
	p.cur.Store(&next)
	gone := make([]Entry[T], 0, len(byID))
	for _, e := range old {
		if _, ok := byID[e.ID]; ok {
			gone = append(gone, e)
		}
	}
	p.retire(gone)
	ch := make(chan struct{})
	close(*p.synced.Swap(&ch))
}

// retire hands es' values to Retire.
func (p *Pool[T]) retire(es []Entry[T]) {
	if p.opt.Retire == nil {
		return
	}
	for _, e := range es {
		p.opt.Retire(e.Value)
	}
}
