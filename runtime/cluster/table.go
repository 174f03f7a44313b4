package cluster

import (
	"bytes"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/rs/zerolog"
)

// entry is the table's record of one other node.
type entry struct {
	meta     Meta   // latest valid metadata (hasMeta)
	hasMeta  bool   // some metadata of the node was valid
	leaving  bool   // its latest valid metadata announced that it leaves
	raw      []byte // metadata bytes last received, valid or not
	addr     string // last known gossip address (host:port; "" when none was seen)
	state    State  // "" until the first event is applied
	since    time.Time
	unlisted bool // counted as unlisted in its current appearance
}

func (e *entry) alive() bool { return e.state == StateAlive }

func (e *entry) departed() bool { return e.state == StateDead || e.state == StateLeft }

// member returns the View entry for the node named id.
func (e *entry) member(id string) Member {
	if !e.hasMeta {
		return Member{ID: id, State: e.state, Since: e.since}
	}
	return e.meta.member(e.state, e.since)
}

// table is the membership table (docs/cluster.md §2). It is owned by one
// goroutine and not safe for concurrent use; it never sees this node, which
// the owner adds from the local metadata.
type table struct {
	self        string
	forgetAfter time.Duration
	allowListOn bool // the member allow list is on
	log         zerolog.Logger
	count       func(event string) // counts a member event

	entries map[string]*entry
	allowed map[string]bool // last registry answer (known)
	known   bool
}

func newTable(self string, forgetAfter time.Duration, allowListOn bool, log zerolog.Logger, count func(string)) *table {
	return &table{self: self, forgetAfter: forgetAfter, allowListOn: allowListOn, log: log, count: count, entries: map[string]*entry{}}
}

// apply records one memberlist event at now (and the node's gossip address
// when the event carries one). A join or update of a node not alive in the
// table is a join (logged at info when the node had departed: it is back),
// an update with new valid metadata an update; a leave, or metadata
// announcing the node leaves, is a departure (left when announced, else
// dead) of a node not yet departed.
func (t *table) apply(ev nodeEvent, now time.Time) {
	if ev.name == t.self {
		return
	}
	e := t.entries[ev.name]
	if e == nil {
		e = &entry{}
		t.entries[ev.name] = e
	}
	if ev.addr != "" {
		e.addr = ev.addr
	}
	updated := t.refresh(ev.name, e, ev.meta)
	switch {
	case ev.kind == evLeave || e.leaving:
		t.depart(e, ev.left || e.leaving, now)
	case !e.alive():
		if e.departed() {
			t.log.Info().Str("node", ev.name).Str("was", string(e.state)).Dur("away", now.Sub(e.since)).Msg("member is back")
		}
		e.state, e.since, e.unlisted = StateAlive, now, false
		t.count("join")
	case updated:
		t.count("update")
	}
}

// depart marks a node not yet departed as left (or dead) since now.
func (t *table) depart(e *entry, left bool, now time.Time) {
	if e.departed() {
		return
	}
	e.state, e.since, e.unlisted = StateDead, now, false
	if left {
		e.state = StateLeft
	}
	t.count(string(e.state))
}

// refresh decodes raw as name's metadata when it differs from the last
// received and reports whether valid new metadata was taken. Undecodable
// metadata (bad JSON, unknown version, another id) is logged and ignored:
// the node keeps its previous metadata, or none.
func (t *table) refresh(name string, e *entry, raw []byte) bool {
	if e.state != "" && bytes.Equal(e.raw, raw) {
		return false
	}
	e.raw = raw
	m, leaving, err := decodeMeta(raw)
	if err == nil && m.ID != name {
		err = fmt.Errorf("cluster metadata: id %q differs from the node name", m.ID)
	}
	if err != nil {
		t.log.Warn().Str("node", name).Err(err).Msg("ignoring node metadata")
		return false
	}
	e.meta, e.hasMeta, e.leaving = m, true, leaving
	return true
}

// setAllowList takes the registry's answer: with ok the ids listed as node
// items; without, the last answer stays (before any answer only this node
// is a member).
func (t *table) setAllowList(ids map[string]bool, ok bool) {
	if ok {
		t.allowed, t.known = maps.Clone(ids), true
	}
}

// allows reports whether the node named id may appear in the View.
func (t *table) allows(id string) bool {
	return !t.allowListOn || (t.known && t.allowed[id])
}

// forget drops nodes departed at least forget_after before now.
func (t *table) forget(now time.Time) {
	maps.DeleteFunc(t.entries, func(_ string, e *entry) bool { return t.forgotten(e, now) })
}

func (t *table) forgotten(e *entry, now time.Time) bool {
	return e.departed() && now.Sub(e.since) >= t.forgetAfter
}

// members returns self plus the allowed nodes not forgotten at now, by
// id. An alive node left out by a known registry answer is counted as
// unlisted once per appearance.
func (t *table) members(self Member, now time.Time) []Member {
	out := []Member{self}
	for _, id := range slices.Sorted(maps.Keys(t.entries)) {
		e := t.entries[id]
		if t.forgotten(e, now) {
			continue
		}
		if !t.allows(id) {
			t.unlisted(id, e)
			continue
		}
		e.unlisted = false
		out = append(out, e.member(id))
	}
	return out
}

// unlisted counts an alive node the registry does not list, once per
// appearance.
func (t *table) unlisted(id string, e *entry) {
	if !e.alive() || !t.known || e.unlisted {
		return
	}
	e.unlisted = true
	t.count("unlisted")
	t.log.Info().Str("node", id).Msg("member is not listed as a node in the registry; ignored")
}

// sameMembers reports whether two sorted member lists are equal.
func sameMembers(a, b []Member) bool {
	return slices.EqualFunc(a, b, func(x, y Member) bool {
		return x.ID == y.ID && x.State == y.State && x.Since.Equal(y.Since) && x.Zone == y.Zone &&
			slices.Equal(x.Roles, y.Roles) && maps.Equal(x.URLs, y.URLs) && x.Raft == y.Raft
	})
}
