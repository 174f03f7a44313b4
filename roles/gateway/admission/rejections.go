package admission

import (
	"errors"
	"net/http"
	"sync"

	"github.com/VictoriaMetrics/metrics"

	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/roles/gateway/gatewayapi"
	"github.com/ronhq/ron/runtime"
)

// Reason is the reason label of ron_gateway_rejected_total (docs/gateway.md
// §10). Only the constants below are valid.
type Reason string

// The rejection reasons of docs/gateway.md §10.
const (
	ReasonTenantRPS       Reason = "tenant_rps"
	ReasonTenantSuspended Reason = "tenant_suspended"
	ReasonTenantQueue     Reason = "tenant_queue"
	ReasonTenantBytes     Reason = "tenant_bytes"
	ReasonSchedDrop       Reason = "sched_drop"
	ReasonQueueWait       Reason = "queue_wait"
	ReasonShedWrites      Reason = "shed_writes"
	ReasonBodyCap         Reason = "body_cap"
	ReasonDecodedCap      Reason = "decoded_cap"
	ReasonUnauthorized    Reason = "unauthorized"
	ReasonForbidden       Reason = "forbidden"
	ReasonConnCap         Reason = "conn_cap"
)

// Reasons lists every valid Reason.
func Reasons() []Reason {
	return []Reason{ReasonTenantRPS, ReasonTenantSuspended, ReasonTenantQueue, ReasonTenantBytes,
		ReasonSchedDrop, ReasonQueueWait, ReasonShedWrites, ReasonBodyCap, ReasonDecodedCap,
		ReasonUnauthorized, ReasonForbidden, ReasonConnCap}
}

// limitReasons maps details.limit / details.reason values of admission
// errors to their Reason; "queue_full" is the scheduler's drop-oldest.
var limitReasons = map[string]Reason{
	"tenant_rps": ReasonTenantRPS, "tenant_suspended": ReasonTenantSuspended,
	"tenant_queue": ReasonTenantQueue, "tenant_bytes": ReasonTenantBytes,
	"queue_full": ReasonSchedDrop, "sched_drop": ReasonSchedDrop, "queue_wait": ReasonQueueWait,
	"shed_writes": ReasonShedWrites, "body_cap": ReasonBodyCap, "decoded_cap": ReasonDecodedCap,
	"conn_cap": ReasonConnCap,
}

// ReasonOf names the Reason of an admission refusal: by the *httpx.Error's
// details.reason or details.limit first, then by its code (decoded_cap,
// payload_too_large → body_cap, unauthorized, forbidden). ok is false for
// errors that are not refusals counted by reason (a 415, a 500, a busy
// answer of the in-flight backstop, a non-*httpx.Error).
func ReasonOf(err error) (r Reason, ok bool) {
	var he *httpx.Error
	if !errors.As(err, &he) {
		return "", false
	}
	for _, k := range []string{"reason", "limit"} {
		if s, isStr := he.Details[k].(string); isStr {
			if r, ok := limitReasons[s]; ok {
				return r, true
			}
		}
	}
	switch {
	case he.Code == httpx.CodeDecodedCap:
		return ReasonDecodedCap, true
	case he.Code == httpx.CodePayloadTooLarge:
		return ReasonBodyCap, true
	case he.Status == http.StatusUnauthorized:
		return ReasonUnauthorized, true
	case he.Status == http.StatusForbidden:
		return ReasonForbidden, true
	}
	return "", false
}

// Rejections counts admission outcomes per tenant label:
// ron_gateway_rejected_total{tenant,reason} and
// ron_gateway_admitted_total{tenant}. Safe for concurrent use.
type Rejections struct {
	m     *runtime.Metrics
	role  string
	label func(tenant string) string
	cache sync.Map // rejKey → *metrics.Counter
}

type rejKey struct{ label, reason string }

// NewRejections counts under role ("" = "gateway") in m (nil = a private
// set), labeling tenants with label (nil, or a label "", gives "other", so
// that raw ids never become labels; pass a Labeler's Label).
func NewRejections(m *runtime.Metrics, role string, label func(tenant string) string) *Rejections {
	if m == nil {
		m = runtime.NewMetrics(nil)
	}
	if role == "" {
		role = gatewayapi.RoleName
	}
	if label == nil {
		label = func(string) string { return LabelOther }
	}
	return &Rejections{m: m, role: role, label: label}
}

// Rejected counts one refusal of tenant ("" for a request refused before
// its tenant was known: labeled "other") for reason.
func (r *Rejections) Rejected(tenant string, reason Reason) {
	r.counter(tenant, string(reason)).Inc()
}

// RejectedErr counts err under ReasonOf(err) and reports whether it did.
func (r *Rejections) RejectedErr(tenant string, err error) bool {
	reason, ok := ReasonOf(err)
	if ok {
		r.Rejected(tenant, reason)
	}
	return ok
}

// Admitted counts one request of tenant dispatched to an upstream.
func (r *Rejections) Admitted(tenant string) {
	r.counter(tenant, "").Inc()
}

// counter returns the rejected (reason ≠ "") or admitted counter of tenant.
func (r *Rejections) counter(tenant, reason string) *metrics.Counter {
	label := LabelOther
	if tenant != "" {
		if l := r.label(tenant); l != "" {
			label = l
		}
	}
	key := rejKey{label, reason}
	if c, ok := r.cache.Load(key); ok {
		return c.(*metrics.Counter)
	}
	var c *metrics.Counter
	if reason == "" {
		c = r.m.Counter("gateway_admitted_total", "role", r.role, "tenant", label)
	} else {
		c = r.m.Counter("gateway_rejected_total", "role", r.role, "tenant", label, "reason", reason)
	}
	r.cache.Store(key, c)
	return c
}
