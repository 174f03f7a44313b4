package consensus

import (
	"context"
	"time"

	"github.com/hashicorp/raft"
)

// leaderPoll is how often awaitLeader looks for a leader.
const leaderPoll = 10 * time.Millisecond

// Apply appends cmd to the log and returns the state machine's response
// (what its Apply returned for this entry) once the entry is committed on a
// majority and applied on this node; only then is a write acknowledged.
// While no leader is known it first waits for one (at most the profile's
// election bound); on a server that is not the leader it then fails, with
// *NotLeaderError when a leader is known, else ErrNoQuorum. On a leader
// that loses its majority meanwhile it fails with ErrUnknownOutcome (Raft
// steps down within the leader lease, so Apply returns within about the
// leader lease after ctx's deadline at worst). ctx bounds the wait to
// enqueue the entry (ErrNoQuorum when it passes).
func (g *Group) Apply(ctx context.Context, cmd []byte) (any, error) {
	if err := g.awaitLeader(ctx); err != nil {
		return nil, err
	}
	f := g.r.Apply(cmd, remaining(ctx, g.opt.Profile.bound()))
	if err := f.Error(); err != nil {
		return nil, g.mapErr(err)
	}
	return f.Response(), nil
}

// awaitLeader waits, while no leader is known, until one is (an election
// in progress, or a follower that has not heard the new leader yet), at
// most the profile's election bound and ctx's deadline; a write then goes
// to the leader instead of failing at once. Without a leader by then the
// write fails as before (ErrNoQuorum). It fails only with ctx's error.
func (g *Group) awaitLeader(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	g.awaitLeaderOther(ctx, "")
	return ctx.Err()
}

// awaitLeaderOther polls, every leaderPoll, until a leader other than old
// ("" for any) is known, at most the profile's election bound and ctx's
// deadline.
func (g *Group) awaitLeaderOther(ctx context.Context, old string) (string, bool) {
	if id, _ := g.Leader(); id != "" && id != old {
		return id, true
	}
	wait, cancel := context.WithTimeout(ctx, g.opt.Profile.bound())
	defer cancel()
	tick := time.NewTicker(leaderPoll)
	defer tick.Stop()
	for {
		select {
		case <-wait.Done():
			return "", false
		case <-tick.C:
			if id, _ := g.Leader(); id != "" && id != old {
				return id, true
			}
		}
	}
}

// Barrier makes a following local read linearizable: it returns once this
// node, as leader, has committed a no-op entry and applied every entry
// before it, so the state machine holds every write acknowledged before the
// call. It costs one log append on a majority. On a follower it fails like
// Apply.
func (g *Group) Barrier(ctx context.Context) error {
	if err := g.awaitLeader(ctx); err != nil {
		return err
	}
	return g.mapErr(g.r.Barrier(remaining(ctx, g.opt.Profile.bound())).Error())
}

// Server is one member of the group's configuration.
type Server struct {
	ID, Addr string
	Voter    bool
}

// Servers returns the group's configuration as this node knows it.
func (g *Group) Servers() ([]Server, error) {
	f := g.r.GetConfiguration()
	if err := f.Error(); err != nil {
		return nil, g.mapErr(err)
	}
	var out []Server
	for _, s := range f.Configuration().Servers {
		out = append(out, Server{ID: string(s.ID), Addr: string(s.Address), Voter: s.Suffrage == raft.Voter})
	}
	return out, nil
}

// AddServer adds (or updates) a server, as a voter or a non-voter (which
// replicates the log but does not vote). Only the leader can; others fail
// like Apply.
func (g *Group) AddServer(ctx context.Context, s Server) error {
	t := remaining(ctx, g.opt.Profile.bound())
	var f raft.IndexFuture
	if s.Voter {
		f = g.r.AddVoter(raft.ServerID(s.ID), raft.ServerAddress(s.Addr), 0, t)
	} else {
		f = g.r.AddNonvoter(raft.ServerID(s.ID), raft.ServerAddress(s.Addr), 0, t)
	}
	return g.mapErr(f.Error())
}

// RemoveServer removes server id from the configuration. Only the leader
// can; others fail like Apply.
func (g *Group) RemoveServer(ctx context.Context, id string) error {
	return g.mapErr(g.r.RemoveServer(raft.ServerID(id), 0, remaining(ctx, g.opt.Profile.bound())).Error())
}
