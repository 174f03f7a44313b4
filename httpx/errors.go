// Package httpx holds what every ron listener shares: the listener service, the
// middleware chain, the error envelope and the decode guard.
package httpx

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
)

// Stable error codes (docs/architecture.md §5). Clients key on these, never on messages.
const (
	CodeBadRequest          = "bad_request"
	CodeMalformed           = "malformed"
	CodeUnauthorized        = "unauthorized"
	CodeForbidden           = "forbidden"
	CodeNotFound            = "not_found"
	CodeGone                = "gone"
	CodeConflict            = "conflict"
	CodeHashMismatch        = "hash_mismatch"
	CodePreconditionFailed  = "precondition_failed"
	CodeRangeNotSatisfiable = "range_not_satisfiable"
	CodePayloadTooLarge     = "payload_too_large"
	CodeDecodedCap          = "decoded_cap"
	CodeUnsupportedMedia    = "unsupported_media_type"
	CodeMethodNotAllowed    = "method_not_allowed"
	CodeInsufficientStorage = "insufficient_storage"
	CodeCorrupt             = "corrupt"
	CodeBusy                = "busy"
	CodeRateLimited         = "rate_limited"
	CodeTimeout             = "timeout"
	CodeUpstreamUnavailable = "upstream_unavailable"
	CodeNotReady            = "not_ready"
	CodeDraining            = "draining"
	CodeDegraded            = "degraded"
	CodeInternal            = "internal"
	// Registry codes (docs/registry.md §3).
	CodeChainMismatch     = "chain_mismatch"
	CodeDuplicateApproval = "duplicate_approval"
	CodeInvalidSig        = "invalid_sig"
	CodeQuorumFailed      = "quorum_failed"
	// Control-plane code (docs/cluster.md §14): a replicated write found no
	// leader with a majority, or its outcome is unknown.
	CodeNoQuorum = "no_quorum"
)

// Outcomes of a replicated write refused with 503 no_quorum, in its
// details.outcome (docs/cluster.md §14): nothing was written, or the write
// may still be applied (retry only what is safe to repeat).
const (
	OutcomeNotWritten = "not_written"
	OutcomeUnknown    = "unknown"
)

// NoQuorum is the 503 no_quorum of a replicated write (Retry-After 1)
// with details.outcome (OutcomeNotWritten or OutcomeUnknown) and, when
// leader is not "", details.leader: the leader the write was for.
func NoQuorum(outcome, leader, format string, args ...any) *Error {
	d := map[string]any{"outcome": outcome}
	if leader != "" {
		d["leader"] = leader
	}
	return NewError(http.StatusServiceUnavailable, CodeNoQuorum, format, args...).WithDetails(d)
}

// Error is the one error shape every ron listener answers with. It is also an
// error value, so handlers and clients pass it around unchanged.
type Error struct {
	Status     int            `json:"-"`
	Code       string         `json:"code"`
	Message    string         `json:"message"`
	CorrID     string         `json:"corr_id,omitempty"`
	RetryAfter int            `json:"retry_after_s,omitempty"`
	Details    map[string]any `json:"details,omitempty"`
}

// Envelope is the JSON body wrapping an Error: {"error":{...}}.
type Envelope struct {
	Error *Error `json:"error"`
}

func (e *Error) Error() string {
	if e.Message == "" {
		return e.Code
	}
	return e.Code + ": " + e.Message
}

// NewError returns an Error with the given status, code and formatted message.
// 429 and 503 get a Retry-After of 1 second unless WithRetryAfter changes it.
func NewError(status int, code, format string, args ...any) *Error {
	e := &Error{Status: status, Code: code, Message: fmt.Sprintf(format, args...)}
	if status == http.StatusTooManyRequests || status == http.StatusServiceUnavailable {
		e.RetryAfter = 1
	}
	return e
}

// WithRetryAfter returns a copy of e carrying Retry-After seconds.
func (e *Error) WithRetryAfter(seconds int) *Error {
	c := *e
	c.RetryAfter = seconds
	return &c
}

// WithDetails returns a copy of e carrying the given details object.
func (e *Error) WithDetails(d map[string]any) *Error {
	c := *e
	c.Details = d
	return &c
}

// WithReason returns a copy of e whose details carry "reason" = reason,
// keeping the other details.
func (e *Error) WithReason(reason string) *Error {
	d := make(map[string]any, len(e.Details)+1)
	for k, v := range e.Details {
		d[k] = v
	}
	d["reason"] = reason
	return e.WithDetails(d)
}

// BodyAllowed reports whether a response with status may carry a body
// (RFC 9110: not 1xx, 204 or 304).
func BodyAllowed(status int) bool {
	return status >= 200 && status != http.StatusNoContent && status != http.StatusNotModified
}

// AsError converts any error to an *Error: an *Error anywhere in the chain is
// returned as is, anything else becomes a 500 internal error.
func AsError(err error) *Error {
	var he *Error
	if errors.As(err, &he) {
		return he
	}
	return NewError(http.StatusInternalServerError, CodeInternal, "internal error")
}

// WriteError writes err as the JSON envelope with its status and, for 429/503,
// an integer Retry-After header. corrID is copied into the body.
func WriteError(w http.ResponseWriter, corrID string, err error) {
	he := *AsError(err)
	he.CorrID = corrID
	if (he.Status == http.StatusTooManyRequests || he.Status == http.StatusServiceUnavailable) && he.RetryAfter <= 0 {
		he.RetryAfter = 1
	}
	h := w.Header()
	if he.RetryAfter > 0 {
		h.Set("Retry-After", strconv.Itoa(he.RetryAfter))
	}
	if he.Status == http.StatusUnauthorized {
		h.Set("WWW-Authenticate", "Bearer")
	}
	h.Set("Content-Type", "application/json")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Del("Content-Length")
	h.Del("ETag")
	h.Del("Cache-Control")
	body, _ := json.Marshal(Envelope{Error: &he})
	body = append(body, '\n')
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(he.Status)
	_, _ = w.Write(body)
}

// DecodeError reads an error envelope from a response body. It returns an
// *Error with the response status; a body that is not an envelope yields a
// generic error with a code derived from the status.
func DecodeError(status int, body []byte) *Error {
	var env Envelope
	if err := json.Unmarshal(body, &env); err == nil && env.Error != nil && env.Error.Code != "" {
		env.Error.Status = status
		return env.Error
	}
	return &Error{Status: status, Code: codeForStatus(status), Message: http.StatusText(status)}
}

func codeForStatus(status int) string {
	switch status {
	case http.StatusBadRequest:
		return CodeBadRequest
	case http.StatusUnauthorized:
		return CodeUnauthorized
	case http.StatusForbidden:
		return CodeForbidden
	case http.StatusNotFound:
		return CodeNotFound
	case http.StatusMethodNotAllowed:
		return CodeMethodNotAllowed
	case http.StatusConflict:
		return CodeConflict
	case http.StatusGone:
		return CodeGone
	case http.StatusPreconditionFailed:
		return CodePreconditionFailed
	case http.StatusRequestEntityTooLarge:
		return CodePayloadTooLarge
	case http.StatusUnsupportedMediaType:
		return CodeUnsupportedMedia
	case http.StatusRequestedRangeNotSatisfiable:
		return CodeRangeNotSatisfiable
	case http.StatusTooManyRequests:
		return CodeBusy
	case http.StatusRequestTimeout, http.StatusGatewayTimeout:
		return CodeTimeout
	case http.StatusInsufficientStorage:
		return CodeInsufficientStorage
	case http.StatusBadGateway:
		return CodeUpstreamUnavailable
	case http.StatusServiceUnavailable:
		return CodeNotReady
	}
	return CodeInternal
}

// LocalError is what an in-process client returns for err, so that it
// answers exactly like the HTTP client of the same API: nil stays nil; an
// envelope stays itself; ctx ending maps as the HTTP client maps it (503
// upstream_unavailable on cancel, 504 timeout on deadline); anything else is
// 500 internal. Details go through JSON, so numbers are float64 and the
// error compares equal to a decoded envelope.
func LocalError(ctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	var he *Error
	switch {
	case errors.As(err, &he):
	case errors.Is(ctx.Err(), context.Canceled):
		he = NewError(http.StatusServiceUnavailable, CodeUpstreamUnavailable, "request canceled")
	case ctx.Err() != nil:
		he = NewError(http.StatusGatewayTimeout, CodeTimeout, "upstream timed out")
	default:
		he = AsError(err)
	}
	c := *he
	if c.Details != nil {
		b, mErr := json.Marshal(c.Details)
		var d map[string]any
		if mErr == nil && json.Unmarshal(b, &d) == nil {
			c.Details = d
		}
	}
	return &c
}
