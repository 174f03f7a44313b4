package consensus

import (
	"time"

	"github.com/hashicorp/raft"
)

// Profile is a set of Raft timings. ProfileLAN is hashicorp/raft's default
// (heartbeat and election 1 s, leader lease 500 ms), for servers on one
// network; ProfileLocal is five times faster, for servers on one machine
// (tests, a laptop cluster).
type Profile string

// The profiles.
const (
	ProfileLAN   Profile = "lan"
	ProfileLocal Profile = "local"
)

// timings are a profile's Raft timeouts.
type timings struct {
	heartbeat, election, lease, commit time.Duration
}

// timings returns p's timeouts (ProfileLAN's for any other value).
func (p Profile) timings() timings {
	if p == ProfileLocal {
		return timings{heartbeat: 200 * time.Millisecond, election: 200 * time.Millisecond,
			lease: 100 * time.Millisecond, commit: 10 * time.Millisecond}
	}
	return timings{heartbeat: time.Second, election: time.Second, lease: 500 * time.Millisecond,
		commit: 50 * time.Millisecond}
}

// config returns raft's configuration for node id under p.
func (p Profile) config(id string) *raft.Config {
	c, t := raft.DefaultConfig(), p.timings()
	c.LocalID = raft.ServerID(id)
	c.HeartbeatTimeout, c.ElectionTimeout, c.LeaderLeaseTimeout, c.CommitTimeout = t.heartbeat, t.election, t.lease, t.commit
	return c
}

// bound is how long a leaderless group may take to elect a leader under p:
// a few election timeouts, the wait Apply allows for a leader to appear.
func (p Profile) bound() time.Duration { return 4 * p.timings().election }
