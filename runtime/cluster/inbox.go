package cluster

import (
	"bytes"
	"maps"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/hashicorp/memberlist"
)

// inboxCapacity bounds the event channel between memberlist's delegates and
// the table owner.
const inboxCapacity = 1024

// eventKind is what memberlist reported about a node.
type eventKind int

const (
	evJoin eventKind = iota + 1
	evUpdate
	evLeave
)

// nodeEvent is one memberlist notification, copied out of memberlist's
// locks: the node's name, its metadata, its gossip address and whether
// memberlist reported it left (Node.State == StateLeft; memberlist v0.7.0
// never fills Node.State, so in practice the leaving announcement in the
// metadata tells left from dead).
type nodeEvent struct {
	kind eventKind
	name string
	meta []byte
	addr string // host:port of the node's gossip listener; "" when unknown
	left bool
}

// inbox carries events from memberlist's delegates (which run under
// memberlist's node lock and must not block) to the one table owner. Events
// go through a bounded FIFO; when it is full they spill into a map holding
// the latest event per node (bounded by the nodes memberlist knows), and
// every later event spills too until the owner has taken the map, so the
// owner sees each node's events in order. Spilled events of one node
// coalesce: the table then sees the node's latest state, and event counters
// may miss intermediate transitions.
type inbox struct {
	ch     chan nodeEvent
	signal chan struct{} // capacity 1: something spilled

	mu    sync.Mutex // guards spill; held only for map operations
	spill map[string]nodeEvent
}

func newInbox(capacity int) *inbox {
	return &inbox{ch: make(chan nodeEvent, capacity), signal: make(chan struct{}, 1)}
}

// put queues ev without blocking.
func (b *inbox) put(ev nodeEvent) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.spill) == 0 {
		select {
		case b.ch <- ev:
			return
		default:
		}
	}
	if b.spill == nil {
		b.spill = map[string]nodeEvent{}
	}
	b.spill[ev.name] = coalesce(b.spill[ev.name], ev)
	select {
	case b.signal <- struct{}{}:
	default:
	}
}

// coalesce merges a node's spilled event prev with the newer ev: the latest
// state wins, and a join followed by updates stays a join.
func coalesce(prev, ev nodeEvent) nodeEvent {
	if prev.kind == evJoin && ev.kind == evUpdate {
		ev.kind = evJoin
	}
	return ev
}

// drain hands every queued event to apply, the FIFO first (it holds only
// events older than any spilled one), then the spilled ones by node name.
func (b *inbox) drain(apply func(nodeEvent)) {
	for drained := false; !drained; {
		select {
		case ev := <-b.ch:
			apply(ev)
		default:
			drained = true
		}
	}
	b.mu.Lock()
	spilled := b.spill
	b.spill = nil
	b.mu.Unlock()
	for _, name := range slices.Sorted(maps.Keys(spilled)) {
		apply(spilled[name])
	}
}

// delegate implements memberlist's Delegate, EventDelegate and
// ConflictDelegate for one Cluster. memberlist calls these synchronously,
// partly under its node lock: they copy what they need and return at once.
type delegate struct {
	c *Cluster
}

var (
	_ memberlist.Delegate         = delegate{}
	_ memberlist.EventDelegate    = delegate{}
	_ memberlist.ConflictDelegate = delegate{}
)

// NodeMeta returns the encoded local metadata (validated ≤ MaxMetaSize),
// with the leaving announcement once Stop has begun.
func (d delegate) NodeMeta(limit int) []byte {
	lm := d.c.local.Load()
	raw := lm.raw
	if d.c.leaving.Load() && lm.leaving != nil {
		raw = lm.leaving
	}
	if len(raw) > limit {
		return nil
	}
	return slices.Clone(raw)
}

// NotifyMsg ignores user messages (ron sends none).
func (delegate) NotifyMsg([]byte) {}

// GetBroadcasts has nothing to broadcast.
func (delegate) GetBroadcasts(int, int) [][]byte { return nil }

// LocalState has no state beyond the metadata.
func (delegate) LocalState(bool) []byte { return nil }

// MergeRemoteState ignores remote state (none is sent).
func (delegate) MergeRemoteState([]byte, bool) {}

// NotifyJoin queues a join.
func (d delegate) NotifyJoin(n *memberlist.Node) { d.c.inbox.put(event(evJoin, n)) }

// NotifyUpdate queues a metadata update.
func (d delegate) NotifyUpdate(n *memberlist.Node) { d.c.inbox.put(event(evUpdate, n)) }

// NotifyLeave queues a departure, left or dead by the node's state.
func (d delegate) NotifyLeave(n *memberlist.Node) { d.c.inbox.put(event(evLeave, n)) }

// NotifyConflict records a name conflict: counted always, and it marks this
// node not ready when the contested name is its own.
func (d delegate) NotifyConflict(existing, other *memberlist.Node) {
	d.c.nameConflict(existing.Name, existing.Address(), other.Address())
}

func event(kind eventKind, n *memberlist.Node) nodeEvent {
	return nodeEvent{kind: kind, name: strings.Clone(n.Name), meta: bytes.Clone(n.Meta), addr: gossipAddr(n), left: n.State == memberlist.StateLeft}
}

// gossipAddr is n's advertised gossip address as host:port, or "" when the
// node carries none (no IP or port 0).
func gossipAddr(n *memberlist.Node) string {
	if len(n.Addr) == 0 || n.Port == 0 {
		return ""
	}
	return net.JoinHostPort(n.Addr.String(), strconv.Itoa(int(n.Port)))
}
