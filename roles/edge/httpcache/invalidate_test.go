package httpcache

import (
	"net/url"
	"slices"
	"testing"
	"time"
)

func mustURL(t *testing.T, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func TestKeyOf(t *testing.T) {
	tests := []struct {
		name, prefix, u string
		want            Key
		ok              bool
	}{
		{"spec 7.1 root prefix", "http://127.0.0.1:18000", "http://127.0.0.1:18000/test/1?a=b", Key{"test/1", "a=b"}, true},
		{"spec 7.1 path prefix", "https://cdn.example/static", "https://cdn.example/static/a/b.js", Key{"a/b.js", ""}, true},
		{"spec 7.1 prefix with trailing slash", "https://cdn.example/static/", "https://cdn.example/static/a", Key{"a", ""}, true},
		{"spec 7.1 prefix itself", "https://cdn.example/static", "https://cdn.example/static", Key{"", ""}, true},
		{"spec 7.1 escaped path kept", "https://cdn.example", "https://cdn.example/a%20b/%2F", Key{"a%20b/%2F", ""}, true},
		{"RFC3986 6.2.3 default port and host case", "https://CDN.example", "https://cdn.example:443/x", Key{"x", ""}, true},
		{"spec 7.6 other host", "https://cdn.example", "https://other.example/x", Key{}, false},
		{"spec 7.6 other port", "http://127.0.0.1:18000", "http://127.0.0.1:18001/x", Key{}, false},
		{"spec 7.6 other scheme", "https://cdn.example", "http://cdn.example/x", Key{}, false},
		{"spec 7.6 outside the path prefix", "https://cdn.example/static", "https://cdn.example/staticx/a", Key{}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := KeyOf(mustURL(t, tc.prefix), mustURL(t, tc.u))
			if ok != tc.ok || got != tc.want {
				t.Errorf("KeyOf = %+v, %v; want %+v, %v", got, ok, tc.want, tc.ok)
			}
		})
	}
	if _, ok := KeyOf(nil, mustURL(t, "http://x/")); ok {
		t.Error("nil prefix accepted")
	}
	if (Key{"a", "b=c"}).String() != "a?b=c" || (Key{"a", ""}).String() != "a" {
		t.Error("Key.String")
	}
}

func TestInvalidations(t *testing.T) {
	prefix := "http://127.0.0.1:18000"
	upstream := "http://127.0.0.1:18000/test/abc"
	tests := []struct {
		name   string
		method string
		status int
		h      []string
		want   []Key
	}{
		{"RFC9111 4.4 POST 200 invalidates the target", "POST", 200, nil, []Key{{"test/abc", ""}}},
		{"RFC9111 4.4 PUT 204", "PUT", 204, nil, []Key{{"test/abc", ""}}},
		{"RFC9111 4.4 DELETE 301", "DELETE", 301, nil, []Key{{"test/abc", ""}}},
		{"RFC9111 4.4 extension method", "M-SEARCH", 200, nil, []Key{{"test/abc", ""}}},
		{"RFC9111 4.4 failed POST does not invalidate", "POST", 500, nil, nil},
		{"RFC9111 4.4 POST 404 does not invalidate", "POST", 404, nil, nil},
		{"RFC9111 4.4 GET does not invalidate", "GET", 200, nil, nil},
		{"RFC9111 4.4 HEAD does not invalidate", "HEAD", 200, nil, nil},
		{"RFC9111 4.4 OPTIONS does not invalidate", "OPTIONS", 200, nil, nil},
		{"RFC9111 4.4 TRACE does not invalidate", "TRACE", 200, nil, nil},
		{"RFC9111 4.4 absolute Location", "POST", 201, []string{"Location", upstream + "/location_target"}, []Key{{"test/abc", ""}, {"test/abc/location_target", ""}}},
		{"RFC9111 4.4 relative Content-Location", "POST", 200, []string{"Content-Location", "other?x=1"}, []Key{{"test/abc", ""}, {"test/other", "x=1"}}},
		{"RFC9111 4.4 both fields", "PUT", 200, []string{"Location", "/a", "Content-Location", "/b"}, []Key{{"test/abc", ""}, {"a", ""}, {"b", ""}}},
		{"RFC9111 4.4 other origin ignored", "POST", 200, []string{"Location", "http://evil.example/x"}, []Key{{"test/abc", ""}}},
		{"RFC9111 4.4 duplicates removed", "POST", 200, []string{"Content-Location", upstream, "Location", ""}, []Key{{"test/abc", ""}}},
		{"RFC9111 4.4 unparsable ignored", "POST", 200, []string{"Location", "http://[::1"}, []Key{{"test/abc", ""}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Invalidations(tc.method, tc.status, mustURL(t, upstream), hdr(tc.h...), mustURL(t, prefix))
			if !slices.Equal(got, tc.want) {
				t.Errorf("Invalidations = %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestCacheStatus(t *testing.T) {
	tests := []struct {
		name string
		cs   CacheStatus
		want string
	}{
		{"RFC9211 2.1 hit with ttl", CacheStatus{Hit: true, TTL: 3599_900_000_000}, "ron-edge; hit; ttl=3599"},
		{"RFC9211 2.8 stale hit negative ttl", CacheStatus{Hit: true, TTL: -500_000_000}, "ron-edge; hit; ttl=-1"},
		{"RFC9211 2.2 miss stored", CacheStatus{Fwd: FwdMiss, FwdStatus: 200, Stored: true}, "ron-edge; fwd=miss; fwd-status=200; stored"},
		{"RFC9211 2.2 stale collapsed", CacheStatus{Fwd: FwdStale, FwdStatus: 304, Stored: true, Collapsed: true}, "ron-edge; fwd=stale; fwd-status=304; stored; collapsed"},
		{"RFC9211 2.2 bypass", CacheStatus{Fwd: FwdBypass, FwdStatus: 201}, "ron-edge; fwd=bypass; fwd-status=201"},
		{"RFC9211 2.2 request", CacheStatus{Fwd: FwdRequest, FwdStatus: 200}, "ron-edge; fwd=request; fwd-status=200"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.cs.String(); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestAgeValue(t *testing.T) {
	for in, want := range map[int64]string{0: "0", 999_999_999: "0", 3_500_000_000: "3", -5: "0", 1 << 62: "2147483648"} {
		if got := AgeValue(time.Duration(in)); got != want {
			t.Errorf("RFC9111 5.1 AgeValue(%d) = %q, want %q", in, got, want)
		}
	}
}
