package runtime

import (
	"context"
	"fmt"
)

// Role is one of ron's five roles (storage, index, registry, gateway, edge).
//
// Constructors have no side effects; all of a role's resources are acquired
// in Start and released in Stop.
type Role interface {
	// Name is the role's stable name ("storage", "index", …).
	Name() string
	// Start binds listeners and opens stores, and returns once the role
	// can serve. An error is fatal: the process stops naming the role.
	Start(ctx context.Context) error
	// Run serves until ctx ends. A non-nil return before ctx ends is a
	// fatal role failure; a nil return only means Run has nothing more to do.
	Run(ctx context.Context) error
	// Stop drains in-flight work until ctx's deadline, then aborts what is
	// left and returns. It must return promptly once ctx has ended.
	Stop(ctx context.Context) error
}

// Drainer is implemented by roles that can stop accepting new work at once
// (shutdown step 2): listeners stop accepting, queues answer "draining".
// Drain must not block.
type Drainer interface{ Drain() }

// Readier is implemented by roles with their own readiness checks.
// Ready must respect ctx and should be cheap; it is called on every /readyz.
type Readier interface {
	Ready(ctx context.Context) Readiness
}

// Applier is implemented by roles that accept a new config without a
// restart. Apply returns an error naming any key that cannot change live.
type Applier interface{ Apply(cfg any) error }

// ApplyChecker is implemented by Appliers that can tell, without changing
// anything, whether Apply would accept cfg. A reload checks every role before
// applying to any, so it takes effect in all roles or in none.
type ApplyChecker interface{ CheckApply(cfg any) error }

// Detailer is implemented by roles that publish their own status object
// (the "details" field of /api/v1/status). Details must be cheap and
// return a value safe to marshal concurrently with the role's work.
type Detailer interface{ Details() any }

// LastErrorer is implemented by roles that know why they are impaired while
// still running (the registry's write-unready reasons). The status shows it
// as last_error when the manager has recorded no failure of its own.
type LastErrorer interface{ LastError() string }

// TaskGrouper is implemented by roles that run supervised workers. The
// Manager reads the group's Degraded and Restarts for readiness and status,
// and stops the group after the role's Stop (a no-op when Stop already did),
// so no worker outlives the shutdown unaccounted for.
//
// Convention: a role creates its TaskGroup in its constructor with
// NewTaskGroup(name, log, metrics, WithBus(bus)), starts workers with Go in
// Start, and stops the group in Stop.
type TaskGrouper interface{ TaskGroup() *TaskGroup }

// Readiness lists what keeps a node or a role from being fully ready.
// Items are a role name ("storage") or "role:detail" ("edge:pack:world").
// The zero value means ready.
type Readiness struct {
	Missing  []string  `json:"missing,omitempty"`
	Degraded []string  `json:"degraded,omitempty"`
	Shedding *Shedding `json:"shedding,omitempty"`
}

// Shedding says which request classes a role refuses while overloaded (the
// gateway, docs/gateway.md §8); /readyz shows it.
type Shedding struct {
	Writes bool `json:"writes"`
	Reads  bool `json:"reads"`
}

// Ready reports whether nothing is missing and nothing is degraded.
func (r Readiness) Ready() bool { return len(r.Missing) == 0 && len(r.Degraded) == 0 }

// State is a role's lifecycle state: New → Starting → Running → Stopping →
// Terminated, or Failed from any state after a fatal error.
type State int32

// The lifecycle states of a role.
const (
	StateNew State = iota
	StateStarting
	StateRunning
	StateStopping
	StateTerminated
	StateFailed
)

var stateNames = [...]string{"new", "starting", "running", "stopping", "terminated", "failed"}

// String returns the lowercase state name used in /api/v1/status.
func (s State) String() string {
	if s < 0 || int(s) >= len(stateNames) {
		return "unknown"
	}
	return stateNames[s]
}

// MarshalText encodes the state as its lowercase name.
func (s State) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText decodes a lowercase state name (clients reading status).
func (s *State) UnmarshalText(b []byte) error {
	for i, n := range stateNames {
		if n == string(b) {
			*s = State(i)
			return nil
		}
	}
	return fmt.Errorf("runtime: unknown state %q", b)
}
