package packs

import (
	"errors"
	"io/fs"
)

// plan decides, under the lock, what this poll does: names no longer found
// are removed; failures known without opening are recorded; changed files
// are opened once their stat is stable (at once when initial); suspect
// packs are re-verified.
func (s *Set) plan(cands map[string]candidate, stats map[string]statResult, initial bool) (jobs []*job, removed []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, nil
	}
	if s.last.name == "" {
		s.last = lastError{} // the folder listed fine
	}
	for name := range s.entries {
		if _, ok := cands[name]; !ok {
			removed = append(removed, name)
		}
	}
	for name, c := range cands {
		e := s.entries[name]
		if e == nil {
			e = &entry{}
			s.entries[name] = e
		}
		if j := s.planOne(e, c, stats[name], initial); j != nil {
			jobs = append(jobs, j)
		}
	}
	return jobs, removed
}

// planOne is plan for one name.
func (s *Set) planOne(e *entry, c candidate, sr statResult, initial bool) *job {
	if c.err == nil && sr.err != nil {
		if !c.listed && errors.Is(sr.err, fs.ErrNotExist) {
			return nil // removed since the listing: gone at the next poll
		}
		c.err = sr.err
	}
	if c.err != nil {
		if e.failure == c.err.Error() && e.path == c.path {
			return nil // already recorded
		}
		return &job{cand: c, err: c.err}
	}
	if e.hasApplied && e.path == c.path && e.applied == sr.st {
		e.hasPending = false
		if e.suspect {
			e.suspect = false
			return &job{cand: c, st: sr.st, reverify: true}
		}
		return nil
	}
	if initial || (e.hasPending && e.pendingPath == c.path && e.pending == sr.st) {
		e.hasPending = false
		return &job{cand: c, st: sr.st}
	}
	e.pending, e.pendingPath, e.hasPending = sr.st, c.path, true
	return nil
}
