package topology

import (
	"slices"

	"github.com/ronhq/ron/runtime/cluster"
)

// Place is where a reader finds a role it calls.
type Place int

// The places, in the order Find tries them.
const (
	// Nowhere: the role is not in this process, no URL is configured and
	// the node is not in a cluster.
	Nowhere Place = iota
	// InProcess: the role runs in the reader's process; calls stay in it.
	InProcess
	// Configured: the reader's configuration names the role's URL.
	Configured
	// Members: the alive cluster members that run the role (a Pool); there
	// may be none at a given moment.
	Members
)

// String is how a reader describes the place in its start-up log.
func (p Place) String() string {
	switch p {
	case InProcess:
		return "in-process"
	case Configured:
		return "http"
	case Members:
		return "cluster members"
	}
	return "none"
}

// Find is the one answer to "where is role X" (docs/architecture.md §4): in
// this process when it runs here, else at the configured URLs when one is
// set, else among the cluster's members when the node is in a cluster (m
// not nil), else nowhere. Every reader asks it, so the order is written
// once.
func Find(inProcess bool, m cluster.Membership, urls ...string) Place {
	switch {
	case inProcess:
		return InProcess
	case slices.ContainsFunc(urls, func(u string) bool { return u != "" }):
		return Configured
	case m != nil:
		return Members
	}
	return Nowhere
}
