package packs

import (
	"errors"
	"maps"
)

// apply records the jobs' results under the lock, swaps the snapshot, and
// then (unlocked) logs and drops the references of the packs it replaced or
// unmounted.
func (s *Set) apply(jobs []*job, removed []string, opt Options) {
	if len(jobs) == 0 && len(removed) == 0 {
		return
	}
	var drop []*Pack
	var notes []func()
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		for _, j := range jobs {
			if j.pack != nil {
				j.pack.unref()
			}
		}
		return
	}
	cur := s.snap.Load().byName
	next := maps.Clone(cur)
	for _, name := range removed {
		if p := next[name]; p != nil {
			notes = append(notes, func() { s.log.Info().Str("pack", name).Msg("pack file removed; unmounted") })
			drop = append(drop, p)
			delete(next, name)
		}
		delete(s.entries, name)
	}
	for _, j := range jobs {
		d, note := s.settle(j, next, opt)
		drop, notes = append(drop, d...), append(notes, note)
	}
	if !sameValues(cur, next) {
		s.snap.Store(newSnapshot(next))
	}
	s.mu.Unlock()
	for _, note := range notes {
		note()
	}
	for _, p := range drop {
		p.unref()
	}
}

// sameValues reports whether a and b map every name to the same pack.
func sameValues(a, b map[string]*Pack) bool {
	return maps.EqualFunc(a, b, func(x, y *Pack) bool { return x == y })
}

// settle records one job's result in next and the entry; it returns the
// packs to drop and a log line to write once the lock is released.
func (s *Set) settle(j *job, next map[string]*Pack, opt Options) ([]*Pack, func()) {
	name := j.cand.name
	e := s.entries[name]
	old := next[name]
	switch {
	case e == nil:
		return packs(j.pack), func() {}
	case errors.Is(j.err, ErrChanged):
		return nil, func() {
			s.log.Info().Str("pack", name).Msg("pack file replaced while opening; retrying at the next polls")
		}
	case j.err == nil && j.reverify && old != nil && j.pack.id == old.id:
		old.reverified.Store(true)
		return packs(j.pack), func() {
			s.log.Warn().Str("pack", name).Msg("pack re-verified after a serving error and passed; still mounted")
		}
	case j.err == nil:
		return s.mounted(e, j, next, old)
	}
	e.path, e.applied, e.hasApplied, e.suspect = j.cand.path, j.st, j.opened, false
	s.last = lastError{name: name, msg: j.err.Error()}
	if old != nil && j.opened && !old.stat.sameFile(j.st) {
		s.count(name, "error")
		return nil, func() {
			s.log.Error().Str("pack", name).Err(j.err).Msg("replacement pack failed verification; keeping the old version")
		}
	}
	e.failure = j.err.Error()
	result := "error"
	if opt.skip() {
		result = "skipped"
	}
	s.count(name, result)
	delete(next, name)
	return packs(old), func() {
		s.log.Error().Str("pack", name).Str("result", result).Err(j.err).Msg("pack not mounted")
	}
}

// mounted installs a successfully opened pack.
func (s *Set) mounted(e *entry, j *job, next map[string]*Pack, old *Pack) ([]*Pack, func()) {
	p := j.pack
	next[p.name] = p
	e.path, e.applied, e.hasApplied, e.failure, e.suspect = j.cand.path, p.stat, true, "", false
	if s.last.name == p.name {
		s.last = lastError{}
	}
	s.count(p.name, "ok")
	return packs(old), func() {
		ev := s.log.Info().Str("pack", p.name).Str("kind", string(p.kind)).Str("id", p.id).Int64("bytes", p.Size())
		if old != nil {
			ev = ev.Str("old_id", old.id)
		}
		ev.Msg("pack mounted")
		for _, w := range p.warnings {
			s.log.Warn().Str("pack", p.name).Msg(w)
		}
	}
}

// packs returns p as a slice, empty for nil.
func packs(p *Pack) []*Pack {
	if p == nil {
		return nil
	}
	return []*Pack{p}
}

// count increments ron_edge_pack_mounts_total{pack,result}.
func (s *Set) count(name, result string) {
	s.m.Counter("edge_pack_mounts_total", "role", role, "pack", name, "result", result).Inc()
}
