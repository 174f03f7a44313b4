package hygiene

import (
	"net/http"
	"net/http/httptest"
	"reflect"
	"testing"
)

const (
	appOrigin  = "https://app.example"
	evilOrigin = "https://evil.example"
)

func request(method, origin string) *http.Request {
	r := httptest.NewRequest(method, "/o/x", nil)
	if origin != "" {
		r.Header.Set("Origin", origin)
	}
	return r
}

func allowed(origin string) http.Header {
	return http.Header{
		"Access-Control-Allow-Origin":   {origin},
		"Access-Control-Expose-Headers": {ExposeHeaders},
		"Vary":                          {"Origin"},
	}
}

var wildcardRead = http.Header{
	"Access-Control-Allow-Origin":   {"*"},
	"Access-Control-Expose-Headers": {ExposeHeaders},
}

func TestCORSApply(t *testing.T) {
	tests := []struct {
		name    string
		origins []string
		origin  string
		write   bool
		want    http.Header
	}{
		{"no policy", nil, appOrigin, false, http.Header{}},
		{"no policy write", nil, appOrigin, true, http.Header{}},
		{"wildcard read", []string{"*"}, appOrigin, false, wildcardRead},
		{"wildcard read without origin", []string{"*"}, "", false, http.Header{}},
		{"wildcard never admits writes", []string{"*"}, appOrigin, true, http.Header{"Vary": {"Origin"}}},
		{"wildcard write without origin", []string{"*"}, "", true, http.Header{"Vary": {"Origin"}}},
		{"wildcard wins for reads of listed origin", []string{appOrigin, "*"}, appOrigin, false, wildcardRead},
		{"explicit read", []string{appOrigin}, appOrigin, false, allowed(appOrigin)},
		{"explicit write", []string{appOrigin}, appOrigin, true, allowed(appOrigin)},
		{"explicit write with wildcard too", []string{"*", appOrigin}, appOrigin, true, allowed(appOrigin)},
		{"unlisted read", []string{appOrigin}, evilOrigin, false, http.Header{"Vary": {"Origin"}}},
		{"unlisted write", []string{"*", appOrigin}, evilOrigin, true, http.Header{"Vary": {"Origin"}}},
		{"no origin on explicit policy", []string{appOrigin}, "", false, http.Header{"Vary": {"Origin"}}},
		{"exact match only", []string{appOrigin}, appOrigin + "/", false, http.Header{"Vary": {"Origin"}}},
		{"case sensitive", []string{appOrigin}, "https://APP.example", false, http.Header{"Vary": {"Origin"}}},
		{"origin star is not explicit", []string{"*"}, "*", true, http.Header{"Vary": {"Origin"}}},
		{"null only when listed", []string{"null"}, "null", false, allowed("null")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := http.Header{}
			CORS{Origins: tt.origins}.Apply(w, request(http.MethodGet, tt.origin), tt.write)
			if !reflect.DeepEqual(w, tt.want) {
				t.Fatalf("Apply headers = %v, want %v", w, tt.want)
			}
		})
	}
}

func TestCORSApplyVaryMerge(t *testing.T) {
	tests := []struct {
		name string
		vary []string
		want []string
	}{
		{"appends", []string{"Accept-Encoding"}, []string{"Accept-Encoding", "Origin"}},
		{"already listed", []string{"Accept-Encoding, origin"}, []string{"Accept-Encoding, origin"}},
		{"star covers it", []string{"*"}, []string{"*"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := http.Header{"Vary": tt.vary}
			CORS{Origins: []string{appOrigin}}.Apply(w, request(http.MethodGet, appOrigin), false)
			if got := w.Values("Vary"); !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("Vary = %v, want %v", got, tt.want)
			}
		})
	}
}

func preflight(origin, methods, headers string, vary bool) http.Header {
	h := http.Header{
		"Access-Control-Allow-Origin":  {origin},
		"Access-Control-Allow-Methods": {methods},
		"Access-Control-Allow-Headers": {headers},
		"Access-Control-Max-Age":       {"600"},
	}
	if vary {
		h.Set("Vary", "Origin")
	}
	return h
}

func TestCORSPreflight(t *testing.T) {
	readStar := preflight("*", "GET, HEAD", ReadAllowHeaders, false)
	writeApp := preflight(appOrigin, "GET, HEAD, POST, PUT", WriteAllowHeaders, true)
	tests := []struct {
		name    string
		origins []string
		origin  string
		want    http.Header
	}{
		{"no policy", nil, appOrigin, http.Header{}},
		{"wildcard reads only", []string{"*"}, appOrigin, readStar},
		{"wildcard without origin", []string{"*"}, "", http.Header{}},
		{"explicit gets writes", []string{appOrigin}, appOrigin, writeApp},
		{"explicit beats wildcard", []string{"*", appOrigin}, appOrigin, writeApp},
		{"wildcard for another origin", []string{"*", appOrigin}, evilOrigin, readStar},
		{"unlisted", []string{appOrigin}, evilOrigin, http.Header{"Vary": {"Origin"}}},
		{"no origin on explicit policy", []string{appOrigin}, "", http.Header{"Vary": {"Origin"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := request(http.MethodOptions, tt.origin)
			r.Header.Set("Access-Control-Request-Method", http.MethodPut)
			w := http.Header{}
			if st := (CORS{Origins: tt.origins}).Preflight(w, r); st != http.StatusNoContent {
				t.Fatalf("Preflight status = %d, want 204", st)
			}
			if !reflect.DeepEqual(w, tt.want) {
				t.Fatalf("Preflight headers = %v, want %v", w, tt.want)
			}
		})
	}
}

func TestCORSHeaderConstants(t *testing.T) {
	if ReadAllowHeaders != "Range, If-Match, If-None-Match, If-Range, If-Modified-Since, Request-Timeout, X-Corr-ID" {
		t.Fatalf("ReadAllowHeaders = %q", ReadAllowHeaders)
	}
	if WriteAllowHeaders != ReadAllowHeaders+", Authorization, Content-Type, Content-Encoding" {
		t.Fatalf("WriteAllowHeaders = %q", WriteAllowHeaders)
	}
	if ExposeHeaders != "ETag, Content-Range, Content-Length, Accept-Ranges, Retry-After, X-Corr-ID" {
		t.Fatalf("ExposeHeaders = %q", ExposeHeaders)
	}
}
