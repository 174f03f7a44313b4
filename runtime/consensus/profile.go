package consensus

import (
	"fmt"
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

// ParseProfile returns the profile named s ("" is ProfileLAN).
func ParseProfile(s string) (Profile, error) {
	switch Profile(s) {
	case "", ProfileLAN:
		return ProfileLAN, nil
	case ProfileLocal:
		return ProfileLocal, nil
	}
	return "", fmt.Errorf("consensus: profile %q: want lan or local", s)
}

// config returns raft's configuration for node id under p.
func (p Profile) config(id string) *raft.Config {
	c := raft.DefaultConfig()
	c.LocalID = raft.ServerID(id)
	if p == ProfileLocal {
		c.HeartbeatTimeout = 200 * time.Millisecond
		c.ElectionTimeout = 200 * time.Millisecond
		c.LeaderLeaseTimeout = 100 * time.Millisecond
		c.CommitTimeout = 10 * time.Millisecond
	}
	return c
}

// bound is how long a leaderless group may take to elect a leader under p:
// a few election timeouts, the wait Apply allows for a leader to appear.
func (p Profile) bound() time.Duration {
	return 4 * p.config("x").ElectionTimeout
}
