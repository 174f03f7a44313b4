// Package gate holds the admission logic shared by the kv engines: the
// closed state, the single-writer slot acquired under a context, and Close
// waiting for running transactions.
package gate

import (
	"context"
	"sync"

	"github.com/ronhq/ron/store/kv"
)

// Gate admits transactions. The zero value is not usable; call New.
type Gate struct {
	mu      sync.Mutex
	idle    *sync.Cond // signalled when active drops to 0 while closing
	active  int        // admitted transactions, including waiting writers
	closing bool
	done    chan struct{} // closed when Close starts
	writer  chan struct{} // capacity 1: the single-writer slot
}

// New returns an open gate.
func New() *Gate {
	g := &Gate{done: make(chan struct{}), writer: make(chan struct{}, 1)}
	g.idle = sync.NewCond(&g.mu)
	return g
}

// Enter admits one transaction: ctx is checked first, then the closed state;
// a writer also waits for the writer slot under ctx (and gives up with
// kv.ErrClosed when Close starts). Enter never blocks on Close. On success
// the caller must call the returned release exactly once, when the
// transaction has ended.
func (g *Gate) Enter(ctx context.Context, write bool) (release func(), err error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if !g.admit() {
		return nil, kv.ErrClosed
	}
	if !write {
		return g.leave, nil
	}
	select {
	case g.writer <- struct{}{}:
	case <-ctx.Done():
		g.leave()
		return nil, ctx.Err()
	case <-g.done:
		g.leave()
		return nil, kv.ErrClosed
	}
	return func() { <-g.writer; g.leave() }, nil
}

func (g *Gate) admit() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closing {
		return false
	}
	g.active++
	return true
}

func (g *Gate) leave() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.active--
	if g.active == 0 && g.closing {
		g.idle.Broadcast()
	}
}

// Close refuses new transactions, wakes waiting writers and waits for
// running transactions to end. It reports true on the first call only, when
// the caller should release the engine; later calls wait like the first.
func (g *Gate) Close() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	first := !g.closing
	if first {
		g.closing = true
		close(g.done)
	}
	for g.active > 0 {
		g.idle.Wait()
	}
	return first
}
