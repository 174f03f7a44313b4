package consensus_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/raft"
	"github.com/rs/zerolog"

	"github.com/ronhq/ron/runtime/consensus"
	"github.com/ronhq/ron/runtime/consensus/consensustest"
)

func TestBootstrapSet(t *testing.T) {
	a, b, c := consensus.Candidate{ID: "a", Addr: "A"}, consensus.Candidate{ID: "b", Addr: "B"}, consensus.Candidate{ID: "c", Addr: "C"}
	for _, tc := range []struct {
		name   string
		self   string
		seen   []consensus.Candidate
		expect int
		want   []string // ids; nil: no bootstrap
	}{
		{"all three seen", "b", []consensus.Candidate{c, a, b}, 3, []string{"a", "b", "c"}},
		{"too few yet", "a", []consensus.Candidate{a, b}, 3, nil},
		{"duplicates do not count twice", "a", []consensus.Candidate{a, a, b}, 3, nil},
		{"one already has state", "a", []consensus.Candidate{a, b, {ID: "c", Addr: "C", HasState: true}}, 3, nil},
		{"more than expected: the first by id", "b", []consensus.Candidate{c, b, a}, 2, []string{"a", "b"}},
		{"self not among the first", "c", []consensus.Candidate{c, b, a}, 2, nil},
		{"one server", "a", []consensus.Candidate{a}, 1, []string{"a"}},
		{"expect zero", "a", []consensus.Candidate{a}, 0, nil},
	} {
		servers, ok := consensus.BootstrapSet(tc.self, tc.seen, tc.expect)
		var ids []string
		for _, s := range servers {
			ids = append(ids, string(s.ID))
			if string(s.Address) != map[string]string{"a": "A", "b": "B", "c": "C"}[string(s.ID)] {
				t.Errorf("%s: %s has address %s", tc.name, s.ID, s.Address)
			}
		}
		if ok != (tc.want != nil) || !slices.Equal(ids, tc.want) {
			t.Errorf("%s: consensus.BootstrapSet = %v %v, want %v", tc.name, ids, ok, tc.want)
		}
	}
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), consensustest.WaitBound)
	t.Cleanup(cancel)
	return c
}

// TestWritesCommitOnAMajorityAndSurviveTheLeader: a write is acknowledged
// once applied; followers refuse writes naming the leader; when the leader
// goes, the other two elect one and go on; the old leader comes back from
// its disk with every acknowledged write and does not bootstrap again.
func TestWritesCommitOnAMajorityAndSurviveTheLeader(t *testing.T) {
	ss := consensustest.NewGroup(t, 3, newLogFSM)
	l := consensustest.Leader(t, ss)
	resp, err := l.Group.Apply(ctx(t), []byte("w1"))
	if err != nil || resp != 1 {
		t.Fatalf("apply on the leader = %v, %v", resp, err)
	}
	for _, s := range ss {
		consensustest.Eventually(t, s.ID+" applies w1", func() bool { return slices.Equal(applied(s), []string{"w1"}) })
		if s == l {
			continue
		}
		var nl *consensus.NotLeaderError
		if _, err := s.Group.Apply(ctx(t), []byte("nope")); !errors.As(err, &nl) || nl.LeaderID != l.ID || nl.LeaderAddr != l.Addr {
			t.Fatalf("apply on follower %s = %v, want *consensus.NotLeaderError naming %s", s.ID, err, l.ID)
		}
	}
	old := l
	old.Stop(t)
	rest := slices.DeleteFunc(slices.Clone(ss), func(s *consensustest.Server) bool { return s == old })
	l = consensustest.Leader(t, rest)
	if _, err := l.Group.Apply(ctx(t), []byte("w2")); err != nil {
		t.Fatalf("apply after failover: %v", err)
	}
	old.Start(t)
	if has, err := old.Group.HasState(); err != nil || !has {
		t.Fatalf("restarted server has state = %v, %v", has, err)
	}
	consensustest.Eventually(t, "the old leader catches up", func() bool { return slices.Equal(applied(old), []string{"w1", "w2"}) })
	if err := l.Group.Barrier(ctx(t)); err != nil {
		t.Fatalf("barrier: %v", err)
	}
	servers, err := l.Group.Servers()
	if err != nil || len(servers) != 3 || !servers[0].Voter {
		t.Fatalf("servers = %+v, %v", servers, err)
	}
}

// TestNoQuorumNeverAcknowledges: with two of three servers gone the last
// one refuses writes (consensus.ErrNoQuorum once it knows it has no leader, never a
// response), and what was acknowledged before comes back after a restart
// of every server from its disk.
func TestNoQuorumNeverAcknowledges(t *testing.T) {
	ss := consensustest.NewGroup(t, 3, newLogFSM)
	l := consensustest.Leader(t, ss)
	for _, w := range []string{"w1", "w2", "w3"} {
		if _, err := l.Group.Apply(ctx(t), []byte(w)); err != nil {
			t.Fatalf("apply %s: %v", w, err)
		}
	}
	var last *consensustest.Server
	for _, s := range ss {
		if s != l && last == nil {
			last = s
			continue
		}
		s.Stop(t)
	}
	consensustest.Eventually(t, "the lone server refuses with no quorum", func() bool {
		_, err := last.Group.Apply(ctx(t), []byte("lost"))
		switch {
		case err == nil:
			t.Fatal("a write was acknowledged without a majority")
		case errors.Is(err, consensus.ErrNoQuorum):
			return true
		case errors.Is(err, consensus.ErrUnknownOutcome):
		default:
			var nl *consensus.NotLeaderError
			if !errors.As(err, &nl) {
				t.Fatalf("apply without a majority: %v", err)
			}
		}
		return false
	})
	last.Stop(t)
	for _, s := range ss {
		s.Start(t)
	}
	consensustest.Eventually(t, "a barrier on the leader (elections may repeat under load)", func() bool {
		l = consensustest.Leader(t, ss)
		return l.Group.Barrier(ctx(t)) == nil
	})
	if got := applied(l); !slices.Equal(got, []string{"w1", "w2", "w3"}) {
		t.Fatalf("after restarting every server the leader applied %v", got)
	}
}

// TestInMemoryGroupOfOne: without a data dir a single server bootstraps,
// leads and applies; its state is gone with it.
func TestInMemoryGroupOfOne(t *testing.T) {
	fsm := &logFSM{}
	g, err := consensus.Open(consensus.Options{ID: "solo", Bind: "127.0.0.1:0", FSM: fsm, Profile: consensus.ProfileLocal, Log: zerolog.Nop()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = g.Close() }) // a second Close does nothing
	if has, err := g.HasState(); err != nil || has {
		t.Fatalf("fresh node has state = %v, %v", has, err)
	}
	servers, _ := consensus.BootstrapSet("solo", []consensus.Candidate{{ID: "solo", Addr: g.Addr()}}, 1)
	if err := g.Bootstrap(servers); err != nil {
		t.Fatal(err)
	}
	consensustest.Eventually(t, "solo leads", func() bool { return g.State() == "Leader" })
	if resp, err := g.Apply(ctx(t), []byte("x")); err != nil || resp != 1 {
		t.Fatalf("apply = %v, %v", resp, err)
	}
	if err := g.Bootstrap(servers); err == nil {
		t.Fatal("a node with state bootstrapped again")
	}
	if _, err := g.Apply(canceled(), []byte("y")); !errors.Is(err, context.Canceled) {
		t.Fatalf("apply with a cancelled context = %v", err)
	}
	if err := g.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := g.Apply(ctx(t), []byte("z")); !errors.Is(err, consensus.ErrClosed) {
		t.Fatalf("apply after close = %v, want consensus.ErrClosed", err)
	}
	if got := fsm.applied(); !slices.Equal(got, []string{"x"}) {
		t.Fatalf("applied %v", got)
	}
}

func canceled() context.Context {
	c, cancel := context.WithCancel(context.Background())
	cancel()
	return c
}

// TestOpenRefusesBadAddresses: an address other servers cannot dial, a bad
// advertise address and a port in use are start errors, and nothing is
// left open.
func TestOpenRefusesBadAddresses(t *testing.T) {
	busy, err := consensus.Open(consensus.Options{ID: "busy", Bind: "127.0.0.1:0", FSM: &logFSM{}, Profile: consensus.ProfileLocal, Log: zerolog.Nop()})
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	for _, tc := range []struct{ name, bind, adv, want string }{
		{"unspecified without advertise", "0.0.0.0:0", "", "set an advertise address"},
		{"bad advertise", "127.0.0.1:0", "no-port", "advertise address"},
		{"port in use", busy.Addr(), "", "address already in use"},
	} {
		g, err := consensus.Open(consensus.Options{ID: "x", Dir: t.TempDir(), Bind: tc.bind, Advertise: tc.adv, FSM: &logFSM{},
			Profile: consensus.ProfileLocal, Log: zerolog.Nop()})
		if err == nil {
			_ = g.Close()
			t.Errorf("%s: consensus.Open succeeded", tc.name)
			continue
		}
		if !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want it to say %q", tc.name, err, tc.want)
		}
	}
}

// TestServersJoinAndLeave: the leader adds a voter and a non-voter, both
// receive the log, and a removed server leaves the configuration; a
// follower cannot change the configuration.
func TestServersJoinAndLeave(t *testing.T) {
	ss := consensustest.NewGroup(t, 1, newLogFSM)
	l := consensustest.Leader(t, ss)
	if _, err := l.Group.Apply(ctx(t), []byte("w1")); err != nil {
		t.Fatal(err)
	}
	voter := consensustest.NewServer(t, "v", newLogFSM)
	watcher := consensustest.NewServer(t, "w", newLogFSM)
	if err := l.Group.AddServer(ctx(t), consensus.Server{ID: voter.ID, Addr: voter.Addr, Voter: true}); err != nil {
		t.Fatalf("add voter: %v", err)
	}
	if err := l.Group.AddServer(ctx(t), consensus.Server{ID: watcher.ID, Addr: watcher.Addr}); err != nil {
		t.Fatalf("add non-voter: %v", err)
	}
	for _, s := range []*consensustest.Server{voter, watcher} {
		consensustest.Eventually(t, s.ID+" receives the log", func() bool { return slices.Equal(applied(s), []string{"w1"}) })
	}
	servers, err := l.Group.Servers()
	if err != nil {
		t.Fatal(err)
	}
	want := []consensus.Server{{ID: l.ID, Addr: l.Addr, Voter: true}, {ID: "v", Addr: voter.Addr, Voter: true}, {ID: "w", Addr: watcher.Addr}}
	if !slices.Equal(servers, want) {
		t.Fatalf("servers = %+v, want %+v", servers, want)
	}
	var nl *consensus.NotLeaderError
	if err := voter.Group.RemoveServer(ctx(t), l.ID); !errors.As(err, &nl) {
		t.Fatalf("a follower removed a server: %v", err)
	}
	if err := l.Group.RemoveServer(ctx(t), watcher.ID); err != nil {
		t.Fatalf("remove: %v", err)
	}
	if servers, _ := l.Group.Servers(); len(servers) != 2 {
		t.Fatalf("servers after removal = %+v", servers)
	}
}

// TestHandOff: a leader hands leadership to another voter (a clean stop
// costs no election timeout); a follower, or a leader alone, does not.
func TestHandOff(t *testing.T) {
	ss := consensustest.NewGroup(t, 3, newLogFSM)
	l := consensustest.Leader(t, ss)
	for _, s := range ss {
		if s != l && s.Group.HandOff(ctx(t)) {
			t.Fatalf("follower %s handed off", s.ID)
		}
	}
	if !l.Group.HandOff(ctx(t)) {
		t.Fatal("the leader did not hand off")
	}
	next := consensustest.Leader(t, ss)
	if next == l {
		t.Fatalf("%s still leads after the handoff", l.ID)
	}
	if _, err := next.Group.Apply(ctx(t), []byte("after")); err != nil {
		t.Fatalf("apply on the new leader: %v", err)
	}

	one := consensustest.NewServer(t, "solo", newLogFSM)
	if err := one.Group.Bootstrap([]raft.Server{{ID: "solo", Address: raft.ServerAddress(one.Addr), Suffrage: raft.Voter}}); err != nil {
		t.Fatal(err)
	}
	consensustest.Leader(t, []*consensustest.Server{one})
	if one.Group.HandOff(ctx(t)) {
		t.Fatal("a leader alone handed off")
	}
}
