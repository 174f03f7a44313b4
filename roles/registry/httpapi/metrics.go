package httpapi

import (
	"strings"

	"github.com/VictoriaMetrics/metrics"

	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/roles/registry/registryapi"
	"github.com/ronhq/ron/runtime"
)

// Operations whose handler-side rejections are audited (docs/registry.md §6).
const (
	opPropose = "propose"
	opApprove = "approve"
	opCommit  = "commit"
)

// Disconnect reasons of ron_registry_sse_disconnects_total.
const (
	discWriteTimeout = "write_timeout"
	discClient       = "client"
	discShutdown     = "shutdown"
)

// meters are the API's metrics (docs/registry.md §8).
type meters struct {
	m       *runtime.Metrics
	dropped *metrics.Counter
	disc    map[string]*metrics.Counter
}

func newMeters(m *runtime.Metrics) *meters {
	mt := &meters{m: m, dropped: m.Counter("registry_sse_dropped_total", "role", registryapi.RoleName),
		disc: map[string]*metrics.Counter{}}
	for _, r := range []string{discWriteTimeout, discClient, discShutdown} {
		mt.disc[r] = m.Counter("registry_sse_disconnects_total", "role", registryapi.RoleName, "reason", r)
	}
	return mt
}

// disconnect counts a stream's end under reason ("" counts nothing).
func (mt *meters) disconnect(reason string) {
	if c := mt.disc[reason]; c != nil {
		c.Inc()
	}
}

// busy counts a 429 of endpoint (a route template).
func (mt *meters) busy(endpoint string) { mt.m.BusyRejection(registryapi.RoleName, endpoint) }

// rejected audits a write refused before it reached the committer (an
// info line with event, code, proposal_id, corr_id, and
// ron_registry_audit_events_total{event}), counts it like the committer
// counts its own rejections, and returns err unchanged.
func (a *API) rejected(op, corr, id string, err error) error {
	code := httpx.AsError(err).Code
	event := op + ".rejected"
	m := a.opt.Metrics
	m.Counter("registry_audit_events_total", "role", registryapi.RoleName, "event", event).Inc()
	switch op {
	case opPropose:
		m.Counter("registry_proposals_total", "role", registryapi.RoleName, "result", "rejected").Inc()
	case opApprove:
		m.Counter("registry_approvals_total", "role", registryapi.RoleName, "result", "rejected").Inc()
	case opCommit:
		m.Counter("registry_commits_total", "role", registryapi.RoleName, "result", "error").Inc()
	}
	ev := a.opt.Logger.Info().Str("event", event).Str("code", code)
	if id != "" {
		ev = ev.Str("proposal_id", clip(id, 40))
	}
	if corr != "" {
		ev = ev.Str("corr_id", corr)
	}
	ev.Msg("audit")
	return err
}

// clip bounds an untrusted string for a log line.
func clip(s string, n int) string {
	if len(s) > n {
		s = s[:n]
	}
	return strings.ToValidUTF8(s, "?")
}
