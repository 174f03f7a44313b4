package consensus

import (
	"context"

	"github.com/hashicorp/raft"
)

// Apply appends cmd to the log and returns the state machine's response
// (what its Apply returned for this entry) once the entry is committed on a
// majority and applied on this node; only then is a write acknowledged.
// On a server that is not the leader it fails at once, with
// *NotLeaderError when a leader is known, else ErrNoQuorum. On a leader
// that loses its majority meanwhile it fails with ErrUnknownOutcome (Raft
// steps down within the leader lease, so Apply returns within about the
// leader lease after ctx's deadline at worst). ctx bounds the wait to
// enqueue the entry (ErrNoQuorum when it passes).
func (g *Group) Apply(ctx context.Context, cmd []byte) (any, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	f := g.r.Apply(cmd, remaining(ctx, g.opt.Profile.bound()))
	if err := f.Error(); err != nil {
		return nil, g.mapErr(err)
	}
	return f.Response(), nil
}

// Barrier makes a following local read linearizable: it returns once this
// node, as leader, has committed a no-op entry and applied every entry
// before it, so the state machine holds every write acknowledged before the
// call. It costs one log append on a majority. On a follower it fails like
// Apply.
func (g *Group) Barrier(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
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
