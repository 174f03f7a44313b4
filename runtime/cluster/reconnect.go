package cluster

import (
	"cmp"
	"context"
	"math/rand/v2"
	"net"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/memberlist"
)

// Reconnecting to dead members (docs/cluster.md §2). memberlist probes and
// exchanges state only with members it holds alive, and gossips to dead
// ones only briefly (GossipToTheDeadTime) and only while it has messages
// queued, so two sides of a partition that outlasted dead detection never
// meet again by themselves. Like Serf's reconnect, Run's reconnect
// goroutine joins dead members again, at the last gossip address the table
// saw for them, until they are back or forgotten (forget_after).

// reconnectInterval is the pause between reconnect attempts for the
// memberlist timings conf: a third of the push/pull interval (local 1 s,
// lan 10 s), never below the TCP timeout (local 1 s, lan 10 s), which
// bounds each half of an attempt to an unreachable address, so attempts
// never pile up.
func reconnectInterval(conf *memberlist.Config) time.Duration {
	return max(conf.PushPullInterval/3, conf.TCPTimeout)
}

// rejoinTarget is an address the reconnect loop may join: a dead member's
// last gossip address (id is the member's) or a join address (id "").
type rejoinTarget struct {
	id   string
	addr string
}

// rejoinPlan is the table owner's snapshot for the reconnect loop; it is
// immutable once published.
type rejoinPlan struct {
	dead    int             // dead (not left) members in the table
	alive   int             // alive members, this node included
	targets []rejoinTarget  // dead members with an address no alive member has, by address
	taken   map[string]bool // gossip addresses of alive members
}

// rejoinPlan returns the table's reconnect plan. Every dead member counts,
// whether or not the allow list admits it (gossip is the layer below the
// allow list); members that announced they leave are not chased. A dead
// member whose last address an alive member now has (another node took
// over the address) is no target: it cannot be reached there.
func (t *table) rejoinPlan() *rejoinPlan {
	p := &rejoinPlan{alive: 1, taken: map[string]bool{}}
	for _, e := range t.entries {
		if e.alive() {
			p.alive++
			if e.addr != "" {
				p.taken[e.addr] = true
			}
		}
	}
	for id, e := range t.entries {
		if e.state != StateDead {
			continue
		}
		p.dead++
		if e.addr != "" && !p.taken[e.addr] {
			p.targets = append(p.targets, rejoinTarget{id: id, addr: e.addr})
		}
	}
	slices.SortFunc(p.targets, func(a, b rejoinTarget) int {
		return cmp.Or(strings.Compare(a.addr, b.addr), strings.Compare(a.id, b.id))
	})
	return p
}

// attempt reports, for r drawn uniformly from [0, 1), whether this node
// makes an attempt in this interval: with probability dead ÷ alive, capped
// at 1, so that the alive members together make about one attempt per dead
// member per interval (a side of a partition with as many dead as alive
// members attempts on every node, every interval), and never when no
// member is dead.
func (p *rejoinPlan) attempt(r float64) bool {
	return p.dead > 0 && r*float64(p.alive) < float64(p.dead)
}

// next returns the target to try after the address last, round robin in
// address order: the candidates are the plan's targets and the join
// addresses that are neither self's, nor an alive member's, nor a target's
// (a join address is compared as written: a host name never matches). ok
// is false when there is no candidate or no member is dead.
func (p *rejoinPlan) next(last string, join []string, self string) (t rejoinTarget, ok bool) {
	if p.dead == 0 {
		return rejoinTarget{}, false
	}
	cands := slices.Clone(p.targets)
	for _, j := range join {
		if j != self && !p.taken[j] {
			cands = append(cands, rejoinTarget{addr: j})
		}
	}
	if len(cands) == 0 {
		return rejoinTarget{}, false
	}
	// By address, a member's target before a join address with the same
	// address (ids sort descending, "" last); then one per address.
	slices.SortFunc(cands, func(a, b rejoinTarget) int {
		return cmp.Or(strings.Compare(a.addr, b.addr), strings.Compare(b.id, a.id))
	})
	cands = slices.CompactFunc(cands, func(a, b rejoinTarget) bool { return a.addr == b.addr })
	i := slices.IndexFunc(cands, func(c rejoinTarget) bool { return c.addr > last })
	return cands[max(i, 0)], true
}

// reconnectLoop is Run's reconnect goroutine; Run's ctx ends it. Every
// env.rejoinEvery, while the owner's plan counts a dead member and Stop has
// not begun, it makes at most one attempt (rejoinOnce), with the
// probability of rejoinPlan.attempt, at the plan's next target in turn. It
// holds no lock: the plan it reads is immutable. A memberlist config
// without a push/pull interval or TCP timeout (a zero interval) turns
// reconnecting off.
func (c *Cluster) reconnectLoop(ctx context.Context, env runEnv) {
	if env.rejoinEvery <= 0 {
		return
	}
	tick := time.NewTicker(env.rejoinEvery)
	defer tick.Stop()
	last := ""
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		p := c.rejoin.Load()
		if c.leaving.Load() || !p.attempt(rand.Float64()) {
			continue
		}
		t, ok := p.next(last, c.opt.Config.Join, env.self)
		if !ok {
			continue
		}
		last = t.addr
		c.rejoinOnce(ctx, env, t)
	}
}

// rejoinOnce makes one reconnect attempt: a memberlist Join (a full state
// exchange) with t's address, a host name first resolved under a deadline
// of env.rejoinTimeout. memberlist's Join takes no context: its dial and
// its wait for the answer are each bounded by memberlist's TCP timeout
// (env.rejoinTimeout), so an attempt ends within about twice that. The
// attempt is counted (ok when the exchange completed) and logged at debug;
// one ended by ctx is neither. A member that answers becomes alive through
// memberlist's normal path (its refutation of our dead claim, gossiped or
// pulled), and the table logs it back.
func (c *Cluster) rejoinOnce(ctx context.Context, env runEnv, t rejoinTarget) {
	start := time.Now()
	addr, err := resolveJoinAddr(ctx, t.addr, env.rejoinTimeout)
	n := 0
	if err == nil && ctx.Err() == nil {
		n, err = env.ml.Join([]string{addr})
	}
	if ctx.Err() != nil {
		return
	}
	result := reconnectOK
	if err != nil || n == 0 {
		result = reconnectFailed
	}
	c.metrics.reconnect(result)
	ev := c.log.Debug().Str("addr", t.addr).Str("result", result).Dur("took", time.Since(start))
	if t.id != "" {
		ev = ev.Str("node", t.id)
	}
	ev.Err(err).Msg("reconnect attempt")
}

// resolveJoinAddr returns addr (host:port) with its host resolved to an IP
// address under a deadline of timeout; an IP address is returned as is.
func resolveJoinAddr(ctx context.Context, addr string, timeout time.Duration) (string, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return "", err
	}
	if net.ParseIP(host) != nil {
		return addr, nil
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	ip, port, err := resolveHostPort(ctx, addr)
	if err != nil {
		return "", err
	}
	return net.JoinHostPort(ip, strconv.Itoa(port)), nil
}
