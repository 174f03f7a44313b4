package committer

import (
	"net/http"

	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/roles/registry/registryapi/descriptor"
)

// Retry-After values of docs/registry.md §3.
const (
	retryBusy        = 1
	retryMaintenance = 30
	retryUnready     = 5
)

// errChainMismatch: 409 chain_mismatch carrying the current HEAD.
func errChainMismatch(h *Head) error {
	return httpx.NewError(http.StatusConflict, descriptor.CodeChainMismatch,
		"proposal does not extend HEAD %d", h.Version).
		WithDetails(map[string]any{"reason": descriptor.ReasonChain, "head_version": h.Version, "head_payload_b3": h.PayloadB3})
}

// errNotFound: 404 not_found for an unknown or deleted proposal.
func errNotFound() error {
	return httpx.NewError(http.StatusNotFound, httpx.CodeNotFound, "proposal not found")
}

// errExpired: 410 gone (reason expired).
func errExpired() error {
	return httpx.NewError(http.StatusGone, httpx.CodeGone, "proposal expired").
		WithDetails(map[string]any{"reason": "expired"})
}

// errCommittedConflict: 409 conflict (reason committed), approve on a
// committed proposal.
func errCommittedConflict() error {
	return httpx.NewError(http.StatusConflict, httpx.CodeConflict, "proposal already committed").
		WithDetails(map[string]any{"reason": "committed"})
}

// errDuplicate: 409 duplicate_approval so a retrying client sees that its
// first attempt landed.
func errDuplicate(count int, status string, sameSig bool) error {
	return httpx.NewError(http.StatusConflict, descriptor.CodeDuplicateApproval, "signer already approved").
		WithDetails(map[string]any{"reason": descriptor.CodeDuplicateApproval, "approvals": count, "status": status, "same_sig": sameSig})
}

// errQuorumFailed: 422 quorum_failed {have, need}.
func errQuorumFailed(have, need int) error {
	return httpx.NewError(http.StatusUnprocessableEntity, descriptor.CodeQuorumFailed,
		"%d of %d required approvals", have, need).
		WithDetails(map[string]any{"reason": descriptor.CodeQuorumFailed, "have": have, "need": need})
}

// errBusy: 429 busy, Retry-After 1.
func errBusy(what string) error {
	return httpx.NewError(http.StatusTooManyRequests, httpx.CodeBusy, "%s", what).WithRetryAfter(retryBusy)
}

// errTimeout: 503 timeout; the operation may still land.
func errTimeout() error {
	return httpx.NewError(http.StatusServiceUnavailable, httpx.CodeTimeout,
		"no committer reply in time; the operation may still land: retry").WithRetryAfter(retryBusy)
}

// errDraining: 503 draining, Retry-After 5.
func errDraining() error {
	return httpx.NewError(http.StatusServiceUnavailable, httpx.CodeDraining, "registry is shutting down").
		WithRetryAfter(retryUnready)
}

// errNotReady: 503 not_ready with details.reason; maintenance waits 30 s,
// the other reasons 5 s.
func errNotReady(reason string) error {
	retry := retryUnready
	if reason == ReasonMaintenance {
		retry = retryMaintenance
	}
	return httpx.NewError(http.StatusServiceUnavailable, httpx.CodeNotReady, "registry writes unavailable: %s", reason).
		WithRetryAfter(retry).WithDetails(map[string]any{"reason": reason})
}

// errInternal: 500 internal with a message naming the failed step.
func errInternal(format string, args ...any) error {
	return httpx.NewError(http.StatusInternalServerError, httpx.CodeInternal, format, args...)
}

// codeOf returns err's envelope code ("" for nil).
func codeOf(err error) string {
	if err == nil {
		return ""
	}
	return httpx.AsError(err).Code
}
