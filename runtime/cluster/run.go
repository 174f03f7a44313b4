package cluster

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/hashicorp/memberlist"

	"github.com/ronhq/ron/runtime"
)

// ownerTick is how often the owner forgets departed members and re-reads
// the member allow list.
const ownerTick = time.Second

// joinBackoff paces join retries: 5 s doubling to 30 s (docs/cluster.md §2).
var joinBackoff = runtime.Backoff{Base: 5 * time.Second, Max: 30 * time.Second, Factor: 2, Jitter: 0.2}

// Run owns the membership table until ctx ends or Stop is called: it turns
// memberlist events into Views, forgets departed members after
// forget_after, and, when Start's join found nobody, retries the join
// addresses with backoff (5 s → 30 s) until one join succeeds (then
// exchanges state with them once more, see joinLoop). While the table holds
// a dead member it also tries to join dead members and the join addresses
// again, one address per reconnect interval (see reconnectLoop), so that
// membership re-forms after a partition heals. It returns nil when ctx ends
// or Stop was called (also before it began), and an error when called
// before Start or while already running. Every goroutine it starts has
// returned when it returns.
func (c *Cluster) Run(ctx context.Context) error {
	env, err := c.beginRun()
	if errors.Is(err, errStopped) {
		return nil
	}
	if err != nil {
		return err
	}
	defer c.endRun(env.done)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(c.stopCtx, cancel)()

	var wg sync.WaitGroup
	if len(c.opt.Config.Join) > 0 {
		wg.Go(func() { c.joinLoop(ctx, env.ml) }) // cluster join retries: owned by Run, awaited below
	}
	wg.Go(func() { c.reconnectLoop(ctx, env) }) // cluster reconnects to dead members: owned by Run, awaited below
	c.own(ctx)
	wg.Wait()
	return nil
}

// runEnv is what Run takes from Start, read under mu.
type runEnv struct {
	ml            *memberlist.Memberlist
	done          chan struct{} // closed by endRun
	self          string        // this node's gossip address
	rejoinEvery   time.Duration // reconnect interval
	rejoinTimeout time.Duration // memberlist's TCP timeout
}

// beginRun marks Run running and returns what it works with.
func (c *Cluster) beginRun() (runEnv, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case c.state == stateStopped:
		return runEnv{}, errStopped
	case c.state != stateStarted:
		return runEnv{}, errors.New("cluster: Run before Start")
	case c.running:
		return runEnv{}, errors.New("cluster: Run already running")
	}
	c.running = true
	c.runDone = make(chan struct{})
	return runEnv{ml: c.ml, done: c.runDone, self: c.selfAddr, rejoinEvery: c.rejoinEvery, rejoinTimeout: c.rejoinTimeout}, nil
}

// endRun marks Run finished.
func (c *Cluster) endRun(done chan struct{}) {
	c.mu.Lock()
	c.running = false
	c.mu.Unlock()
	close(done)
}

// own is the table owner's loop: it applies queued events, ticks, and
// publishes a new View after each change.
func (c *Cluster) own(ctx context.Context) {
	tick := time.NewTicker(ownerTick)
	defer tick.Stop()
	c.step()
	for {
		select {
		case <-ctx.Done():
			return
		case ev := <-c.inbox.ch:
			c.table.apply(ev, time.Now())
		case <-c.inbox.signal:
		case <-c.nudge:
		case <-tick.C:
			c.table.forget(time.Now())
		}
		c.step()
	}
}

// step applies every queued event and publishes the resulting reconnect
// plan and View (in that order: a reader that sees the View sees the plan
// of the same table).
func (c *Cluster) step() {
	c.inbox.drain(func(ev nodeEvent) { c.table.apply(ev, time.Now()) })
	c.rejoin.Store(c.table.rejoinPlan())
	c.publish(time.Now())
}

// publish builds the View at now and, when it differs from the current
// one, stores it, updates the gauges and signals subscribers.
func (c *Cluster) publish(now time.Time) {
	if c.opt.AllowList != nil {
		c.table.setAllowList(c.opt.AllowList())
	}
	v := NewView(c.id, c.table.members(c.selfMember(), now), now)
	if sameMembers(v.Members, c.view.Load().Members) {
		return
	}
	c.view.Store(v)
	c.metrics.members(v)
	c.subs.notify()
}

// joinLoop retries the join addresses with backoff until a join succeeded,
// then exchanges state with them once more a backoff base (5 s) later:
// nodes started at the same time have joined the seeds by then, so this
// one push/pull makes them converge without waiting for memberlist's
// push/pull interval (15–30 s) when gossip missed one of them.
func (c *Cluster) joinLoop(ctx context.Context, ml *memberlist.Memberlist) {
	for attempt := 0; !c.joined.Load(); attempt++ {
		d := c.backoff.Delay(attempt, nil)
		c.log.Info().Dur("retry_in", d).Msg("no join address answered; running alone")
		if !runtime.Sleep(ctx, d) {
			return
		}
		c.tryJoin(ctx, ml)
	}
	if runtime.Sleep(ctx, c.backoff.Base) {
		n := c.joinEach(ctx, ml)
		c.log.Debug().Int("contacted", n).Int("members", ml.NumMembers()).Msg("state exchanged with the join addresses")
	}
}

// tryJoin tries each join address once and records success: some address
// answered and another node is alive (a join list naming only this node is
// no join until others joined it).
func (c *Cluster) tryJoin(ctx context.Context, ml *memberlist.Memberlist) {
	contacted := c.joinEach(ctx, ml)
	if contacted == 0 || ml.NumMembers() < 2 {
		return
	}
	c.joined.Store(true)
	c.log.Info().Int("contacted", contacted).Int("members", ml.NumMembers()).Msg("joined the cluster")
}

// joinEach pushes and pulls state with each join address (memberlist Join,
// bounded by its TCP timeout per address) until ctx ends or Stop, and
// returns how many answered.
func (c *Cluster) joinEach(ctx context.Context, ml *memberlist.Memberlist) int {
	contacted := 0
	for _, addr := range c.opt.Config.Join {
		if ctx.Err() != nil || c.stopCtx.Err() != nil {
			break
		}
		n, err := ml.Join([]string{addr})
		if err != nil {
			c.log.Debug().Str("addr", addr).Err(err).Msg("join failed")
			continue
		}
		contacted += n
	}
	return contacted
}
