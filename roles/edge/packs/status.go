package packs

import (
	"slices"
)

// Status is the Set's part of the edge's roles[].details in
// /api/v1/status (JSON).
type Status struct {
	Mounted   []MountedStatus   `json:"mounted"`
	Failed    map[string]string `json:"failed,omitempty"`  // name → error (readiness: missing)
	Skipped   map[string]string `json:"skipped,omitempty"` // name → error, with pack_errors = "skip"
	LastError string            `json:"last_error,omitempty"`
}

// MountedStatus describes one mounted pack.
type MountedStatus struct {
	Name  string `json:"name"`
	Kind  Kind   `json:"kind"`
	ID    string `json:"id"`
	Path  string `json:"path"`
	Bytes int64  `json:"bytes"`
}

// Status returns the mounted packs, the failed or skipped ones with their
// errors, and the last error (a failed replacement keeps its old version
// and shows only here).
func (s *Set) Status() Status {
	st := Status{Mounted: []MountedStatus{}}
	for _, p := range s.List() {
		st.Mounted = append(st.Mounted, MountedStatus{Name: p.name, Kind: p.kind, ID: p.id, Path: p.path, Bytes: p.Size()})
	}
	skip := s.options().skip()
	s.mu.Lock()
	defer s.mu.Unlock()
	for name, e := range s.entries {
		if e.failure == "" {
			continue
		}
		m := &st.Failed
		if skip {
			m = &st.Skipped
		}
		if *m == nil {
			*m = map[string]string{}
		}
		(*m)[name] = e.failure
	}
	st.LastError = s.lastErrorLocked()
	return st
}

// Missing returns "edge:pack:<name>" for every pack that failed to mount,
// sorted; none with pack_errors = "skip".
func (s *Set) Missing() []string {
	if s.options().skip() {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for name, e := range s.entries {
		if e.failure != "" {
			out = append(out, "edge:pack:"+name)
		}
	}
	slices.Sort(out)
	return out
}

// LastError is the most recent failure ("<pack>: <error>", or the packs
// folder's error), cleared once that pack mounts or the folder lists again.
func (s *Set) LastError() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lastErrorLocked()
}

func (s *Set) lastErrorLocked() string {
	if s.last.name == "" {
		return s.last.msg
	}
	return s.last.name + ": " + s.last.msg
}
