package controlplane

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/ronhq/ron/runtime/cluster"
	"github.com/ronhq/ron/runtime/consensus"
)

var epoch = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

// member is a gossip member with a Raft part, in state since ago before
// epoch.
func member(id string, server bool, state cluster.State, ago time.Duration) cluster.Member {
	return cluster.Member{ID: id, State: state, Since: epoch.Add(-ago),
		Raft: cluster.RaftMeta{Addr: id + ":7947", Server: server}}
}

// describe renders changes as "+id(voter)", "-id" in order.
func describe(cs []change) []string {
	var out []string
	for _, c := range cs {
		if c.remove {
			out = append(out, "-"+c.server.ID)
			continue
		}
		out = append(out, fmt.Sprintf("+%s(%v)", c.server.ID, c.server.Voter))
	}
	return out
}

// TestPlan is the table of the leader's configuration rule.
func TestPlan(t *testing.T) {
	const after = 10 * time.Minute
	voter := func(id string) consensus.Server { return consensus.Server{ID: id, Addr: id + ":7947", Voter: true} }
	cases := []struct {
		name    string
		members []cluster.Member
		conf    []consensus.Server
		want    []string
	}{
		{"servers join as voters, others as non-voters",
			[]cluster.Member{member("a", true, cluster.StateAlive, 0), member("b", true, cluster.StateAlive, 0),
				member("c", false, cluster.StateAlive, 0)},
			[]consensus.Server{voter("a")}, []string{"+b(true)", "+c(false)"}},
		{"members without a Raft part and dead ones are not added",
			[]cluster.Member{member("a", true, cluster.StateAlive, 0), {ID: "s", State: cluster.StateAlive},
				member("d", true, cluster.StateDead, time.Minute)},
			[]consensus.Server{voter("a")}, nil},
		{"a moved address and a promotion are updates",
			[]cluster.Member{member("a", true, cluster.StateAlive, 0), member("b", true, cluster.StateAlive, 0),
				member("c", true, cluster.StateAlive, 0)},
			[]consensus.Server{voter("a"), {ID: "b", Addr: "old:7947", Voter: true}, {ID: "c", Addr: "c:7947"}},
			[]string{"+b(true)", "+c(true)"}},
		{"a member departed long enough is removed, a recent one is not",
			[]cluster.Member{member("a", true, cluster.StateAlive, 0), member("b", true, cluster.StateAlive, 0),
				member("c", true, cluster.StateDead, after), member("d", true, cluster.StateLeft, after-time.Second),
				member("e", true, cluster.StateAlive, 0)},
			[]consensus.Server{voter("a"), voter("b"), voter("c"), voter("d"), voter("e")}, []string{"-c"}},
		{"departed voters that are not a strict minority stay",
			[]cluster.Member{member("a", true, cluster.StateAlive, 0), member("b", true, cluster.StateDead, time.Hour),
				member("c", true, cluster.StateDead, time.Hour)},
			[]consensus.Server{voter("a"), voter("b"), voter("c")}, nil},
		{"two departed voters of five go together",
			[]cluster.Member{member("a", true, cluster.StateAlive, 0), member("b", true, cluster.StateAlive, 0),
				member("c", true, cluster.StateAlive, 0), member("d", true, cluster.StateDead, time.Hour),
				member("e", true, cluster.StateDead, time.Hour)},
			[]consensus.Server{voter("a"), voter("b"), voter("c"), voter("d"), voter("e")}, []string{"-d", "-e"}},
		{"one departed voter of two stays",
			[]cluster.Member{member("a", true, cluster.StateAlive, 0), member("b", true, cluster.StateDead, time.Hour)},
			[]consensus.Server{voter("a"), voter("b")}, nil},
		{"a departed non-voter goes whatever the voters",
			[]cluster.Member{member("a", true, cluster.StateAlive, 0), member("n", false, cluster.StateDead, time.Hour)},
			[]consensus.Server{voter("a"), {ID: "n", Addr: "n:7947"}}, []string{"-n"}},
		{"a member gossip does not know stays, self is never touched",
			[]cluster.Member{member("a", true, cluster.StateDead, time.Hour)},
			[]consensus.Server{voter("a"), voter("x")}, nil},
	}
	for _, tc := range cases {
		v := cluster.NewView("a", tc.members, epoch)
		if got := describe(plan(v, tc.conf, epoch, after)); !slices.Equal(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}
