package repair

import (
	"context"
	"errors"
	"sync"

	"github.com/ronhq/ron/runtime"
	"github.com/ronhq/ron/store"
)

// Kind is what a work item does.
type Kind uint8

// Kinds of work items.
const (
	// KindPush copies the local object to Target.
	KindPush Kind = iota
	// KindPull fetches the object from another holder (after a quarantine).
	KindPull
	// KindCheck decides one object now (admin POST /repair/object).
	KindCheck
)

// String is the kind's metric label: push, pull or check.
func (k Kind) String() string {
	switch k {
	case KindPush:
		return "push"
	case KindPull:
		return "pull"
	}
	return "check"
}

// Item is one unit of repair work.
type Item struct {
	Kind   Kind
	ID     store.ID
	Size   int64  // bytes to move (0 when unknown: pulls, checks)
	Target string // push: the member id that receives the copy
	Urgent bool
}

type itemKey struct {
	kind   Kind
	id     store.ID
	target string
}

func (it Item) key() itemKey { return itemKey{it.Kind, it.ID, it.Target} }

// Lane names (ron_queue_*{queue=…}).
const (
	LaneUrgent = "repair_urgent"
	LaneNormal = "repair"
)

// errDuplicate: the item is already queued or in flight.
var errDuplicate = errors.New("repair: item already pending")

// lanes are the two bounded queues plus the set of pending items (queued or
// in flight), which keeps a pass from queueing what an earlier pass still
// holds and sums the bytes pending.
type lanes struct {
	urgent, normal *runtime.Queue[Item]
	wake           chan struct{} // capacity 1: an item was queued

	mu      sync.Mutex
	pending map[itemKey]int64 // size
	bytes   int64
	objects map[store.ID]int // pending items per object
}

func newLanes(m *runtime.Metrics, role string, capacity int) *lanes {
	return &lanes{
		urgent:  runtime.NewQueue[Item](m, role, LaneUrgent, capacity, runtime.Block),
		normal:  runtime.NewQueue[Item](m, role, LaneNormal, capacity, runtime.Reject),
		wake:    make(chan struct{}, 1),
		pending: map[itemKey]int64{},
		objects: map[store.ID]int{},
	}
}

// claim marks it pending; false when it already was.
func (l *lanes) claim(it Item) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	k := it.key()
	if _, ok := l.pending[k]; ok {
		return false
	}
	l.pending[k] = it.Size
	l.bytes += it.Size
	l.objects[it.ID]++
	return true
}

// release ends it's pending state (done, failed or never queued).
func (l *lanes) release(it Item) {
	l.mu.Lock()
	defer l.mu.Unlock()
	k := it.key()
	size, ok := l.pending[k]
	if !ok {
		return
	}
	delete(l.pending, k)
	l.bytes -= size
	if l.objects[it.ID]--; l.objects[it.ID] <= 0 {
		delete(l.objects, it.ID)
	}
}

// busy reports whether any item for id is pending.
func (l *lanes) busy(id store.ID) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.objects[id] > 0
}

// pendingBytes is the size sum of the pending items.
func (l *lanes) pendingBytes() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.bytes
}

// put queues it: urgent items wait for room until ctx ends (the planner's
// pass context), normal items fail with runtime.ErrBusy when their lane is
// full. errDuplicate when it is already pending.
func (l *lanes) put(ctx context.Context, it Item) error {
	if !l.claim(it) {
		return errDuplicate
	}
	var err error
	if it.Urgent {
		err = l.urgent.Push(ctx, it)
	} else {
		_, _, err = l.normal.Offer(it)
	}
	if err != nil {
		l.release(it)
		return err
	}
	l.signal()
	return nil
}

// offer queues it without waiting on either lane (runtime.ErrBusy when
// full), for producers that must not block: hooks and handlers.
func (l *lanes) offer(it Item) error {
	if !l.claim(it) {
		return errDuplicate
	}
	q := l.normal
	if it.Urgent {
		q = l.urgent
	}
	if _, _, err := q.Offer(it); err != nil {
		l.release(it)
		return err
	}
	l.signal()
	return nil
}

func (l *lanes) signal() {
	select {
	case l.wake <- struct{}{}:
	default:
	}
}

// next returns the next item, urgent lane first, waiting until one is
// queued, ctx ends or stop is closed (then ok is false).
func (l *lanes) next(ctx context.Context, stop <-chan struct{}) (Item, bool) {
	for {
		if it, ok := l.urgent.TryPop(); ok {
			l.rewake()
			return it, true
		}
		if it, ok := l.normal.TryPop(); ok {
			l.rewake()
			return it, true
		}
		select {
		case <-l.wake:
		case <-ctx.Done():
			return Item{}, false
		case <-stop:
			return Item{}, false
		}
	}
}

// rewake passes the wake-up on while items remain, so that one signal for
// several queued items still reaches every idle worker.
func (l *lanes) rewake() {
	if l.urgent.Len()+l.normal.Len() > 0 {
		l.signal()
	}
}

// close stops both lanes: blocked pushes return runtime.ErrClosed.
func (l *lanes) close() {
	l.urgent.Close()
	l.normal.Close()
}
