package runtime

import "sync/atomic"

// Snapshot holds an immutable value behind an atomic pointer, swapped whole
// on reload. Readers Load without locks; the value must not be mutated
// after it is stored. Every Store bumps the version, starting from 1 for
// the value given to NewSnapshot.
type Snapshot[T any] struct {
	p atomic.Pointer[versioned[T]]
}

type versioned[T any] struct {
	v       *T
	version uint64
}

// NewSnapshot returns a snapshot holding v at version 1.
func NewSnapshot[T any](v *T) *Snapshot[T] {
	s := &Snapshot[T]{}
	s.p.Store(&versioned[T]{v: v, version: 1})
	return s
}

// Load returns the current value.
func (s *Snapshot[T]) Load() *T { return s.p.Load().v }

// LoadVersion returns the current value and its version, consistently.
func (s *Snapshot[T]) LoadVersion() (*T, uint64) {
	c := s.p.Load()
	return c.v, c.version
}

// Version returns the current version.
func (s *Snapshot[T]) Version() uint64 { return s.p.Load().version }

// Store replaces the value and returns its new version (previous + 1).
// Concurrent Stores are linearised; each gets a distinct version.
func (s *Snapshot[T]) Store(v *T) (version uint64) {
	for {
		old := s.p.Load()
		next := &versioned[T]{v: v, version: old.version + 1}
		if s.p.CompareAndSwap(old, next) {
			return next.version
		}
	}
}
