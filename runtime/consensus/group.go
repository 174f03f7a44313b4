package consensus

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
	raftboltdb "github.com/hashicorp/raft-boltdb/v2"
	"github.com/rs/zerolog"
	"go.etcd.io/bbolt"
)

// Options configure one server's Raft node.
type Options struct {
	// ID is the node id (cluster.node_id), the Raft server id.
	ID string
	// Dir holds raft.db (log and stable store) and snapshots/; "" keeps
	// everything in memory (amnesia: a restart loses the node's state).
	Dir string
	// Bind is the host:port of the Raft listener (":0" picks a port).
	Bind string
	// Advertise is the address other servers dial; "" uses the bound
	// address, which must then not be unspecified.
	Advertise string
	// FSM applies committed commands; see raft.FSM (Apply must be
	// deterministic: no clock, randomness or local files).
	FSM raft.FSM
	// Profile selects the timings (ProfileLAN when empty).
	Profile Profile
	// Log receives Raft's own log lines (component=raft).
	Log zerolog.Logger
}

// Group is one server's node of the control-plane Raft group.
type Group struct {
	opt    Options
	r      *raft.Raft
	tr     *raft.NetworkTransport
	logs   raft.LogStore
	stable raft.StableStore
	snaps  raft.SnapshotStore
	close  func() error // closes the bolt store (nil in memory)
}

// Open starts the node: it opens or creates the stores, binds the
// transport and joins whatever configuration the stores hold (none on a
// first start: see Bootstrap). It does no election itself.
func Open(opt Options) (*Group, error) {
	if opt.Profile == "" {
		opt.Profile = ProfileLAN
	}
	g := &Group{opt: opt}
	if err := g.openStores(); err != nil {
		return nil, err
	}
	if err := g.openTransport(); err != nil {
		g.closeStores()
		return nil, err
	}
	conf := opt.Profile.config(opt.ID)
	conf.Logger = g.logger("raft")
	r, err := raft.NewRaft(conf, opt.FSM, g.logs, g.stable, g.snaps, g.tr)
	if err != nil {
		_ = g.tr.Close()
		g.closeStores()
		return nil, fmt.Errorf("consensus: start raft: %w", err)
	}
	g.r = r
	return g, nil
}

// openStores opens raft.db and the snapshot folder under Dir, or memory.
func (g *Group) openStores() error {
	if g.opt.Dir == "" {
		mem := raft.NewInmemStore()
		g.logs, g.stable, g.snaps = mem, mem, raft.NewInmemSnapshotStore()
		return nil
	}
	if err := os.MkdirAll(g.opt.Dir, 0o700); err != nil {
		return fmt.Errorf("consensus: %w", err)
	}
	bs, err := raftboltdb.New(raftboltdb.Options{Path: filepath.Join(g.opt.Dir, "raft.db"),
		BoltOptions: &bbolt.Options{Timeout: time.Second}})
	if err != nil {
		return fmt.Errorf("consensus: open %s: %w", filepath.Join(g.opt.Dir, "raft.db"), err)
	}
	snaps, err := raft.NewFileSnapshotStoreWithLogger(g.opt.Dir, 2, g.logger("raft-snapshots"))
	if err != nil {
		_ = bs.Close()
		return fmt.Errorf("consensus: snapshots: %w", err)
	}
	cache, err := raft.NewLogCache(512, bs)
	if err != nil {
		_ = bs.Close()
		return fmt.Errorf("consensus: %w", err)
	}
	g.logs, g.stable, g.snaps, g.close = cache, bs, snaps, bs.Close
	return nil
}

// openTransport binds the Raft listener.
func (g *Group) openTransport() error {
	var adv net.Addr
	if g.opt.Advertise != "" {
		a, err := net.ResolveTCPAddr("tcp", g.opt.Advertise)
		if err != nil {
			return fmt.Errorf("consensus: advertise address %q: %w", g.opt.Advertise, err)
		}
		adv = a
	}
	layer, err := listen(g.opt.Bind, adv)
	if err != nil {
		return fmt.Errorf("consensus: listen %s: %w", g.opt.Bind, err)
	}
	tr := raft.NewNetworkTransportWithConfig(&raft.NetworkTransportConfig{Stream: layer, MaxPool: 3,
		Timeout: 10 * time.Second, Logger: g.logger("raft-net")})
	g.tr = tr
	return nil
}

// closeStores closes the bolt store, if any.
func (g *Group) closeStores() {
	if g.close != nil {
		_ = g.close()
	}
}

// logger is an hclog logger writing into opt.Log at opt.Log's level (Raft
// logs at info and above only).
func (g *Group) logger(name string) hclog.Logger {
	level := hclog.Info
	switch g.opt.Log.GetLevel() {
	case zerolog.WarnLevel:
		level = hclog.Warn
	case zerolog.ErrorLevel, zerolog.FatalLevel, zerolog.PanicLevel:
		level = hclog.Error
	case zerolog.Disabled:
		level = hclog.Off
	}
	return hclog.New(&hclog.LoggerOptions{Name: name, Level: level, DisableTime: true,
		Output: g.opt.Log.With().Str("component", "raft").Logger()})
}

// Addr is the Raft address other servers reach this one at.
func (g *Group) Addr() string { return string(g.tr.LocalAddr()) }

// HasState reports whether the node holds Raft state (a log, a term or a
// snapshot): such a node never bootstraps.
func (g *Group) HasState() (bool, error) {
	return raft.HasExistingState(g.logs, g.stable, g.snaps)
}

// Bootstrap starts a new group whose voters are servers (from
// BootstrapSet; this node must be one of them). Every server of the set
// calls it with the same list. It fails on a node that holds state.
func (g *Group) Bootstrap(servers []raft.Server) error {
	if err := g.r.BootstrapCluster(raft.Configuration{Servers: servers}).Error(); err != nil {
		return fmt.Errorf("consensus: bootstrap: %w", err)
	}
	return nil
}

// Leader returns the leader's id and Raft address ("" when none is known).
func (g *Group) Leader() (id, addr string) {
	a, i := g.r.LeaderWithID()
	return string(i), string(a)
}

// State is this node's Raft state: Follower, Candidate, Leader or Shutdown.
func (g *Group) State() string { return g.r.State().String() }

// HandOff asks this node, when it leads and another voter exists, to hand
// leadership to the most up-to-date voter before it stops, so a clean
// restart costs the group no election timeout; it waits at most ctx's
// deadline. It reports whether leadership moved.
func (g *Group) HandOff(ctx context.Context) bool {
	if g.r.State() != raft.Leader {
		return false
	}
	conf, err := g.Servers()
	if err != nil || !slices.ContainsFunc(conf, func(s Server) bool { return s.Voter && s.ID != g.opt.ID }) {
		return false
	}
	f := g.r.LeadershipTransfer()
	done := make(chan error, 1)
	go func() { done <- f.Error() }() // handoff-wait: ends when Raft answers the transfer (it bounds it by its election timeout)
	select {
	case err := <-done:
		return err == nil
	case <-ctx.Done():
		return false
	}
}

// Close leaves the group's work (not its configuration): it stops Raft,
// then closes the transport (its listener and every connection) and the
// stores. Acknowledged writes are on
// disk already; Close does not wait for anything else.
func (g *Group) Close() error {
	err := g.r.Shutdown().Error()
	if cerr := g.tr.Close(); err == nil {
		err = cerr
	}
	g.closeStores()
	return err
}

// mapErr turns raft's errors into this package's.
func (g *Group) mapErr(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, raft.ErrNotLeader):
		if id, addr := g.Leader(); id != "" && id != g.opt.ID {
			return &NotLeaderError{LeaderID: id, LeaderAddr: addr}
		}
		return ErrNoQuorum
	case errors.Is(err, raft.ErrLeadershipLost):
		return ErrUnknownOutcome
	case errors.Is(err, raft.ErrRaftShutdown):
		return ErrClosed
	case errors.Is(err, raft.ErrEnqueueTimeout):
		return ErrNoQuorum
	}
	return err
}

// remaining is ctx's time left, at most max (max when ctx has no deadline).
func remaining(ctx context.Context, max time.Duration) time.Duration {
	if dl, ok := ctx.Deadline(); ok {
		return min(time.Until(dl), max)
	}
	return max
}

// Freshness reports this node's freshness (see Plane.Freshness).
func (g *Group) Freshness() Freshness {
	id, _ := g.Leader()
	f := Freshness{Applied: g.r.AppliedIndex(), KnownLeader: id != "", Leader: g.r.State() == raft.Leader}
	if !f.Leader {
		if lc := g.r.LastContact(); !lc.IsZero() {
			f.LastContact = time.Since(lc)
		}
	}
	return f
}
