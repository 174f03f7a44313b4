package registry

import "sync"

// signal broadcasts "something changed" to any number of waiters without
// blocking the broadcaster: a waiter takes changed() and waits on it (with
// its own ctx); broadcast closes that channel and arms a fresh one. The
// mutex guards only the channel swap.
type signal struct {
	mu sync.Mutex
	ch chan struct{}
}

func newSignal() *signal { return &signal{ch: make(chan struct{})} }

// changed returns a channel closed at the next broadcast.
func (s *signal) changed() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ch
}

// broadcast wakes every waiter of the current channel.
func (s *signal) broadcast() {
	s.mu.Lock()
	defer s.mu.Unlock()
	close(s.ch)
	s.ch = make(chan struct{})
}

// poke sends to a capacity-1 wake channel without blocking: a wake already
// pending absorbs this one.
func poke(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}
