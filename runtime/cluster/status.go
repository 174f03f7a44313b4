package cluster

import (
	"slices"
	"time"
)

// Status is the top-level "cluster" object of /api/v1/status in cluster
// mode (docs/cluster.md §9).
type Status struct {
	NodeID  string         `json:"node_id"`
	Zone    string         `json:"zone"`
	Members []StatusMember `json:"members"`
}

// StatusMember is one member in Status: since is when it entered its state
// (RFC 3339, UTC); roles is never null.
type StatusMember struct {
	ID    string    `json:"id"`
	State State     `json:"state"`
	Roles []string  `json:"roles"`
	Zone  string    `json:"zone"`
	Since time.Time `json:"since"`
}

// Status returns the membership as /api/v1/status and GET
// /api/v1/cluster/members show it: this node's id and zone, and the
// current View's members by id.
func (c *Cluster) Status() Status {
	return StatusOf(c.View(), c.local.Load().meta.Zone)
}

// StatusOf renders v as a Status for a node in zone.
func StatusOf(v *View, zone string) Status {
	st := Status{NodeID: v.Self, Zone: zone, Members: make([]StatusMember, 0, len(v.Members))}
	for _, m := range v.Members {
		roles := slices.Clone(m.Roles)
		if roles == nil {
			roles = []string{}
		}
		st.Members = append(st.Members, StatusMember{ID: m.ID, State: m.State, Roles: roles, Zone: m.Zone, Since: m.Since.UTC()})
	}
	return st
}
