package cluster

import (
	"sync"
	"sync/atomic"
)

// Static is a Membership whose table is set by its owner (tests, tools): it
// notifies subscribers on every Set. It is safe for concurrent use.
type Static struct {
	view atomic.Pointer[View]
	subs subscribers
}

var _ Membership = (*Static)(nil)

// NewStatic returns a Static holding v.
func NewStatic(v *View) *Static {
	s := &Static{}
	s.view.Store(v)
	return s
}

// View implements Membership.
func (s *Static) View() *View { return s.view.Load() }

// Set replaces the table and signals every subscriber.
func (s *Static) Set(v *View) {
	s.view.Store(v)
	s.subs.notify()
}

// Subscribe implements Membership.
func (s *Static) Subscribe() (<-chan struct{}, func()) { return s.subs.add() }

// subscribers fans change signals out to coalescing channels of capacity 1.
type subscribers struct {
	mu   sync.Mutex
	next int
	chs  map[int]chan struct{}
}

func (s *subscribers) add() (<-chan struct{}, func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.chs == nil {
		s.chs = map[int]chan struct{}{}
	}
	id := s.next
	s.next++
	ch := make(chan struct{}, 1)
	s.chs[id] = ch
	return ch, func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		delete(s.chs, id)
	}
}

// notify signals every subscriber without blocking: a pending signal
// already covers this change.
func (s *subscribers) notify() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, ch := range s.chs {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}
