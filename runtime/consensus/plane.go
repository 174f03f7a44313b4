package consensus

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/hashicorp/raft"
)

// Plane is a node's handle on its control-plane group, shared by the node
// and the roles: roles register their state machines while they are built
// (Register) and propose entries through it; the node opens the group over
// FSM once the roles' stores are open (Attach) and detaches it before they
// close. While no group is attached every proposal and barrier answers
// ErrNoQuorum. It is safe for concurrent use.
type Plane struct {
	mux *Mux
	g   atomic.Pointer[Group]
	// why explains ErrNoQuorum to a client (set by the node; nil: the
	// error's own text).
	why atomic.Pointer[func() string]
}

// NewPlane returns a Plane with no machines and no group.
func NewPlane() *Plane { return &Plane{mux: NewMux()} }

// Register adds the state machine of kind; call it before the group opens.
func (p *Plane) Register(kind Kind, fsm raft.FSM) { p.mux.Register(kind, fsm) }

// FSM is the group's state machine: every registered machine.
func (p *Plane) FSM() raft.FSM { return p.mux }

// Attach makes g the group proposals go to; nil detaches it.
func (p *Plane) Attach(g *Group) { p.g.Store(g) }

// Group is the attached group, nil when none is.
func (p *Plane) Group() *Group { return p.g.Load() }

// Propose appends Command(kind, payload) and returns the machine's
// response, as Group.Apply (ErrNoQuorum when no group is attached).
func (p *Plane) Propose(ctx context.Context, kind Kind, payload []byte) (any, error) {
	g := p.g.Load()
	if g == nil {
		return nil, ErrNoQuorum
	}
	return g.Apply(ctx, Command(kind, payload))
}

// Barrier is Group.Barrier (ErrNoQuorum when no group is attached).
func (p *Plane) Barrier(ctx context.Context) error {
	g := p.g.Load()
	if g == nil {
		return ErrNoQuorum
	}
	return g.Barrier(ctx)
}

// Leader is Group.Leader ("" when no group is attached).
func (p *Plane) Leader() (id, addr string) {
	if g := p.g.Load(); g != nil {
		return g.Leader()
	}
	return "", ""
}

// AwaitOtherLeader waits until the group knows a leader other than old (a
// new election after old could not be reached), at most the profile's
// election bound and ctx's deadline, and returns it; ok is false when none
// appeared.
func (p *Plane) AwaitOtherLeader(ctx context.Context, old string) (id string, ok bool) {
	g := p.g.Load()
	if g == nil {
		return "", false
	}
	return g.awaitLeaderOther(ctx, old)
}

// SetNoQuorumReason sets what NoQuorumReason says.
func (p *Plane) SetNoQuorumReason(why func() string) { p.why.Store(&why) }

// NoQuorumReason explains to a client why a write found no quorum (for
// example that the cluster has no server at all, and how to fix that).
func (p *Plane) NoQuorumReason() string {
	if f := p.why.Load(); f != nil {
		if s := (*f)(); s != "" {
			return s
		}
	}
	return "the control plane has no leader; retry later"
}

// Freshness says how current this node's copy of the replicated state is:
// the last log index applied here, whether a leader is known, whether this
// node is it, and (on a follower) how long ago it last heard from the
// leader.
type Freshness struct {
	Applied     uint64
	KnownLeader bool
	Leader      bool
	LastContact time.Duration
}

// Freshness reports the attached group's freshness (zero when none is).
func (p *Plane) Freshness() Freshness {
	g := p.g.Load()
	if g == nil {
		return Freshness{}
	}
	return g.Freshness()
}
