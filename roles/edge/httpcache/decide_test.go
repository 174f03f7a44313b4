package httpcache

import (
	"net/http"
	"testing"
	"time"
)

func TestDecide(t *testing.T) {
	maxAge := func(v string) []string { return []string{"Cache-Control", v, "Date", httpDate(0)} }
	tests := []struct {
		name        string
		respH       []string // nil with noStored: no stored response
		noStored    bool
		invalidated bool
		method      string
		reqH        []string
		now         float64
		want        Action
		fwd         string
		background  bool
	}{
		{name: "RFC9111 4 miss", noStored: true, want: Fetch, fwd: FwdMiss},
		{name: "RFC9111 5.2.1.7 only-if-cached miss is 504", noStored: true, reqH: []string{"Cache-Control", "only-if-cached"}, want: GatewayTimeout, fwd: FwdMiss},
		{name: "RFC9111 4 POST bypasses", respH: maxAge("max-age=60"), method: "POST", want: Fetch, fwd: FwdBypass},
		{name: "RFC9111 4.2 fresh hit", respH: maxAge("max-age=60"), now: 10, want: ServeFresh},
		{name: "RFC9111 4.2 HEAD shares entries", respH: maxAge("max-age=60"), method: "HEAD", now: 10, want: ServeFresh},
		{name: "RFC9111 4.2 stale validates", respH: maxAge("max-age=60"), now: 61, want: Validate, fwd: FwdStale},
		{name: "RFC9111 4.2 exactly at lifetime is stale", respH: maxAge("max-age=60"), now: 60, want: Validate, fwd: FwdStale},
		{name: "RFC9111 4.2.3 Age beyond max-age is stale", respH: []string{"Cache-Control", "max-age=10", "Age", "15", "Date", httpDate(0)}, want: Validate, fwd: FwdStale},
		{name: "RFC9111 4.2.1 max-age=0 stale at once", respH: []string{"Cache-Control", "max-age=0", "ETag", `"a"`}, want: Validate, fwd: FwdStale},
		{name: "RFC9111 5.2.2.4 response no-cache validates even fresh", respH: []string{"Cache-Control", "max-age=10000, no-cache", "ETag", `"a"`}, now: 1, want: Validate, fwd: FwdStale},
		{name: "spec 7.2 no-cache with field names is plain no-cache", respH: []string{"Cache-Control", `no-cache="a", max-age=3600`}, now: 1, want: Validate, fwd: FwdStale},
		{name: "RFC9213 2.1 CDN no-cache validates", respH: []string{"CDN-Cache-Control", "no-cache", "Cache-Control", "max-age=10000"}, now: 1, want: Validate, fwd: FwdStale},
		{name: "RFC9111 4.4 invalidated entry validates", respH: maxAge("max-age=60"), invalidated: true, now: 1, want: Validate, fwd: FwdStale},
		{name: "RFC9111 4.3.2 If-Match forwarded", respH: maxAge("max-age=60"), reqH: []string{"If-Match", `"a"`}, now: 1, want: Fetch, fwd: FwdRequest},
		{name: "RFC9111 4.3.2 If-Unmodified-Since forwarded", respH: maxAge("max-age=60"), reqH: []string{"If-Unmodified-Since", httpDate(0)}, now: 1, want: Fetch, fwd: FwdRequest},
		{name: "RFC9111 4.3.2 If-Match on stale entry", respH: maxAge("max-age=60"), reqH: []string{"If-Match", `"a"`}, now: 100, want: Fetch, fwd: FwdStale},
		{name: "RFC9111 4.3.2 If-None-Match served from entry", respH: maxAge("max-age=60"), reqH: []string{"If-None-Match", `"a"`}, now: 1, want: ServeFresh},
		{name: "RFC9111 5.2.1.4 request no-cache", respH: maxAge("max-age=3600"), reqH: []string{"Cache-Control", "no-cache"}, now: 1, want: Validate, fwd: FwdRequest},
		{name: "RFC9111 5.4 request Pragma no-cache", respH: maxAge("max-age=3600"), reqH: []string{"Pragma", "no-cache"}, now: 1, want: Validate, fwd: FwdRequest},
		{name: "RFC9111 5.4 Pragma ignored beside Cache-Control", respH: maxAge("max-age=3600"), reqH: []string{"Pragma", "no-cache", "Cache-Control", "max-stale"}, now: 1, want: ServeFresh},
		{name: "RFC9111 5.4 response Pragma ignored", respH: []string{"Cache-Control", "max-age=3600", "Pragma", "no-cache"}, now: 1, want: ServeFresh},
		{name: "RFC9111 5.2.1.1 request max-age=0", respH: maxAge("max-age=3600"), reqH: []string{"Cache-Control", "max-age=0"}, now: 1, want: Validate, fwd: FwdRequest},
		{name: "RFC9111 5.2.1.1 request max-age below Age", respH: []string{"Cache-Control", "max-age=3600", "Age", "1800"}, reqH: []string{"Cache-Control", "max-age=600"}, want: Validate, fwd: FwdRequest},
		{name: "RFC9111 5.2.1.1 request max-age satisfied", respH: maxAge("max-age=3600"), reqH: []string{"Cache-Control", "max-age=600"}, now: 10, want: ServeFresh},
		{name: "RFC9111 5.2.1.1 invalid request max-age ignored", respH: maxAge("max-age=3600"), reqH: []string{"Cache-Control", "max-age=abc"}, now: 10, want: ServeFresh},
		{name: "RFC9111 5.2.1.3 min-fresh not met", respH: maxAge("max-age=1500"), reqH: []string{"Cache-Control", "min-fresh=2000"}, want: Validate, fwd: FwdRequest},
		{name: "RFC9111 5.2.1.3 min-fresh with Age not met", respH: []string{"Cache-Control", "max-age=1500", "Age", "1000"}, reqH: []string{"Cache-Control", "min-fresh=1000"}, want: Validate, fwd: FwdRequest},
		{name: "RFC9111 5.2.1.3 min-fresh met", respH: maxAge("max-age=1500"), reqH: []string{"Cache-Control", "min-fresh=1000"}, now: 10, want: ServeFresh},
		{name: "RFC9111 5.2.1.2 max-stale without value", respH: maxAge("max-age=1"), reqH: []string{"Cache-Control", "max-stale"}, now: 1000, want: ServeStale},
		{name: "RFC9111 5.2.1.2 max-stale within", respH: maxAge("max-age=1"), reqH: []string{"Cache-Control", "max-stale=1000"}, now: 5, want: ServeStale},
		{name: "RFC9111 5.2.1.2 max-stale with Age", respH: []string{"Cache-Control", "max-age=1500", "Age", "2000"}, reqH: []string{"Cache-Control", "max-stale=1000"}, want: ServeStale},
		{name: "RFC9111 5.2.1.2 max-stale exceeded", respH: maxAge("max-age=1"), reqH: []string{"Cache-Control", "max-stale=10"}, now: 100, want: Validate, fwd: FwdStale},
		{name: "RFC9111 5.2.1.2 invalid max-stale ignored", respH: maxAge("max-age=1"), reqH: []string{"Cache-Control", "max-stale=x"}, now: 5, want: Validate, fwd: FwdStale},
		{name: "RFC9111 5.2.2.2 must-revalidate beats max-stale", respH: maxAge("max-age=1, must-revalidate"), reqH: []string{"Cache-Control", "max-stale"}, now: 5, want: Validate, fwd: FwdStale},
		{name: "RFC9111 5.2.2.8 proxy-revalidate beats max-stale", respH: maxAge("max-age=1, proxy-revalidate"), reqH: []string{"Cache-Control", "max-stale"}, now: 5, want: Validate, fwd: FwdStale},
		{name: "RFC9111 5.2.2.10 s-maxage beats max-stale", respH: maxAge("s-maxage=1"), reqH: []string{"Cache-Control", "max-stale"}, now: 5, want: Validate, fwd: FwdStale},
		{name: "RFC9111 5.2.2.2 must-revalidate fresh is served", respH: maxAge("max-age=10000, must-revalidate"), now: 5, want: ServeFresh},
		{name: "RFC5861 3 stale-while-revalidate window", respH: maxAge("max-age=0, stale-while-revalidate=3600"), now: 10, want: ServeStale, background: true},
		{name: "RFC5861 3 stale-while-revalidate expired", respH: maxAge("max-age=1, stale-while-revalidate=5"), now: 6, want: Validate, fwd: FwdStale},
		{name: "RFC5861 3 stale-while-revalidate invalid value", respH: maxAge("max-age=1, stale-while-revalidate=x"), now: 2, want: Validate, fwd: FwdStale},
		{name: "spec 7.4 stale-while-revalidate not with must-revalidate", respH: maxAge("max-age=1, must-revalidate, stale-while-revalidate=60"), now: 2, want: Validate, fwd: FwdStale},
		{name: "spec 7.4 stale-while-revalidate not with s-maxage", respH: maxAge("s-maxage=1, stale-while-revalidate=60"), now: 2, want: Validate, fwd: FwdStale},
		{name: "spec 7.4 stale-while-revalidate not with no-cache", respH: maxAge("max-age=1, no-cache, stale-while-revalidate=60"), now: 2, want: Validate, fwd: FwdStale},
		{name: "spec 7.4 stale-while-revalidate not with request no-cache", respH: maxAge("max-age=1, stale-while-revalidate=60"), reqH: []string{"Cache-Control", "no-cache"}, now: 2, want: Validate, fwd: FwdStale},
		{name: "RFC9111 5.2.1.7 only-if-cached fresh", respH: maxAge("max-age=60"), reqH: []string{"Cache-Control", "only-if-cached"}, now: 1, want: ServeFresh},
		{name: "RFC9111 5.2.1.7 only-if-cached stale is 504", respH: maxAge("max-age=60"), reqH: []string{"Cache-Control", "only-if-cached"}, now: 100, want: GatewayTimeout, fwd: FwdStale},
		{name: "RFC9111 5.2.1.7 only-if-cached with max-stale", respH: maxAge("max-age=60"), reqH: []string{"Cache-Control", "only-if-cached, max-stale"}, now: 100, want: ServeStale},
		{name: "RFC9111 5.2.1.7 only-if-cached with If-Match is 504", respH: maxAge("max-age=60"), reqH: []string{"Cache-Control", "only-if-cached", "If-Match", "*"}, now: 1, want: GatewayTimeout, fwd: FwdRequest},
		{name: "RFC9111 4.2.2 heuristic fresh", respH: []string{"Last-Modified", httpDate(-86400), "Date", httpDate(0)}, now: 60, want: ServeFresh},
		{name: "RFC9111 4.2.1 future Expires fresh", respH: []string{"Expires", httpDate(100), "Date", httpDate(0)}, now: 50, want: ServeFresh},
		{name: "RFC9111 4.2.1 past Expires stale", respH: []string{"Expires", httpDate(-5000), "Last-Modified", httpDate(-100000), "Date", httpDate(0)}, now: 1, want: Validate, fwd: FwdStale},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var st *Stored
			if !tc.noStored {
				st = stored(hdr(tc.respH...))
				st.Invalidated = tc.invalidated
			}
			method := tc.method
			if method == "" {
				method = http.MethodGet
			}
			req := Request{Method: method, Header: hdr(tc.reqH...), Time: at(tc.now)}
			d := Decide(req, st, at(tc.now), DefaultPolicy())
			if d.Action != tc.want || d.Fwd != tc.fwd || d.Background != tc.background {
				t.Errorf("Decide = %v fwd %q background %v (%s); want %v fwd %q background %v", d.Action, d.Fwd, d.Background, d.Why, tc.want, tc.fwd, tc.background)
			}
		})
	}
}

func TestDecideIgnoresRequestDirectivesWhenConfigured(t *testing.T) {
	p := DefaultPolicy()
	p.IgnoreRequestDirectives = true
	st := stored(hdr("Cache-Control", "max-age=60"))
	for _, cc := range []string{"no-cache", "max-age=0", "min-fresh=1000", "only-if-cached"} {
		if d := Decide(getReq(hdr("Cache-Control", cc)), st, at(1), p); d.Action != ServeFresh {
			t.Errorf("spec 10 honor_request_cache_control=false, %s: %v", cc, d.Action)
		}
	}
}

func TestDecisionTTLAndActionNames(t *testing.T) {
	d := Decide(getReq(nil), stored(hdr("Cache-Control", "max-age=60")), at(10), DefaultPolicy())
	if d.TTL() != 50*time.Second || d.Lifetime != time.Minute || d.Age != 10*time.Second {
		t.Fatalf("ttl %v lifetime %v age %v", d.TTL(), d.Lifetime, d.Age)
	}
	for a, want := range map[Action]string{Fetch: "fetch", ServeFresh: "serve_fresh", ServeStale: "serve_stale", Validate: "validate", GatewayTimeout: "gateway_timeout", Action(99): "unknown"} {
		if a.String() != want {
			t.Errorf("%d: %q", a, a.String())
		}
	}
}
