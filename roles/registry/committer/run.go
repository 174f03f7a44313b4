package committer

import (
	"context"
	"time"

	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/runtime"
	"github.com/ronhq/ron/store/kv"
)

// dbTimeout bounds one registry.db transaction of the committer (the wait
// for bbolt's writer lock, shared with retention's min_index update).
const dbTimeout = 10 * time.Second

// Run is the registry-committer worker: it owns HEAD, the signer set and
// the proposals, serves the three queues in group-commit batches and runs
// the sweeps every SweepInterval. It returns nil when ctx ends, after
// answering every message still queued with 503 draining. Only one Run may
// be active; after a panic a restarted Run reloads its state from the
// stores before serving.
func (c *Committer) Run(ctx context.Context) error {
	if !c.active.CompareAndSwap(false, true) {
		return errDoubleRun
	}
	defer c.active.Store(false)
	if c.poisoned.Load() {
		c.recover(ctx)
	}
	c.ready.running.Store(true)
	defer c.ready.running.Store(false)
	tick := time.NewTicker(SweepInterval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			c.refuseQueued()
			return nil
		case <-tick.C:
			c.sweepIfLeading(ctx)
		case <-c.bell:
		case <-c.repl.bell: // nil outside replicated mode: never ready
		}
		c.follow(ctx)
		for ctx.Err() == nil && c.step(ctx) {
			select { // a steady stream of batches must not starve the sweeps
			case <-tick.C:
				c.sweepIfLeading(ctx)
			default:
			}
			c.follow(ctx)
		}
	}
}

// sweepIfLeading runs a sweep, in replicated mode only on the leader.
func (c *Committer) sweepIfLeading(ctx context.Context) {
	if c.repl.on() && !c.lead(ctx) {
		return
	}
	c.sweep()
}

// recover rebuilds the working state after an interrupted batch.
func (c *Committer) recover(ctx context.Context) {
	if c.repl.on() {
		c.reloadReplica(ctx)
		return
	}
	lctx, cancel := context.WithTimeout(ctx, dbTimeout)
	defer cancel()
	if err := c.reload(lctx); err != nil {
		c.failStorage("reload", err)
		return
	}
	c.poisoned.Store(false)
}

// step takes one batch and processes it; false when the queues were empty.
// In replicated mode a member that does not lead (or could not run its
// barrier) answers the batch with 503 no_quorum, nothing written: the API
// forwards writes to the leader, so only a write racing a change of leader
// gets here.
func (c *Committer) step(ctx context.Context) bool {
	msgs := c.gather(1 + c.limits().GroupCommitMax)
	if len(msgs) == 0 {
		return false
	}
	if c.repl.on() && !c.lead(ctx) {
		b := &batch{msgs: msgs, skip: make([]bool, len(msgs))}
		c.answerAll(b, httpx.NoQuorum(httpx.OutcomeNotWritten, "", "this member does not lead the control plane; nothing was written, retry"))
		return true
	}
	c.process(msgs)
	return true
}

// gather takes up to max queued messages without waiting, round-robin over
// the commit, approval and proposal queues.
func (c *Committer) gather(max int) []*message {
	queues := [...]*runtime.Queue[*message]{c.qCommits, c.qApprovals, c.qProposals}
	var out []*message
	for len(out) < max {
		took := false
		for _, q := range queues {
			if len(out) == max {
				break
			}
			if m, ok := q.TryPop(); ok {
				out, took = append(out, m), true
			}
		}
		if !took {
			break
		}
	}
	return out
}

// process applies msgs in order and makes the batch durable.
func (c *Committer) process(msgs []*message) {
	b := &batch{msgs: msgs, replies: make([]reply, len(msgs)), skip: make([]bool, len(msgs))}
	if c.ready.storage.Load() {
		c.answerAll(b, errNotReady(ReasonStorage))
		return
	}
	c.poisoned.Store(true)
	now, lim := c.now(), c.limits()
	b.started = now
	c.mt.groupSize.Update(float64(len(msgs)))
	for i, m := range msgs {
		if m.ctx.Err() != nil {
			b.skip[i] = true
			continue
		}
		b.replies[i] = c.apply(b, m, now, lim)
	}
	c.finish(b)
}

// finish runs steps (1)–(5) of docs/registry.md §4: append + fsync the log, one fsynced
// registry.db update, swap the snapshot, reply, notify. On an I/O error the
// registry turns write-unready (storage) and every waiter gets 503.
func (c *Committer) finish(b *batch) {
	c.st.evictOverCap()
	ids, headDirty := c.st.takeDirty()
	if err := c.persist(b, ids, headDirty); err != nil {
		if c.repl.on() { // the working state may be ahead of the log: reload, barrier first
			c.answerAll(b, err)
			c.repl.foreign.Store(true)
			c.reloadReplica(context.Background())
			return
		}
		c.answerAll(b, errNotReady(ReasonStorage))
		return
	}
	c.publish(ids, headDirty)
	for _, fn := range b.after {
		fn()
	}
	c.answer(b)
	c.notify(b)
	c.poisoned.Store(false)
}

// persist makes the batch durable: its effects (effectsOf) go to (1) the
// log and (2) registry.db, or in replicated mode to the control plane
// (propose).
func (c *Committer) persist(b *batch, ids []string, headDirty bool) error {
	fx := effectsOf(c.st, b, ids, headDirty)
	if c.repl.on() {
		return c.propose(fx)
	}
	if len(fx.Records) > 0 {
		t := time.Now()
		err := c.log.Append(fx.Records)
		c.mt.fsyncLog.UpdateDuration(t)
		if err != nil {
			c.failStorage("log append", err)
			return err
		}
	}
	if !fx.touchesDB() {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), dbTimeout)
	defer cancel()
	t := time.Now()
	err := c.db.Update(ctx, func(tx kv.Tx) error { return writeEffects(tx, fx) })
	c.mt.fsyncDB.UpdateDuration(t)
	if err != nil {
		c.failStorage("registry.db update", err)
	}
	return err
}

// failStorage turns the registry write-unready (storage) until restart.
func (c *Committer) failStorage(op string, err error) {
	c.ready.storage.Store(true)
	c.logger.Error().Err(err).Str("op", op).Msg("registry storage failure; writes disabled until restart")
}

// answer counts every outcome, then sends every reply (step 4), so a
// caller that got its reply also sees its metrics.
func (c *Committer) answer(b *batch) {
	now := c.now()
	for i, m := range b.msgs {
		if b.skip[i] {
			continue
		}
		r := b.replies[i]
		c.account(m.kind, r)
		if m.kind == kindCommit && r.err == nil && !r.repeat {
			c.mt.latency.Update(now.Sub(b.started).Seconds())
		}
	}
	for i, m := range b.msgs {
		if !b.skip[i] {
			m.reply <- b.replies[i]
		}
	}
}

// answerAll replies err to every message of b that is still waited for.
func (c *Committer) answerAll(b *batch, err error) {
	for i, m := range b.msgs {
		if !b.skip[i] && m.kind == kindCommit {
			c.mt.commit(resError).Inc()
		}
	}
	for i, m := range b.msgs {
		if !b.skip[i] {
			m.reply <- reply{err: err}
		}
	}
}

// notify calls OnCommit for each new commit, in commit order (step 5).
func (c *Committer) notify(b *batch) {
	if c.onCommit == nil {
		return
	}
	for _, cm := range b.commits {
		c.onCommit(cm)
	}
}

// refuseQueued answers every queued message with 503 draining.
func (c *Committer) refuseQueued() {
	for _, q := range []*runtime.Queue[*message]{c.qCommits, c.qApprovals, c.qProposals} {
		for {
			m, ok := q.TryPop()
			if !ok {
				break
			}
			m.reply <- reply{err: errDraining()}
		}
	}
}
