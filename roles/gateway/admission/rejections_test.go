package admission

import (
	"errors"
	"testing"

	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/roles/gateway/drr"
	"github.com/ronhq/ron/runtime"
)

func TestReasonOf(t *testing.T) {
	limit := func(status int, code, key, value string) error {
		return httpx.NewError(status, code, "x").WithDetails(map[string]any{key: value})
	}
	tests := []struct {
		name string
		err  error
		want Reason // "" → not counted
	}{
		{"tenant bucket", limit(429, httpx.CodeRateLimited, "limit", "tenant_rps"), ReasonTenantRPS},
		{"suspended (403 with reason)", limit(403, httpx.CodeForbidden, "reason", "tenant_suspended"), ReasonTenantSuspended},
		{"byte quota", limit(429, httpx.CodeRateLimited, "limit", "tenant_bytes"), ReasonTenantBytes},
		{"tenant queue", drr.ErrTenantQueue, ReasonTenantQueue},
		{"drop-oldest", drr.ErrDropped, ReasonSchedDrop},
		{"queue wait", drr.ErrQueueWait, ReasonQueueWait},
		{"draining", drr.ErrDraining, ""},
		{"shed writes", limit(503, httpx.CodeDegraded, "limit", "shed_writes"), ReasonShedWrites},
		{"body cap", ErrBodyCap, ReasonBodyCap},
		{"payload too large without details", httpx.NewError(413, httpx.CodePayloadTooLarge, "x"), ReasonBodyCap},
		{"decoded cap", httpx.NewError(413, httpx.CodeDecodedCap, "x"), ReasonDecodedCap},
		{"unauthorized", httpx.NewError(401, httpx.CodeUnauthorized, "x"), ReasonUnauthorized},
		{"forbidden", httpx.NewError(403, httpx.CodeForbidden, "x"), ReasonForbidden},
		{"conn cap", limit(429, httpx.CodeBusy, "limit", "conn_cap"), ReasonConnCap},
		{"max streams", limit(429, httpx.CodeBusy, "limit", "max_streams"), ""},
		{"unsupported media", httpx.NewError(415, httpx.CodeUnsupportedMedia, "x"), ""},
		{"plain error", errors.New("boom"), ""},
		{"nil", nil, ""},
		{"bad request timeout", ErrRequestTimeout, ""},
	}
	for _, tc := range tests {
		got, ok := ReasonOf(tc.err)
		if got != tc.want || ok != (tc.want != "") {
			t.Errorf("%s: ReasonOf = %q, %v; want %q", tc.name, got, ok, tc.want)
		}
	}
}

func TestRejections(t *testing.T) {
	m := runtime.NewMetrics(nil)
	l := NewLabeler([]string{"acme"})
	r := NewRejections(m, "", l.Label)
	r.Rejected("acme", ReasonTenantRPS)
	r.Rejected("acme", ReasonTenantRPS)
	r.Rejected("anon:1.2.3.0/24", ReasonQueueWait)
	r.Rejected("anon:4.5.6.0/24", ReasonQueueWait)
	r.Rejected("", ReasonBodyCap)
	if !r.RejectedErr("zeta", drr.ErrDropped) || r.RejectedErr("zeta", drr.ErrDraining) {
		t.Fatal("RejectedErr counted wrongly")
	}
	r.Admitted("acme")
	r.Admitted("default")
	r.Admitted("default")
	want := map[string]float64{
		`ron_gateway_rejected_total{role="gateway",reason="tenant_rps",tenant="acme"}`:  2,
		`ron_gateway_rejected_total{role="gateway",reason="queue_wait",tenant="anon"}`:  2,
		`ron_gateway_rejected_total{role="gateway",reason="body_cap",tenant="other"}`:   1,
		`ron_gateway_rejected_total{role="gateway",reason="sched_drop",tenant="other"}`: 1,
		`ron_gateway_admitted_total{role="gateway",tenant="acme"}`:                      1,
		`ron_gateway_admitted_total{role="gateway",tenant="default"}`:                   2,
	}
	got := m.Values()
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %v, want %v", k, got[k], v)
		}
	}
	if len(got) != len(want) {
		t.Errorf("series %v", got)
	}
}

func TestRejectionsDefaults(t *testing.T) {
	r := NewRejections(nil, "gw", nil)
	r.Rejected("acme", ReasonForbidden)
	r.Admitted("anon:1.2.3.0/24")
	got := r.m.Values()
	if got[`ron_gateway_rejected_total{role="gw",reason="forbidden",tenant="other"}`] != 1 ||
		got[`ron_gateway_admitted_total{role="gw",tenant="other"}`] != 1 {
		t.Fatalf("nil label must not leak ids: %v", got)
	}
	r = NewRejections(nil, "", func(string) string { return "" })
	r.Admitted("x")
	if r.m.Values()[`ron_gateway_admitted_total{role="gateway",tenant="other"}`] != 1 {
		t.Fatal("empty label not mapped to other")
	}
	if len(Reasons()) != 12 {
		t.Fatalf("%d reasons", len(Reasons()))
	}
}
