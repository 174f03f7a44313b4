package committer

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"strconv"
	"sync/atomic"

	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/roles/registry/registryapi"
	"github.com/ronhq/ron/roles/registry/registryapi/descriptor"
	"github.com/ronhq/ron/runtime/consensus"
)

// ReasonNoLog is the write-unready reason of a replicated registry before
// the log's init entry is applied here: no HEAD yet, or a chain from before
// the control plane that is not in the log yet.
const ReasonNoLog = "no_log"

// replica is the replicated-mode part of the committer (docs/cluster.md
// §14). The Run goroutine owns leader; the rest is shared with the state
// machine's goroutine (Notice) through atomics.
type replica struct {
	replicate func(ctx context.Context, fx Effects) error
	leading   func() bool
	barrier   func(ctx context.Context) error

	prefix   string                 // random per process: tokens of two processes never meet
	seq      atomic.Uint64          // token counter
	inflight atomic.Pointer[string] // the token of the batch being proposed, nil when none
	stale    atomic.Bool            // the stores changed in a way followed cannot carry: reload all
	foreign  atomic.Bool            // an entry of another leader was applied: barrier again
	bell     chan struct{}          // capacity 1: "the stores changed"
	followed chan Effects           // bounded: applied entries' effects, in log order, for Run to follow
	leader   bool                   // Run: barrier and reload done since this member last led
	settled  atomic.Bool            // leader is true: the snapshot holds every committed entry
}

// followQueue bounds the effects waiting for Run to follow; past it the
// committer reloads from the stores instead.
const followQueue = 256

// newReplica returns opt's replicated-mode part (zero when off).
func newReplica(opt Options) replica {
	if opt.Replicate == nil {
		return replica{}
	}
	b := make([]byte, 6)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go 1.24+)
	return replica{replicate: opt.Replicate, leading: opt.Leading, barrier: opt.Barrier,
		prefix: hex.EncodeToString(b), bell: make(chan struct{}, 1), followed: make(chan Effects, followQueue)}
}

// on reports whether the committer runs in replicated mode.
func (r *replica) on() bool { return r.replicate != nil }

// Notice is the registry state machine's call after it applied an entry
// to the stores: fx is what the entry changed (nil for a restore or an
// entry whose changes are not effects); it never blocks. Unless the entry
// is this committer's own batch in flight, Run follows it: it applies fx to
// its working state (O(the entry's changes)), or, for a nil fx or when
// followQueue effects are already waiting, reloads everything from the
// stores. A leader that sees another leader's entry also runs a barrier
// before its next batch.
func (c *Committer) Notice(token string, fx *Effects) {
	if !c.repl.on() {
		return
	}
	if p := c.repl.inflight.Load(); p != nil && token != "" && *p == token {
		return
	}
	c.repl.foreign.Store(true)
	c.repl.settled.Store(false)
	queued := false
	if fx != nil {
		select {
		case c.repl.followed <- *fx:
			queued = true
		default:
		}
	}
	if !queued {
		c.repl.stale.Store(true)
	}
	select {
	case c.repl.bell <- struct{}{}:
	default:
	}
}

// token returns a fresh batch token.
func (r *replica) token() string {
	return r.prefix + "-" + strconv.FormatUint(r.seq.Add(1), 10)
}

// loadReplica builds the working state from the stores without writing
// anything (replicated mode: Open, and every reload) and publishes it;
// OnCommit is called for each version HEAD moved past since the previous
// snapshot.
func (c *Committer) loadReplica(ctx context.Context) error {
	ds, err := readDB(ctx, c.db)
	if err != nil {
		return err
	}
	st := newState()
	st.retired = ds.retired
	prev := c.st
	c.st = st
	if ds.head != nil {
		if err := c.loadHead(ds.head, nil); err != nil {
			c.st = prev
			return err
		}
	}
	if err := c.loadProposals(ds.props); err != nil {
		c.st = prev
		return err
	}
	st.takeDirty()
	prevSnap := c.snap.Load()
	c.snap.Store(fullSnapshot(st))
	c.ready.set(ReasonNoLog, st.head == nil || !ds.logged)
	if prevSnap != nil { // not Open's first load
		c.announce(prevSnap.head, st.head)
	}
	return nil
}

// announce calls OnCommit for every version after old up to head, read
// from the log (a follower's commits arrive through the stores).
func (c *Committer) announce(old, head *Head) {
	if c.onCommit == nil || head == nil {
		return
	}
	from := uint64(0)
	if old != nil {
		if head.Version <= old.Version {
			return
		}
		from = old.Version + 1
	}
	for v := from; v <= head.Version; v++ {
		h, err := c.readHead(v)
		if err != nil {
			c.logger.Warn().Err(err).Uint64("version", v).Msg("registry: announce a replicated commit")
			continue
		}
		c.onCommit(registryapi.Committed{Version: h.Version, PayloadB3: h.PayloadB3, CommittedAt: h.CommittedAt})
	}
}

// follow brings the working state up to the stores (Run, replicated
// mode): a full reload when one is due (the queued effects are then
// already in the stores it reads), else each queued entry's effects in
// order; an entry that cannot be followed (its HEAD unreadable, a
// proposal that does not parse) falls back to a reload.
func (c *Committer) follow(ctx context.Context) {
	if c.repl.stale.Swap(false) {
		c.drainFollowed()
		c.reloadReplica(ctx)
		return
	}
	for {
		select {
		case fx := <-c.repl.followed:
			if err := c.applyFollowed(fx); err != nil {
				c.logger.Warn().Err(err).Msg("registry: follow a replicated entry; reloading from the stores")
				c.drainFollowed()
				c.reloadReplica(ctx)
				return
			}
		default:
			return
		}
	}
}

// drainFollowed drops the queued effects (a reload covers them).
func (c *Committer) drainFollowed() {
	for {
		select {
		case <-c.repl.followed:
		default:
			return
		}
	}
}

// applyFollowed applies one entry's effects, which the stores already
// hold, to the working state and publishes the snapshot: the proposals it
// wrote or deleted and, when HEAD moved, HEAD (read back from the log) with
// the retired signers; each new version is announced.
func (c *Committer) applyFollowed(fx Effects) error {
	st := c.st
	prev := c.snap.Load()
	var head *Head
	if fx.Head != nil {
		h, err := c.readHead(fx.Head.Version)
		if err != nil {
			return err
		}
		head = h
	}
	var ids []string
	for _, sp := range fx.Proposals {
		p, err := proposalOf(sp)
		if err != nil {
			return err
		}
		st.drop(sp.ID)
		st.props[p.id] = p
		if p.isOpen() {
			st.open[p.id] = p
		} else {
			st.nTombs++
			st.tombs = append(st.tombs, tombRef{id: p.id, closedAt: p.closedAt})
		}
		ids = append(ids, sp.ID)
	}
	for _, id := range fx.Deleted {
		st.drop(id)
		ids = append(ids, id)
	}
	if head != nil {
		st.setHead(head)
		st.retired = fx.Retired
		st.signers = descriptor.NewSignerSet(head.Set, st.everInForce())
	}
	st.takeDirty()
	c.publish(ids, head != nil)
	c.ready.set(ReasonNoLog, st.head == nil)
	if prev != nil {
		c.announce(prev.head, st.head)
	}
	return nil
}

// reloadReplica reloads from the stores; a failure leaves the state
// poisoned (retried on the next notice or batch).
func (c *Committer) reloadReplica(ctx context.Context) {
	lctx, cancel := context.WithTimeout(ctx, dbTimeout)
	defer cancel()
	if err := c.loadReplica(lctx); err != nil {
		c.repl.stale.Store(true)
		c.poisoned.Store(true)
		c.logger.Error().Err(err).Msg("registry: reload from the replicated stores failed")
		return
	}
	c.poisoned.Store(false)
}

// lead reports whether this member may take a batch now: it leads, and
// since it became leader (or saw another leader's entry, or a batch of its
// own failed) it ran a barrier and reloaded, so its working state holds
// every committed entry.
func (c *Committer) lead(ctx context.Context) bool {
	r := &c.repl
	if !r.leading() {
		r.leader = false
		r.settled.Store(false)
		return false
	}
	if r.foreign.Swap(false) {
		r.leader = false
		r.settled.Store(false)
	}
	if r.leader && !c.poisoned.Load() {
		return true
	}
	bctx, cancel := context.WithTimeout(ctx, dbTimeout)
	defer cancel()
	if err := r.barrier(bctx); err != nil {
		r.foreign.Store(true)
		return false
	}
	r.stale.Store(false)
	c.reloadReplica(ctx)
	r.leader = !c.poisoned.Load()
	r.settled.Store(r.leader)
	return r.leader
}

// settled reports whether the handler-side checks may refuse a write from
// the read snapshot: always outside replicated mode; in it, only on a
// leader whose barrier and reload of this term are done. A new leader's
// snapshot may lack entries the old leader acknowledged (Raft applies them
// only after the new leader's first entry commits), so until then a write
// goes to the committer, which checks it again after its barrier.
func (c *Committer) settled() bool {
	return !c.repl.on() || (c.repl.settled.Load() && c.repl.leading())
}

// propose is persist in replicated mode: the effects become one entry of
// the control plane; the state machine writes them (here too). An empty
// batch proposes nothing.
func (c *Committer) propose(fx Effects) error {
	if len(fx.Records) == 0 && !fx.touchesDB() {
		return nil
	}
	tok := c.repl.token()
	fx.Token = tok
	c.repl.inflight.Store(&tok)
	defer c.repl.inflight.Store(nil)
	ctx, cancel := context.WithTimeout(context.Background(), dbTimeout)
	defer cancel()
	if err := c.repl.replicate(ctx, fx); err != nil {
		return errReplicate(err)
	}
	return nil
}

// errReplicate maps a refused proposal onto the envelope: 503 no_quorum
// with details.outcome not_written (nothing was written) or unknown (the
// entry may still commit: retry only what is safe to repeat).
func errReplicate(err error) error {
	var nl *consensus.NotLeaderError
	if errors.Is(err, consensus.ErrNoQuorum) || errors.As(err, &nl) {
		return httpx.NoQuorum(httpx.OutcomeNotWritten, "", "the control plane has no leader here; nothing was written, retry")
	}
	return httpx.NoQuorum(httpx.OutcomeUnknown, "", "the write's outcome is unknown (%v); a retried commit gets its 201 if it landed", err)
}
