package registry

import (
	"github.com/VictoriaMetrics/metrics"

	"github.com/ronhq/ron/roles/registry/registryapi"
	"github.com/ronhq/ron/runtime"
)

// roleName is the role's name and the role label of its metrics.
const roleName = registryapi.RoleName

// Checks of ron_audit_chain_verify_failures_total{check} (docs/registry.md §8).
const (
	checkCRC           = "crc"
	checkCanonical     = "canonical"
	checkVersion       = "version"
	checkPrevHash      = "prev_hash"
	checkPayloadB3     = "payload_b3"
	checkSignature     = "signature"
	checkQuorum        = "quorum"
	checkCommittedAt   = "committed_at"
	checkLeaf          = "leaf"
	checkRoot          = "root"
	checkCheckpointSig = "checkpoint_sig"
	checkSplitView     = "split_view"
)

// allChecks lists every check label, for zero-valued registration.
var allChecks = []string{checkCRC, checkCanonical, checkVersion, checkPrevHash, checkPayloadB3, checkSignature,
	checkQuorum, checkCommittedAt, checkLeaf, checkRoot, checkCheckpointSig, checkSplitView}

// Reasons of ron_registry_prune_skipped_total and of
// ron_registry_reload_fail_total.
const (
	skipNoCheckpoint = "no_checkpoint"
	skipNotVerified  = "not_verified"

	reloadForbidden = "forbidden_config"
	reloadRestart   = "restart_required"
	reloadInvalid   = "invalid"
)

// reloadSource is the source label of ron_registry_reload_success_total:
// Apply does not learn whether SIGHUP or the admin API asked.
const reloadSource = "reload"

// Audit events the role itself emits (the committer emits the write
// path's).
const (
	eventFreeze       = "freeze"
	eventUnfreeze     = "unfreeze"
	eventVerifyFailed = "verify.failed"
	eventTruncate     = "recovery.truncate"
	eventPrune        = "prune"
)

// roleMetrics are the role's own docs/registry.md §8 series (the committer, the API and
// the queues register theirs).
type roleMetrics struct{ m *runtime.Metrics }

func (r roleMetrics) counter(name string, labels ...string) *metrics.Counter {
	return r.m.Counter(name, append([]string{"role", roleName}, labels...)...)
}

func (r roleMetrics) checkpoint(result string) {
	r.counter("registry_checkpoints_total", "result", result).Inc()
}
func (r roleMetrics) pruned(n int) { r.counter("registry_pruned_segments_total").Add(n) }
func (r roleMetrics) pruneSkipped(reason string) {
	r.counter("registry_prune_skipped_total", "reason", reason).Inc()
}
func (r roleMetrics) verifyFailed(check string) {
	r.counter("audit_chain_verify_failures_total", "check", check).Inc()
}
func (r roleMetrics) audit(event string) {
	r.counter("registry_audit_events_total", "event", event).Inc()
}
func (r roleMetrics) reloadOK() {
	r.counter("registry_reload_success_total", "source", reloadSource).Inc()
}
func (r roleMetrics) reloadFail(reason string) {
	r.counter("registry_reload_fail_total", "reason", reason).Inc()
}

// verifySlice records one deep-verifier slice's duration.
func (r roleMetrics) verifySlice(seconds float64) {
	r.m.Histogram("audit_chain_verify_seconds", "role", roleName).Update(seconds)
}

// gauge registers a callback gauge; a later registration of the same name
// (a restarted role on a shared set) replaces the callback.
func (r roleMetrics) gauge(name string, fn func() float64) { r.m.Gauge(name, fn, "role", roleName) }

// register creates the role's counters at zero so every name is exported
// before its first event.
func (r roleMetrics) register() {
	for _, res := range []string{"ok", "error"} {
		r.counter("registry_checkpoints_total", "result", res)
	}
	r.counter("registry_pruned_segments_total")
	for _, reason := range []string{skipNoCheckpoint, skipNotVerified} {
		r.counter("registry_prune_skipped_total", "reason", reason)
	}
	for _, c := range allChecks {
		r.counter("audit_chain_verify_failures_total", "check", c)
	}
	for _, e := range []string{eventFreeze, eventUnfreeze, eventVerifyFailed, eventTruncate, eventPrune} {
		r.counter("registry_audit_events_total", "event", e)
	}
	r.counter("registry_reload_success_total", "source", reloadSource)
	for _, reason := range []string{reloadForbidden, reloadRestart, reloadInvalid} {
		r.counter("registry_reload_fail_total", "reason", reason)
	}
	r.m.Histogram("audit_chain_verify_seconds", "role", roleName)
}
