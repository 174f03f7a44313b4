package controlplane

import (
	"time"

	"github.com/ronhq/ron/runtime/cluster"
	"github.com/ronhq/ron/runtime/consensus"
)

// change is one step the leader takes on the group's configuration: add
// (or update) a server, or remove one.
type change struct {
	remove bool
	server consensus.Server
	why    string
}

// plan is the leader's rule (docs/cluster.md §14): given the gossip view
// and the configuration, add every alive control-plane member that is
// missing or whose address or suffrage changed (servers as voters, others
// as non-voters), and remove every member other than self that gossip has
// shown departed (dead or left) for at least removeAfter. Departed voters
// go only while they are a strict minority of the voters (as Consul's
// autopilot: the voters left are then all alive and still a majority);
// otherwise none of them is removed. A member gossip does not know (added
// by hand, or forgotten while this leader was down) is left to the
// operator.
func plan(v *cluster.View, conf []consensus.Server, now time.Time, removeAfter time.Duration) []change {
	out := joins(v, conf)
	var voters int
	var gone []consensus.Server
	for _, s := range conf {
		if s.Voter {
			voters++
		}
		m, known := v.Member(s.ID)
		if s.ID != v.Self && known && !m.Alive() && m.DepartedFor(now) >= removeAfter {
			gone = append(gone, s)
		}
	}
	goneVoters := 0
	for _, s := range gone {
		if s.Voter {
			goneVoters++
		}
	}
	for _, s := range gone {
		if !s.Voter || 2*goneVoters < voters {
			out = append(out, change{remove: true, server: s, why: "departed"})
		}
	}
	return out
}

// joins lists the additions and updates of plan.
func joins(v *cluster.View, conf []consensus.Server) []change {
	var out []change
	inConf := map[string]consensus.Server{}
	for _, s := range conf {
		inConf[s.ID] = s
	}
	for _, m := range v.Members {
		if !m.Alive() || m.Raft.Addr == "" || m.ID == v.Self {
			continue
		}
		want := consensus.Server{ID: m.ID, Addr: m.Raft.Addr, Voter: m.Raft.Server}
		have, ok := inConf[m.ID]
		switch {
		case !ok:
			out = append(out, change{server: want, why: "joined"})
		case have.Addr != want.Addr:
			out = append(out, change{server: want, why: "moved"})
		case !have.Voter && want.Voter:
			out = append(out, change{server: want, why: "promoted to server"})
		}
	}
	return out
}
