package controlplane

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/ronhq/ron/runtime"
	"github.com/ronhq/ron/runtime/cluster"
	"github.com/ronhq/ron/runtime/consensus"
)

// stepTimeout bounds one configuration change or bootstrap.
const stepTimeout = 5 * time.Second

// handOffTimeout bounds the leadership handoff of a clean stop (within the
// node's control-plane stop bound).
const handOffTimeout = 2 * time.Second

// Options configure a node's Member.
type Options struct {
	// ID is the node id (the Raft server id).
	ID string
	// Server makes the node a voter; BootstrapExpect (servers only, 0: never)
	// is how many servers start the group together.
	Server          bool
	BootstrapExpect int
	// RemoveAfter is how long a member must be gone before the leader removes
	// it (cluster.server_remove_after).
	RemoveAfter time.Duration
	// Dir holds the Raft state ("" = memory); Bind and Advertise are the Raft
	// transport's addresses; Profile its timings.
	Dir, Bind, Advertise string
	Profile              consensus.Profile
	// Plane is the node's handle the roles registered their machines in; the
	// group is attached to it while open.
	Plane *consensus.Plane
	// Membership is the gossip view; Announce gossips this node's Raft part
	// (it may block up to about a second).
	Membership cluster.Membership
	Announce   func(cluster.RaftMeta) error
	Log        zerolog.Logger
	// Metrics receives the control-plane gauges (role="node"; nil: none).
	Metrics *runtime.Metrics
}

// Member is a node's membership in the control-plane group.
type Member struct {
	opt Options
	g   *consensus.Group
	log zerolog.Logger

	mu        sync.Mutex // guards announced; never held across I/O
	announced *cluster.RaftMeta
}

// Open opens the node's Raft node over opt.Plane's state machines and
// attaches it to the plane. It neither bootstraps nor gossips: Run does.
func Open(opt Options) (*Member, error) {
	g, err := consensus.Open(consensus.Options{ID: opt.ID, Dir: opt.Dir, Bind: opt.Bind, Advertise: opt.Advertise,
		FSM: opt.Plane.FSM(), Profile: opt.Profile, Log: opt.Log})
	if err != nil {
		return nil, err
	}
	opt.Plane.Attach(g)
	m := &Member{opt: opt, g: g, log: opt.Log.With().Str("component", "control-plane").Logger()}
	m.registerMetrics()
	return m, nil
}

// registerMetrics adds the control-plane gauges (docs/cluster.md §11), read
// at each scrape: whether this node leads, whether it knows a leader, the
// last log index applied here and the seconds since a follower last heard
// from the leader.
func (m *Member) registerMetrics() {
	if m.opt.Metrics == nil {
		return
	}
	f := func(read func(consensus.Freshness) float64) func() float64 {
		return func() float64 { return read(m.g.Freshness()) }
	}
	m.opt.Metrics.Gauge("control_plane_leader", f(func(x consensus.Freshness) float64 { return boolGauge(x.Leader) }), "role", "node")
	m.opt.Metrics.Gauge("control_plane_known_leader", f(func(x consensus.Freshness) float64 { return boolGauge(x.KnownLeader) }), "role", "node")
	m.opt.Metrics.Gauge("control_plane_applied_index", f(func(x consensus.Freshness) float64 { return float64(x.Applied) }), "role", "node")
	m.opt.Metrics.Gauge("control_plane_last_contact_seconds", f(func(x consensus.Freshness) float64 { return x.LastContact.Seconds() }), "role", "node")
}

// boolGauge is 1 for true, 0 for false.
func boolGauge(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// Addr is the Raft address others reach this node at.
func (m *Member) Addr() string { return m.g.Addr() }

// Group is the node's Raft node.
func (m *Member) Group() *consensus.Group { return m.g }

// Close hands leadership to another voter when this node leads (at most
// handOffTimeout), detaches the group from the plane (proposals answer
// ErrNoQuorum from then on) and closes it.
func (m *Member) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), handOffTimeout)
	if m.g.HandOff(ctx) {
		m.log.Info().Msg("control plane leadership handed off before stopping")
	}
	cancel()
	m.opt.Plane.Attach(nil)
	return m.g.Close()
}

// Run keeps the node's part of the group until ctx ends: every tick (and on
// every membership change) it gossips its Raft part, bootstraps when the
// rule says so, and, as leader, applies plan. Failed steps are logged and
// retried on the next tick.
func (m *Member) Run(ctx context.Context) {
	changes, stop := m.opt.Membership.Subscribe()
	defer stop()
	tick := time.NewTicker(m.interval())
	defer tick.Stop()
	for {
		m.step(ctx)
		select {
		case <-ctx.Done():
			return
		case <-changes:
		case <-tick.C:
		}
	}
}

// interval is the reconcile period: a quarter of the election timeout's
// profile bound, so a change is acted on well within an election.
func (m *Member) interval() time.Duration {
	if m.opt.Profile == consensus.ProfileLocal {
		return 250 * time.Millisecond
	}
	return time.Second
}

// step runs one round: announce, bootstrap, reconcile.
func (m *Member) step(ctx context.Context) {
	hasState, err := m.g.HasState()
	if err != nil {
		m.log.Warn().Err(err).Msg("raft state unreadable")
		return
	}
	m.announce(cluster.RaftMeta{Addr: m.g.Addr(), Server: m.opt.Server, HasState: hasState})
	if !hasState {
		m.bootstrap()
		return
	}
	if m.g.Freshness().Leader {
		m.reconcile(ctx)
	}
}

// announce gossips r when it differs from what was last gossiped.
func (m *Member) announce(r cluster.RaftMeta) {
	m.mu.Lock()
	same := m.announced != nil && *m.announced == r
	m.mu.Unlock()
	if same {
		return
	}
	if err := m.opt.Announce(r); err != nil {
		m.log.Warn().Err(err).Msg("raft address not gossiped; retrying")
		return
	}
	m.mu.Lock()
	m.announced = &r
	m.mu.Unlock()
}

// bootstrap starts the group when this server is one of the first
// bootstrap_expect servers gossip shows, none holding state.
func (m *Member) bootstrap() {
	if !m.opt.Server || m.opt.BootstrapExpect < 1 {
		return
	}
	var seen []consensus.Candidate
	for _, mb := range m.opt.Membership.View().Members {
		if mb.Alive() && mb.Raft.Server {
			seen = append(seen, consensus.Candidate{ID: mb.ID, Addr: mb.Raft.Addr, HasState: mb.Raft.HasState})
		}
	}
	servers, ok := consensus.BootstrapSet(m.opt.ID, seen, m.opt.BootstrapExpect)
	if !ok {
		return
	}
	if err := m.g.Bootstrap(servers); err != nil {
		m.log.Warn().Err(err).Msg("control plane bootstrap failed; retrying")
		return
	}
	m.log.Info().Int("servers", len(servers)).Msg("control plane bootstrapped")
}

// reconcile applies plan's changes, one at a time.
func (m *Member) reconcile(ctx context.Context) {
	conf, err := m.g.Servers()
	if err != nil {
		return
	}
	for _, c := range plan(m.opt.Membership.View(), conf, time.Now(), m.opt.RemoveAfter) {
		if err := m.apply(ctx, c); err != nil {
			m.log.Warn().Err(err).Str("server", c.server.ID).Str("why", c.why).Msg("control plane change failed; retrying")
			return
		}
		m.log.Info().Str("server", c.server.ID).Bool("voter", c.server.Voter).Bool("removed", c.remove).Str("why", c.why).
			Msg("control plane configuration changed")
	}
}

// apply makes one change under stepTimeout.
func (m *Member) apply(ctx context.Context, c change) error {
	ctx, cancel := context.WithTimeout(ctx, stepTimeout)
	defer cancel()
	if c.remove {
		return m.g.RemoveServer(ctx, c.server.ID)
	}
	return m.g.AddServer(ctx, c.server)
}

// ErrNotLeader is the answer of AddServer and RemoveServer on a node that is
// not the leader.
var ErrNotLeader = errors.New("controlplane: only the leader changes the configuration")

// AddServer adds or updates a server by hand (an operator's `ron cluster
// servers add`); only the leader can.
func (m *Member) AddServer(ctx context.Context, s consensus.Server) error {
	if err := m.leaderOnly(); err != nil {
		return err
	}
	return m.apply(ctx, change{server: s})
}

// RemoveServer removes a server by hand; only the leader can, and not
// itself.
func (m *Member) RemoveServer(ctx context.Context, id string) error {
	if err := m.leaderOnly(); err != nil {
		return err
	}
	if id == m.opt.ID {
		return fmt.Errorf("controlplane: the leader cannot remove itself; remove it on the next leader after stopping it")
	}
	return m.apply(ctx, change{remove: true, server: consensus.Server{ID: id}})
}

// leaderOnly fails with ErrNotLeader (naming the leader) on a follower.
func (m *Member) leaderOnly() error {
	if m.g.Freshness().Leader {
		return nil
	}
	if id, _ := m.g.Leader(); id != "" {
		return fmt.Errorf("%w: the leader is %s", ErrNotLeader, id)
	}
	return fmt.Errorf("%w: there is no leader now", ErrNotLeader)
}

// Status is a node's view of the control plane (the "control_plane"
// object of /api/v1/status, GET /api/v1/cluster/servers).
type Status struct {
	// ID is this node's id; State its Raft state (leader, follower,
	// candidate or shutdown); Leader the leader's id ("" when none is
	// known).
	ID     string `json:"id"`
	State  string `json:"state"`
	Leader string `json:"leader"`
	// AppliedIndex is the last log index applied here; LastContactMs how
	// long ago a follower last heard from the leader.
	AppliedIndex  uint64 `json:"applied_index"`
	LastContactMs int64  `json:"last_contact_ms"`
	// Servers is the group's configuration as this node knows it.
	Servers []ServerStatus `json:"servers"`
}

// ServerStatus is one member of the configuration: its Raft address,
// whether it votes, whether it leads, and its gossip state (alive, dead,
// left, or unknown when gossip does not know it).
type ServerStatus struct {
	ID     string `json:"id"`
	Addr   string `json:"addr"`
	Voter  bool   `json:"voter"`
	Leader bool   `json:"leader"`
	Gossip string `json:"gossip"`
}

// Status reports the node's view of the control plane.
func (m *Member) Status() Status {
	f := m.g.Freshness()
	leader, _ := m.g.Leader()
	st := Status{ID: m.opt.ID, State: strings.ToLower(m.g.State()), Leader: leader, AppliedIndex: f.Applied,
		LastContactMs: f.LastContact.Milliseconds(), Servers: []ServerStatus{}}
	conf, _ := m.g.Servers()
	v := m.opt.Membership.View()
	for _, s := range conf {
		gossip := "unknown"
		if mb, ok := v.Member(s.ID); ok {
			gossip = string(mb.State)
		}
		st.Servers = append(st.Servers, ServerStatus{ID: s.ID, Addr: s.Addr, Voter: s.Voter, Leader: s.ID == leader, Gossip: gossip})
	}
	return st
}
