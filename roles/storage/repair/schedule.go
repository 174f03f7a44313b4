package repair

import (
	"time"

	"github.com/ronhq/ron/runtime/cluster"
	"github.com/ronhq/ron/runtime/cluster/placement"
)

// JoinDelay is how long after a storage member joins a pass starts
// (docs/cluster.md §5), so that a burst of joins costs one pass.
const JoinDelay = 10 * time.Second

// schedule decides when the next pass starts (docs/cluster.md §5): Interval
// after the previous pass ended; JoinDelay after the planner notices that a
// storage member (re)joined; at once when a departed storage member passes
// repair_after; at once on request. The engine's start counts as this node
// joining: the first pass waits max(Interval, JoinDelay), so that it does
// not act on a membership still filling in by gossip (it would push to
// members that only look like targets). It is owned by the planner goroutine.
type schedule struct {
	alive   map[string]time.Time // alive storage members at the last look → since
	crossed map[string]time.Time // departed member → the since whose crossing was handled
	lastEnd time.Time            // when the last pass ended (first: when the engine started)
	first   bool                 // no pass has run yet
	joinDue time.Time            // zero: no join pending
	depDue  time.Time            // zero: no departed member about to cross
	forced  bool
}

func newSchedule(v *cluster.View, now time.Time, repairAfter time.Duration) *schedule {
	s := &schedule{alive: aliveSince(v), crossed: map[string]time.Time{}, lastEnd: now, first: true}
	for _, m := range placement.Known(v) {
		if !m.Alive() && m.DepartedFor(now) >= repairAfter {
			s.crossed[m.ID] = m.Since
		}
	}
	return s
}

func aliveSince(v *cluster.View) map[string]time.Time {
	out := map[string]time.Time{}
	for _, m := range placement.Writable(v) {
		out[m.ID] = m.Since
	}
	return out
}

// observe takes in the view at now: members alive now that were not (or
// with another since) are joins, due JoinDelay after they joined or, when
// the planner notices later (it was busy in a pass), after now; departed
// members that have not crossed repair_after yet set depDue.
func (s *schedule) observe(v *cluster.View, now time.Time, repairAfter time.Duration) {
	alive := aliveSince(v)
	for id, since := range alive {
		if prev, ok := s.alive[id]; !ok || !prev.Equal(since) {
			s.joinDue = earliest(s.joinDue, later(since, now).Add(JoinDelay))
		}
	}
	s.alive = alive
	s.depDue = time.Time{}
	known := map[string]bool{}
	for _, m := range placement.Known(v) {
		known[m.ID] = true
		if m.Alive() {
			continue
		}
		if since, ok := s.crossed[m.ID]; ok && since.Equal(m.Since) {
			continue
		}
		s.depDue = earliest(s.depDue, m.Since.Add(repairAfter))
	}
	for id := range s.crossed {
		if !known[id] {
			delete(s.crossed, id)
		}
	}
}

// due is when the next pass starts, with the interval in force.
func (s *schedule) due(now time.Time, interval time.Duration) time.Time {
	if s.forced {
		return now
	}
	if s.first {
		interval = max(interval, JoinDelay)
	}
	return earliest(earliest(s.lastEnd.Add(interval), s.joinDue), s.depDue)
}

// begin records that a pass starts at now: the request, the joins and the
// crossings due by now are served by it.
func (s *schedule) begin(v *cluster.View, now time.Time, repairAfter time.Duration) {
	s.forced = false
	if !s.joinDue.IsZero() && !s.joinDue.After(now) {
		s.joinDue = time.Time{}
	}
	for _, m := range placement.Known(v) {
		if !m.Alive() && m.DepartedFor(now) >= repairAfter {
			s.crossed[m.ID] = m.Since
		}
	}
	s.depDue = time.Time{}
}

// ended records that the pass ended at now.
func (s *schedule) ended(now time.Time) { s.lastEnd, s.first = now, false }

// earliest returns the earlier of a and b, a zero time counting as none.
func earliest(a, b time.Time) time.Time {
	switch {
	case a.IsZero():
		return b
	case b.IsZero() || a.Before(b):
		return a
	}
	return b
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
