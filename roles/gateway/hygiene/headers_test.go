package hygiene

import (
	"net/http"
	"reflect"
	"testing"
)

func TestToUpstream(t *testing.T) {
	tests := []struct {
		name string
		in   http.Header
		want http.Header
	}{
		{"hop-by-hop dropped", http.Header{
			"Connection": {"keep-alive"}, "Keep-Alive": {"timeout=5"}, "Proxy-Connection": {"x"},
			"Proxy-Authenticate": {"x"}, "Proxy-Authorization": {"Basic x"}, "Te": {"trailers"},
			"Trailer": {"X-T"}, "Transfer-Encoding": {"chunked"}, "Upgrade": {"h2c"},
			"Range": {"bytes=0-1"},
		}, http.Header{"Range": {"bytes=0-1"}}},
		{"connection-named dropped in any spelling", http.Header{
			"Connection": {"x-secret, Foo", " bar "}, "X-Secret": {"1"}, "Foo": {"2"}, "Bar": {"3"}, "Baz": {"4"},
		}, http.Header{"Baz": {"4"}}},
		{"non-canonical connection key", http.Header{
			"connection": {"x-a"}, "X-A": {"1"}, "Accept": {"*/*"},
		}, http.Header{"Accept": {"*/*"}}},
		{"client credentials and forwarding dropped", http.Header{
			"Authorization": {"Bearer t"}, "Cookie": {"a=b"}, "Forwarded": {"for=1.2.3.4"},
			"X-Forwarded-For": {"1.2.3.4"}, "X-Forwarded-Proto": {"http"}, "X-Forwarded-Host": {"h"},
			"X-Forwarded-Prefix": {"/x"}, "If-None-Match": {`"b3:aa"`},
		}, http.Header{"If-None-Match": {`"b3:aa"`}}},
		{"x-ron headers dropped", http.Header{
			"X-Ron-Tenant": {"evil"}, "x-ron-anything": {"1"}, "X-Ronald": {"keep"},
		}, http.Header{"X-Ronald": {"keep"}}},
		{"end-to-end pass with every value", http.Header{
			"Accept": {"a", "b"}, "X-Corr-Id": {"01J"}, "Request-Timeout": {"5"},
		}, http.Header{"Accept": {"a", "b"}, "X-Corr-Id": {"01J"}, "Request-Timeout": {"5"}}},
		{"empty", http.Header{}, http.Header{}},
		{"nil", nil, http.Header{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ToUpstream(tt.in)
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("ToUpstream = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestToUpstreamDoesNotAlias(t *testing.T) {
	in := http.Header{"Accept": {"a"}, "Authorization": {"Bearer t"}}
	out := ToUpstream(in)
	out["Accept"][0] = "changed"
	out.Set("Authorization", "mine")
	if in.Get("Accept") != "a" || in.Get("Authorization") != "Bearer t" {
		t.Fatalf("input modified: %v", in)
	}
}

func TestFromUpstream(t *testing.T) {
	tests := []struct {
		name   string
		method string
		status int
		in     http.Header
		want   http.Header
	}{
		{"hop-by-hop, connection-named and x-ron dropped", http.MethodGet, 200, http.Header{
			"Connection": {"X-Internal"}, "X-Internal": {"1"}, "Transfer-Encoding": {"chunked"},
			"Keep-Alive": {"t"}, "X-Ron-Tenant": {"a"}, "X-Ron-Upstream": {"s"}, "Etag": {`"b3:aa"`},
		}, http.Header{"Etag": {`"b3:aa"`}}},
		{"set-cookie keeps every value", http.MethodGet, 200, http.Header{
			"Set-Cookie": {"a=1", "b=2", "a=1"},
		}, http.Header{"Set-Cookie": {"a=1", "b=2", "a=1"}}},
		{"head keeps content-length", http.MethodHead, 200, http.Header{
			"Content-Length": {"12"},
		}, http.Header{"Content-Length": {"12"}}},
		{"304 keeps content-length", http.MethodGet, 304, http.Header{
			"Content-Length": {"12"}, "Etag": {`"b3:aa"`},
		}, http.Header{"Content-Length": {"12"}, "Etag": {`"b3:aa"`}}},
		{"get 200 keeps content-length", http.MethodGet, 200, http.Header{
			"Content-Length": {"5"},
		}, http.Header{"Content-Length": {"5"}}},
		{"206 keeps content-length", http.MethodGet, 206, http.Header{
			"Content-Length": {"5"}, "Content-Range": {"bytes 0-4/12"},
		}, http.Header{"Content-Length": {"5"}, "Content-Range": {"bytes 0-4/12"}}},
		{"204 drops content-length", http.MethodPut, 204, http.Header{
			"Content-Length": {"0"},
		}, http.Header{}},
		{"head 204 drops content-length", http.MethodHead, 204, http.Header{
			"Content-Length": {"0"},
		}, http.Header{}},
		{"1xx drops content-length", http.MethodGet, 103, http.Header{
			"Content-Length": {"0"}, "Link": {"</a>"},
		}, http.Header{"Link": {"</a>"}}},
		{"identical repeats collapse", http.MethodGet, 200, http.Header{
			"Content-Length": {"7", " 7"},
		}, http.Header{"Content-Length": {"7"}}},
		{"differing repeats dropped", http.MethodHead, 200, http.Header{
			"Content-Length": {"7", "8"},
		}, http.Header{}},
		{"negative dropped", http.MethodGet, 200, http.Header{"Content-Length": {"-1"}}, http.Header{}},
		{"plus sign dropped", http.MethodGet, 200, http.Header{"Content-Length": {"+1"}}, http.Header{}},
		{"not a number dropped", http.MethodGet, 200, http.Header{"Content-Length": {"abc"}}, http.Header{}},
		{"empty value dropped", http.MethodGet, 200, http.Header{"Content-Length": {""}}, http.Header{}},
		{"leading zeros normalised", http.MethodGet, 200, http.Header{"Content-Length": {"007"}},
			http.Header{"Content-Length": {"7"}}},
		{"connection may name content-length", http.MethodHead, 200, http.Header{
			"Connection": {"content-length"}, "Content-Length": {"7"},
		}, http.Header{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := FromUpstream(tt.in, tt.method, tt.status)
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("FromUpstream = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestFromUpstreamDoesNotModifyInput(t *testing.T) {
	in := http.Header{"Set-Cookie": {"a=1", "b=2"}, "Content-Length": {"3"}, "X-Ron-Tenant": {"a"}}
	out := FromUpstream(in, http.MethodPut, 204)
	out.Add("Set-Cookie", "c=3")
	want := http.Header{"Set-Cookie": {"a=1", "b=2"}, "Content-Length": {"3"}, "X-Ron-Tenant": {"a"}}
	if !reflect.DeepEqual(in, want) {
		t.Fatalf("input modified: %v", in)
	}
}
