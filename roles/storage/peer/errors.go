package peer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"

	"github.com/ronhq/ron/httpx"
)

// Reasons a call to a peer failed (PutError.Reason).
const (
	ReasonConnection   = "connection"    // no HTTP answer: dial, reset, token, cancelled
	ReasonStall        = "stall"         // no progress for Options.Stall
	ReasonTargetFull   = "target_full"   // 507
	ReasonBusy         = "busy"          // 429
	ReasonUnavailable  = "unavailable"   // 503 and every other 5xx
	ReasonHashMismatch = "hash_mismatch" // 409
	ReasonRejected     = "rejected"      // any other non-2xx answer
)

// PutError is every failure of PutReplica and Has: Status is the HTTP status
// (0 when there was no HTTP answer), Reason one of the Reason* constants, Err
// the cause (the target's *httpx.Error envelope when it sent one).
type PutError struct {
	Status int
	Reason string
	Err    error
}

func (e *PutError) Error() string {
	s := "peer: " + e.Reason
	if e.Status != 0 {
		s += " (" + strconv.Itoa(e.Status) + ")"
	}
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// Unwrap returns the cause.
func (e *PutError) Unwrap() error { return e.Err }

// ReasonOf returns err's Reason when it is a *PutError, else "".
func ReasonOf(err error) string {
	var pe *PutError
	if errors.As(err, &pe) {
		return pe.Reason
	}
	return ""
}

// reasonFor maps a non-2xx status to its Reason.
func reasonFor(status int) string {
	switch {
	case status == http.StatusInsufficientStorage:
		return ReasonTargetFull
	case status == http.StatusTooManyRequests:
		return ReasonBusy
	case status == http.StatusConflict:
		return ReasonHashMismatch
	case status >= 500:
		return ReasonUnavailable
	}
	return ReasonRejected
}

// errStall is the cancellation cause the watchdog sets.
var errStall = errors.New("no progress")

// transportError wraps a failed exchange (no HTTP answer): a stall when the
// watchdog cancelled ctx, otherwise a connection failure.
func (c *Client) transportError(ctx context.Context, err error) *PutError {
	if errors.Is(context.Cause(ctx), errStall) {
		c.stalled()
		return &PutError{Reason: ReasonStall, Err: fmt.Errorf("no progress for %s: %w", c.opt.Stall, err)}
	}
	return &PutError{Reason: ReasonConnection, Err: err}
}

// statusError builds the PutError of a non-2xx answer, decoding the error
// envelope from body when there is one (at most maxReplyBytes are read).
func statusError(resp *http.Response) *PutError {
	pe := &PutError{Status: resp.StatusCode, Reason: reasonFor(resp.StatusCode)}
	data, _ := io.ReadAll(io.LimitReader(resp.Body, maxReplyBytes))
	var env httpx.Envelope
	if json.Unmarshal(data, &env) == nil && env.Error != nil && env.Error.Code != "" {
		env.Error.Status = resp.StatusCode
		pe.Err = env.Error
	} else {
		pe.Err = errors.New(http.StatusText(resp.StatusCode))
	}
	return pe
}

// discard reads what is left of a response body, up to limit bytes, and
// closes it, so that a short answer leaves its connection reusable.
func discard(body io.ReadCloser, limit int64) {
	_, _ = io.Copy(io.Discard, io.LimitReader(body, limit))
	_ = body.Close()
}
