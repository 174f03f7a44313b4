// Package consensustest runs groups of consensus servers for tests: real
// Raft nodes on loopback TCP with the local profile, each with its own data
// dir, started, stopped and restarted from disk, every wait polled against
// WaitBound.
package consensustest

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/hashicorp/raft"
	"github.com/rs/zerolog"

	"github.com/ronhq/ron/runtime/consensus"
)

// WaitBound is the stated bound of every wait: elections under
// consensus.ProfileLocal take a few hundred milliseconds.
const WaitBound = 10 * time.Second

// Eventually polls cond every 5 ms until it holds, failing t after
// WaitBound.
func Eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(WaitBound)
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s", what, WaitBound)
		}
		<-tick.C
	}
}

// NewFSM builds a server's state machine at each start (from what s.Dir
// holds) and returns it with the function that releases it at Stop.
type NewFSM func(t testing.TB, s *Server) (raft.FSM, func())

// Server is one server of a test group.
type Server struct {
	ID, Dir string
	// Addr is the Raft address; fixed at the first start and kept across
	// restarts.
	Addr  string
	Group *consensus.Group
	FSM   raft.FSM

	newFSM  NewFSM
	release func()
}

// Start opens the server's state machine and Raft node from its dir.
func (s *Server) Start(t testing.TB) {
	t.Helper()
	bind := s.Addr
	if bind == "" {
		bind = "127.0.0.1:0"
	}
	s.FSM, s.release = s.newFSM(t, s)
	g, err := consensus.Open(consensus.Options{ID: s.ID, Dir: filepath.Join(s.Dir, "raft"), Bind: bind, FSM: s.FSM,
		Profile: consensus.ProfileLocal, Log: zerolog.Nop()})
	if err != nil {
		t.Fatalf("open %s: %v", s.ID, err)
	}
	s.Group, s.Addr = g, g.Addr()
}

// Stop closes the node and releases the state machine, as a kill leaves
// the disk (acknowledged entries were fsynced before they were).
func (s *Server) Stop(t testing.TB) {
	t.Helper()
	if s.Group == nil {
		return
	}
	if err := s.Group.Close(); err != nil {
		t.Errorf("close %s: %v", s.ID, err)
	}
	s.release()
	s.Group = nil
}

// Running reports whether the server is started.
func (s *Server) Running() bool { return s.Group != nil }

// NewServer starts one server with its own dir and no group (it waits to
// be bootstrapped or added); it is stopped when the test ends.
func NewServer(t testing.TB, id string, newFSM NewFSM) *Server {
	t.Helper()
	s := &Server{ID: id, Dir: t.TempDir(), newFSM: newFSM}
	s.Start(t)
	t.Cleanup(func() { s.Stop(t) })
	return s
}

// NewGroup starts n servers ("s0" …) with their own dirs and bootstraps
// them through consensus.BootstrapSet, each with the same list; they are
// stopped when the test ends.
func NewGroup(t testing.TB, n int, newFSM NewFSM) []*Server {
	t.Helper()
	ss := make([]*Server, n)
	var seen []consensus.Candidate
	for i := range ss {
		ss[i] = NewServer(t, fmt.Sprintf("s%d", i), newFSM)
		seen = append(seen, consensus.Candidate{ID: ss[i].ID, Addr: ss[i].Addr})
	}
	for _, s := range ss {
		set, ok := consensus.BootstrapSet(s.ID, seen, n)
		if !ok {
			t.Fatalf("%s: no bootstrap set from %v", s.ID, seen)
		}
		if err := s.Group.Bootstrap(set); err != nil {
			t.Fatal(err)
		}
	}
	return ss
}

// Leader waits until one of the running servers leads and returns it.
func Leader(t testing.TB, ss []*Server) *Server {
	t.Helper()
	var l *Server
	Eventually(t, "a leader", func() bool {
		for _, s := range ss {
			if s.Running() && s.Group.State() == "Leader" {
				l = s
				return true
			}
		}
		return false
	})
	return l
}

// Planes opens one in-memory Raft node per plane (ids[i] over
// planes[i].FSM(), which must hold every machine already), bootstraps them
// all as voters, attaches each to its plane and waits until one leads. The
// nodes close when the test ends (detached first); a test stops one early
// with Detach.
func Planes(t testing.TB, ids []string, planes []*consensus.Plane) []*consensus.Group {
	t.Helper()
	gs := make([]*consensus.Group, len(ids))
	var seen []consensus.Candidate
	for i, id := range ids {
		g, err := consensus.Open(consensus.Options{ID: id, Bind: "127.0.0.1:0", FSM: planes[i].FSM(),
			Profile: consensus.ProfileLocal, Log: zerolog.Nop()})
		if err != nil {
			t.Fatalf("open %s: %v", id, err)
		}
		gs[i] = g
		seen = append(seen, consensus.Candidate{ID: id, Addr: g.Addr()})
		p := planes[i]
		t.Cleanup(func() { Detach(t, p) })
	}
	for i, g := range gs {
		set, _ := consensus.BootstrapSet(ids[i], seen, len(ids))
		if err := g.Bootstrap(set); err != nil {
			t.Fatal(err)
		}
		planes[i].Attach(g)
	}
	Eventually(t, "a leader", func() bool {
		for _, g := range gs {
			if g.Freshness().Leader {
				return true
			}
		}
		return false
	})
	return gs
}

// Detach detaches p's group and closes it, as a stopped or killed server
// (its disk, if any, keeps what it acknowledged); a plane without one is
// left as it is.
func Detach(t testing.TB, p *consensus.Plane) {
	t.Helper()
	g := p.Group()
	if g == nil {
		return
	}
	p.Attach(nil)
	if err := g.Close(); err != nil {
		t.Errorf("close: %v", err)
	}
}
