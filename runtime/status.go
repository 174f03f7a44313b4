package runtime

import (
	"context"
	"slices"
	"time"
)

// statusReadyTimeout bounds the readiness checks behind Status.
const statusReadyTimeout = 2 * time.Second

// RoleStatus is one role's entry in /api/v1/status (RON-STATUS-V1).
type RoleStatus struct {
	Name      string `json:"name"`
	State     State  `json:"state"`
	Ready     bool   `json:"ready"`
	Degraded  bool   `json:"degraded"`
	Restarts  int    `json:"restarts"`
	Listen    string `json:"listen"`
	LastError string `json:"last_error"`
	Details   any    `json:"details,omitempty"`
}

// Addresser is implemented by roles that can report their bound listener
// address (useful when configured with port 0); status shows it while the
// role runs.
type Addresser interface{ Addr() string }

// roleView is a copy of an entry's guarded fields.
type roleView struct {
	role    Role
	listen  string
	state   State
	lastErr string
}

// snapshot copies the roles of the table (not the node's parts) under the
// lock; callers then talk to roles without holding it.
func (m *Manager) snapshot() []roleView {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]roleView, 0, len(m.entries))
	for _, e := range m.entries {
		if !e.part {
			out = append(out, roleView{role: e.role, listen: e.listen, state: e.state, lastErr: e.lastErr})
		}
	}
	return out
}

// Status returns every role's status in table order, with readiness
// checks bounded by a 2 s timeout. See StatusContext.
func (m *Manager) Status() []RoleStatus {
	ctx, cancel := context.WithTimeout(context.Background(), statusReadyTimeout)
	defer cancel()
	return m.StatusContext(ctx)
}

// StatusContext returns every role's status in table order. A role is
// ready when it is running, the node is not draining and its own
// readiness lists nothing missing; degraded when its task group is over
// its crash budget or its readiness lists something degraded.
func (m *Manager) StatusContext(ctx context.Context) []RoleStatus {
	draining := m.Draining()
	views := m.snapshot()
	out := make([]RoleStatus, 0, len(views))
	for _, v := range views {
		ready, degraded := roleFlagsOf(draining, roleReadiness(ctx, v))
		st := RoleStatus{
			Name:      v.role.Name(),
			State:     v.state,
			Ready:     ready,
			Degraded:  degraded,
			Listen:    v.listen,
			LastError: v.lastErr,
		}
		if a, ok := v.role.(Addresser); ok && v.state == StateRunning {
			st.Listen = a.Addr()
		}
		if le, ok := v.role.(LastErrorer); ok && st.LastError == "" {
			st.LastError = le.LastError()
		}
		if g := taskGroupOf(v.role); g != nil {
			st.Restarts = g.Restarts()
		}
		if d, ok := v.role.(Detailer); ok {
			st.Details = d.Details()
		}
		out = append(out, st)
	}
	return out
}

// Readiness aggregates all roles for /readyz: roles not running are
// missing, each running role adds its own Readiness (if a Readier) and its
// name to Degraded when its task group is over budget. While draining,
// every role is missing.
func (m *Manager) Readiness(ctx context.Context) Readiness {
	views := m.snapshot()
	var r Readiness
	if m.Draining() {
		for _, v := range views {
			r.Missing = append(r.Missing, v.role.Name())
		}
		return r
	}
	for _, v := range views {
		rr := roleReadiness(ctx, v)
		r.Missing = append(r.Missing, rr.Missing...)
		r.Degraded = append(r.Degraded, rr.Degraded...)
		if rr.Shedding != nil {
			r.Shedding = rr.Shedding
		}
	}
	return r
}

// roleFlagsOf is a role's ready and degraded flags of the status: ready
// when the node is not draining and nothing is missing, degraded when
// something is degraded.
func roleFlagsOf(draining bool, rd Readiness) (ready, degraded bool) {
	return !draining && len(rd.Missing) == 0, len(rd.Degraded) > 0
}

// roleReadiness is one role's readiness given its state.
func roleReadiness(ctx context.Context, v roleView) Readiness {
	name := v.role.Name()
	if v.state != StateRunning {
		return Readiness{Missing: []string{name}}
	}
	var r Readiness
	if rd, ok := v.role.(Readier); ok {
		own := rd.Ready(ctx)
		r.Missing = slices.Clone(own.Missing)
		r.Degraded = slices.Clone(own.Degraded)
		r.Shedding = own.Shedding
	}
	if g := taskGroupOf(v.role); g != nil && g.Degraded() && !slices.Contains(r.Degraded, name) {
		r.Degraded = append(r.Degraded, name)
	}
	return r
}
