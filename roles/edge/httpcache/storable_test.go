package httpcache

import (
	"net/http"
	"testing"
)

func TestStorable(t *testing.T) {
	lm := httpDate(-86400)
	fresh := []string{"Cache-Control", "max-age=3600"}
	tests := []struct {
		name    string
		method  string
		reqH    []string
		status  int
		respH   []string
		length  int64
		want    Reason
		noLimit bool
	}{
		{name: "RFC9111 3 fresh 200", status: 200, respH: fresh, want: ReasonStorable},
		{name: "RFC9111 3 HEAD not stored", method: "HEAD", status: 200, respH: fresh, want: ReasonMethod},
		{name: "RFC9111 3 POST not stored (spec 14)", method: "POST", status: 200, respH: fresh, want: ReasonMethod},
		{name: "RFC9111 3 interim status", status: 103, respH: fresh, want: ReasonStatus},
		{name: "spec 7.2 206 not stored", status: 206, respH: fresh, want: ReasonStatus},
		{name: "RFC9111 3 304 not stored", status: 304, respH: fresh, want: ReasonStatus},
		{name: "RFC9111 3 explicit freshness any final status 299", status: 299, respH: fresh, want: ReasonStorable},
		{name: "RFC9111 3 explicit freshness 500", status: 500, respH: fresh, want: ReasonStorable},
		{name: "RFC9111 3 explicit freshness 599", status: 599, respH: fresh, want: ReasonStorable},
		{name: "RFC9111 3 explicit freshness 302", status: 302, respH: fresh, want: ReasonStorable},
		{name: "RFC9111 5.2.2.5 no-store", status: 200, respH: []string{"Cache-Control", "max-age=10000, no-store"}, want: ReasonNoStore},
		{name: "RFC9111 5.2.2.5 no-store case-insensitive", status: 200, respH: []string{"Cache-Control", "No-StOrE"}, want: ReasonNoStore},
		{name: "RFC9111 5.2.2.7 private in shared cache", status: 200, respH: []string{"Cache-Control", "private, max-age=3600"}, want: ReasonPrivate},
		{name: "RFC9111 5.2.2.7 private with field names", status: 200, respH: []string{"Cache-Control", `private="Set-Cookie", max-age=3600`}, want: ReasonPrivate},
		{name: "RFC9111 5.2.1.5 request no-store", reqH: []string{"Cache-Control", "no-store"}, status: 200, respH: fresh, want: ReasonRequestNoStore},
		{name: "RFC9111 5.2.2.3 must-understand known status ignores no-store", status: 200, respH: []string{"Cache-Control", "must-understand, no-store, max-age=60"}, want: ReasonStorable},
		{name: "RFC9111 5.2.2.3 must-understand unknown status", status: 299, respH: []string{"Cache-Control", "must-understand, no-store, max-age=60"}, want: ReasonMustUnderstand},
		{name: "RFC9111 5.2.2.3 must-understand 500", status: 500, respH: []string{"Cache-Control", "must-understand, max-age=60"}, want: ReasonMustUnderstand},
		{name: "RFC9111 3.5 Authorization refused", reqH: []string{"Authorization", "FOO"}, status: 200, respH: []string{"Expires", httpDate(86400), "Date", httpDate(0)}, want: ReasonAuthorization},
		{name: "RFC9111 3.5 Authorization with public", reqH: []string{"Authorization", "FOO"}, status: 200, respH: []string{"Cache-Control", "max-age=3600, public"}, want: ReasonStorable},
		{name: "RFC9111 3.5 Authorization with must-revalidate", reqH: []string{"Authorization", "FOO"}, status: 200, respH: []string{"Cache-Control", "max-age=3600, must-revalidate"}, want: ReasonStorable},
		{name: "RFC9111 3.5 Authorization with s-maxage", reqH: []string{"Authorization", "FOO"}, status: 200, respH: []string{"Cache-Control", "s-maxage=3600"}, want: ReasonStorable},
		{name: "RFC9111 4.1 Vary star", status: 200, respH: []string{"Cache-Control", "max-age=60", "Vary", "Foo, *"}, want: ReasonVaryStar},
		{name: "RFC9111 4.2.2 heuristic 200 with Last-Modified", status: 200, respH: []string{"Last-Modified", lm, "Date", httpDate(0)}, want: ReasonStorable},
		{name: "RFC9111 4.2.2 heuristic 204", status: 204, respH: []string{"Last-Modified", lm, "Date", httpDate(0)}, want: ReasonStorable},
		{name: "RFC9111 4.2.2 heuristic 404", status: 404, respH: []string{"Last-Modified", lm, "Date", httpDate(0)}, want: ReasonStorable},
		{name: "RFC9111 4.2.2 heuristic 501", status: 501, respH: []string{"Last-Modified", lm, "Date", httpDate(0)}, want: ReasonStorable},
		{name: "RFC9111 4.2.2 not heuristic 201", status: 201, respH: []string{"Last-Modified", lm, "Date", httpDate(0)}, want: ReasonNoFreshness},
		{name: "RFC9111 4.2.2 not heuristic 403", status: 403, respH: []string{"Last-Modified", lm, "Date", httpDate(0)}, want: ReasonNoFreshness},
		{name: "RFC9111 4.2.2 not heuristic 503", status: 503, respH: []string{"Last-Modified", lm, "Date", httpDate(0)}, want: ReasonNoFreshness},
		{name: "RFC9111 4.2.2 not heuristic 599", status: 599, respH: []string{"Last-Modified", lm, "Date", httpDate(0)}, want: ReasonNoFreshness},
		{name: "RFC9111 4.2.2 public makes 599 heuristic", status: 599, respH: []string{"Last-Modified", lm, "Date", httpDate(0), "Cache-Control", "public"}, want: ReasonStorable},
		{name: "RFC9111 3 Expires counts as explicit on 503", status: 503, respH: []string{"Expires", httpDate(60), "Date", httpDate(0)}, want: ReasonStorable},
		{name: "RFC9213 2.1 Expires ignored under CDN-Cache-Control", status: 503, respH: []string{"Expires", httpDate(60), "CDN-Cache-Control", "foo"}, want: ReasonNoFreshness},
		{name: "spec 7.2 lifetime 0 without validator", status: 200, respH: []string{"Cache-Control", "max-age=0"}, want: ReasonNoValidator},
		{name: "spec 7.2 lifetime 0 with ETag", status: 200, respH: []string{"Cache-Control", "max-age=0", "ETag", `"a"`}, want: ReasonStorable},
		{name: "spec 7.2 lifetime 0 with invalid ETag", status: 200, respH: []string{"Cache-Control", "max-age=0", "ETag", `a`}, want: ReasonNoValidator},
		{name: "spec 7.2 no freshness no validator", status: 200, want: ReasonNoValidator},
		{name: "spec 7.2 invalid Expires no validator", status: 200, respH: []string{"Expires", "0"}, want: ReasonNoValidator},
		{name: "spec 7.2 stale Expires with Last-Modified", status: 200, respH: []string{"Expires", httpDate(-5000), "Last-Modified", lm, "Date", httpDate(0)}, want: ReasonStorable},
		{name: "spec 7.2 no-cache with validator stored", status: 200, respH: []string{"Cache-Control", "no-cache", "ETag", `"a"`}, want: ReasonStorable},
		{name: "spec 7.2 body above fill_max_bytes", status: 200, respH: fresh, length: 65 << 20, want: ReasonTooLarge},
		{name: "spec 7.2 body at fill_max_bytes", status: 200, respH: fresh, length: 64 << 20, want: ReasonStorable},
		{name: "spec 7.2 no limit", status: 200, respH: fresh, length: 1 << 40, noLimit: true, want: ReasonStorable},
		{name: "spec 7.2 Set-Cookie stored", status: 200, respH: []string{"Cache-Control", "max-age=3600", "Set-Cookie", "a=b"}, want: ReasonStorable},
		{name: "RFC9213 2.1 CDN max-age beats CC no-store", status: 200, respH: []string{"Cache-Control", "no-store", "CDN-Cache-Control", "max-age=10000"}, want: ReasonStorable},
		{name: "RFC9213 2.1 CDN no-store beats CC max-age", status: 200, respH: []string{"Cache-Control", "max-age=10000", "CDN-Cache-Control", "no-store"}, want: ReasonNoStore},
		{name: "RFC9213 2.1 CDN private", status: 200, respH: []string{"Cache-Control", "max-age=10000", "CDN-Cache-Control", "private"}, want: ReasonPrivate},
		{name: "RFC9213 2.1 invalid CDN ignored, CC no-store applies", status: 200, respH: []string{"Cache-Control", "no-store", "CDN-Cache-Control", `max-age="10000"`}, want: ReasonNoStore},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			method := tc.method
			if method == "" {
				method = http.MethodGet
			}
			req := Request{Method: method, Header: hdr(tc.reqH...), Time: t0}
			r := resp(tc.status, hdr(tc.respH...))
			if tc.length != 0 {
				r.ContentLength = tc.length
			}
			p := DefaultPolicy()
			if tc.noLimit {
				p.MaxBodyBytes = 0
			}
			ok, why := Storable(req, r, p)
			if why != tc.want || ok != (tc.want == ReasonStorable) {
				t.Errorf("Storable = %v, %q; want %q", ok, why, tc.want)
			}
		})
	}
}

func TestStorableIgnoresRequestNoStoreWhenConfigured(t *testing.T) {
	p := DefaultPolicy()
	p.IgnoreRequestDirectives = true
	ok, why := Storable(getReq(hdr("Cache-Control", "no-store")), resp(200, hdr("Cache-Control", "max-age=60")), p)
	if !ok {
		t.Fatalf("spec 10 honor_request_cache_control=false: %s", why)
	}
}

func TestNewStored(t *testing.T) {
	r := resp(200, hdr("Cache-Control", "max-age=60", "Connection", "x-a", "X-A", "1", "Vary", "Accept-Encoding", "Transfer-Encoding", "chunked"))
	r.ContentLength = 42
	r.RequestTime, r.ResponseTime = at(-1), at(0)
	st := NewStored(getReq(hdr("Accept-Encoding", "gzip,  br")), r)
	if st.Header.Get("Date") != httpDate(0) {
		t.Errorf("RFC9110 6.6.1: missing Date not added: %q", st.Header.Get("Date"))
	}
	if st.Header.Get("X-A") != "" || st.Header.Get("Transfer-Encoding") != "" {
		t.Error("RFC9111 3.1: hop-by-hop field stored")
	}
	if st.BodyLen != 42 || !st.RequestTime.Equal(at(-1)) || !st.ResponseTime.Equal(at(0)) || st.Status != 200 {
		t.Errorf("fields: %+v", st)
	}
	if len(st.Selecting) != 1 || st.Selecting[0].Value != "gzip,br" || st.Selecting[0].Raw[0] != "gzip,  br" {
		t.Errorf("RFC9111 4.1 selecting: %+v", st.Selecting)
	}
	withDate := NewStored(getReq(nil), resp(200, hdr("Date", "foo")))
	if withDate.Header.Get("Date") != "foo" {
		t.Error("an invalid Date is kept as received")
	}
	c := st.Clone()
	c.Header.Set("X", "y")
	c.Selecting[0].Raw[0] = "z"
	if st.Header.Get("X") != "" || st.Selecting[0].Raw[0] != "gzip,  br" {
		t.Error("Clone shares state")
	}
}
