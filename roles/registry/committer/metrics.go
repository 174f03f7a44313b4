package committer

import (
	"github.com/VictoriaMetrics/metrics"

	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/roles/registry/registryapi"
	"github.com/ronhq/ron/roles/registry/registryapi/descriptor"
	"github.com/ronhq/ron/runtime"
)

// roleName is the role label of every metric.
const roleName = registryapi.RoleName

// Result labels of docs/registry.md §8.
const (
	resOK            = "ok"
	resChainMismatch = "chain_mismatch"
	resQuorumFailed  = "quorum_failed"
	resExpired       = "expired"
	resError         = "error"
	resAccepted      = "accepted"
	resRejected      = "rejected"
	resStale         = "stale"
	resInvalidSig    = "invalid_sig"
	resDuplicate     = "duplicate"
)

// Endpoint labels of ron_busy_rejections_total (route templates).
const (
	endpointPropose = "/registry/proposals"
	endpointApprove = "/registry/approvals/{id}"
	endpointCommit  = "/registry/commit/{id}"
)

// meters are the committer's docs/registry.md §8 metrics.
type meters struct {
	m         *runtime.Metrics
	casFail   *metrics.Counter
	ioTimeout *metrics.Counter
	latency   *metrics.Histogram
	groupSize *metrics.Histogram
	fsyncLog  *metrics.Histogram
	fsyncDB   *metrics.Histogram
}

func newMeters(m *runtime.Metrics) *meters {
	mt := &meters{
		m:         m,
		casFail:   m.Counter("commit_cas_fail_total", "role", roleName),
		ioTimeout: m.Counter("io_timeouts_total", "role", roleName, "op", "commit"),
		latency:   m.Histogram("commit_latency_seconds", "role", roleName),
		groupSize: m.Histogram("registry_group_commit_size", "role", roleName),
		fsyncLog:  m.Histogram("registry_fsync_seconds", "role", roleName, "file", "log"),
		fsyncDB:   m.Histogram("registry_fsync_seconds", "role", roleName, "file", "db"),
	}
	for _, r := range []string{resOK, resChainMismatch, resQuorumFailed, resExpired, resError} {
		mt.commit(r).Add(0)
	}
	for _, r := range []string{resAccepted, resRejected, resExpired, resStale} {
		mt.proposal(r).Add(0)
	}
	for _, r := range []string{resAccepted, resInvalidSig, resDuplicate, resRejected} {
		mt.approval(r).Add(0)
	}
	return mt
}

func (mt *meters) commit(result string) *metrics.Counter {
	return mt.m.Counter("registry_commits_total", "role", roleName, "result", result)
}

func (mt *meters) proposal(result string) *metrics.Counter {
	return mt.m.Counter("registry_proposals_total", "role", roleName, "result", result)
}

func (mt *meters) approval(result string) *metrics.Counter {
	return mt.m.Counter("registry_approvals_total", "role", roleName, "result", result)
}

func (mt *meters) audit(event string) {
	mt.m.Counter("registry_audit_events_total", "role", roleName, "event", event).Inc()
}

func (mt *meters) recovery(kind string) {
	mt.m.Counter("registry_recoveries_total", "role", roleName, "kind", kind).Inc()
}

func (mt *meters) busy(endpoint string) { mt.m.BusyRejection(roleName, endpoint) }

// registerGauges exports the HEAD, proposal and readiness gauges, read from
// the current snapshot on every scrape.
func (c *Committer) registerGauges() {
	g := func(name string, fn func() float64) { c.mt.m.Gauge(name, fn, "role", roleName) }
	head := func(fn func(h *Head) float64) func() float64 { // no HEAD yet (replicated, before init): -1
		return func() float64 {
			if h := c.snap.Load().head; h != nil {
				return fn(h)
			}
			return -1
		}
	}
	g("registry_head_version", head(func(h *Head) float64 { return float64(h.Version) }))
	g("registry_pending_proposals", func() float64 { return float64(len(c.snap.Load().open)) })
	g("registry_signers", head(func(h *Head) float64 { return float64(len(h.Set.Signers)) }))
	g("registry_quorum_m", head(func(h *Head) float64 { return float64(h.Set.Quorum.M) }))
	g("registry_write_ready", func() float64 {
		if len(c.WriteUnready()) == 0 {
			return 1
		}
		return 0
	})
}

// commitResult maps a commit reply's error to its commits_total label.
func commitResult(err error) string {
	switch codeOf(err) {
	case "":
		return resOK
	case descriptor.CodeChainMismatch:
		return resChainMismatch
	case descriptor.CodeQuorumFailed:
		return resQuorumFailed
	case httpx.CodeGone:
		return resExpired
	}
	return resError
}

// approvalResult maps an approve reply's error to its approvals_total label.
func approvalResult(err error) string {
	switch codeOf(err) {
	case "":
		return resAccepted
	case descriptor.CodeInvalidSig:
		return resInvalidSig
	case descriptor.CodeDuplicateApproval:
		return resDuplicate
	}
	return resRejected
}

// proposalResult maps a propose reply's error to its proposals_total label.
func proposalResult(err error) string {
	if err == nil {
		return resAccepted
	}
	return resRejected
}
