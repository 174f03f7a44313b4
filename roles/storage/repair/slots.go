package repair

import (
	"context"
	"sync"
)

// slots limit concurrent transfers per target (repair_per_target). The
// limit is read at each acquire, so a reload applies to the next transfer.
type slots struct {
	mu      sync.Mutex
	busy    map[string]int
	changed chan struct{} // closed and replaced at every release
}

func newSlots() *slots { return &slots{busy: map[string]int{}, changed: make(chan struct{})} }

// acquire waits until target has fewer than limit transfers, or ctx ends.
// The caller calls release once the transfer is over.
func (s *slots) acquire(ctx context.Context, target string, limit int) (release func(), err error) {
	for {
		s.mu.Lock()
		if s.busy[target] < limit {
			s.busy[target]++
			s.mu.Unlock()
			return func() { s.release(target) }, nil
		}
		ch := s.changed
		s.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

func (s *slots) release(target string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.busy[target]--; s.busy[target] <= 0 {
		delete(s.busy, target)
	}
	close(s.changed)
	s.changed = make(chan struct{})
}
