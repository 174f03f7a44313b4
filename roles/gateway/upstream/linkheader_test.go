package upstream

import (
	"context"
	"net/http"
	"slices"
	"testing"
)

// TestLinkHeaderCopy: the link header is a copy of the caller's (nil
// values kept, link fields and Authorization replaced) that shares no
// value slice with it, whatever fields are set.
func TestLinkHeaderCopy(t *testing.T) {
	cases := []struct {
		name    string
		in      http.Header
		call    Call
		timeout string
		want    http.Header
	}{
		{name: "nil header, no link fields", want: http.Header{}},
		{name: "fields kept, link fields replaced",
			in: http.Header{"Accept": {"a", "b"}, "X-Nil": nil, "X-Ron-Tenant": {"evil"}, "Authorization": {"Bearer c"},
				"X-Forwarded-For": {"6.6.6.6"}, "Request-Timeout": {"99"}},
			call:    Call{Tenant: "acme", ClientIP: "203.0.113.7", Proto: "http", Host: "gw", Prefix: "/edge"},
			timeout: "1.500",
			want: http.Header{"Accept": {"a", "b"}, "X-Nil": nil, "X-Ron-Tenant": {"acme"}, "X-Forwarded-For": {"203.0.113.7"},
				"X-Forwarded-Proto": {"http"}, "X-Forwarded-Host": {"gw"}, "X-Forwarded-Prefix": {"/edge"}, "Request-Timeout": {"1.500"}}},
		{name: "empty link fields are dropped",
			in:   http.Header{"X-Forwarded-Prefix": {"/evil"}, "Request-Timeout": {"99"}, "Accept": {"x"}},
			want: http.Header{"Accept": {"x"}}},
		{name: "many fields",
			in:   http.Header{"A": {"1"}, "B": {"2"}, "C": {"3"}, "D": {"4"}, "E": {"5"}, "F": {"6"}, "G": {"7"}, "H": {"8", "9"}},
			call: Call{Tenant: "t"},
			want: http.Header{"A": {"1"}, "B": {"2"}, "C": {"3"}, "D": {"4"}, "E": {"5"}, "F": {"6"}, "G": {"7"}, "H": {"8", "9"},
				"X-Ron-Tenant": {"t"}}},
	}
	l := &Link{inProcess: true}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := tc.call
			c.Header = tc.in
			before := tc.in.Clone()
			h, err := l.linkHeader(context.Background(), &c, tc.timeout)
			if err != nil {
				t.Fatal(err)
			}
			if len(h) != len(tc.want) {
				t.Fatalf("header %v\nwant %v", h, tc.want)
			}
			for k, v := range tc.want {
				got, ok := h[k]
				if !ok || !slices.Equal(got, v) || (v == nil) != (got == nil) {
					t.Fatalf("%s = %q, want %q (header %v)", k, got, v, h)
				}
			}
			for k := range h { // appending to one field touches neither the others nor the caller's
				h[k] = append(h[k], "appended")
			}
			for k, v := range tc.want {
				if n := len(h[k]); n != len(v)+1 || !slices.Equal(h[k][:len(v)], v) {
					t.Fatalf("%s after appends: %q", k, h[k])
				}
			}
			if len(tc.in) != len(before) {
				t.Fatal("caller's header changed")
			}
			for k, v := range before {
				if !slices.Equal(tc.in[k], v) {
					t.Fatalf("caller's %s changed: %q", k, tc.in[k])
				}
			}
		})
	}
}
