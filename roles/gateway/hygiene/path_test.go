package hygiene

import (
	"errors"
	"net/http"
	"testing"

	"github.com/ronhq/ron/httpx"
)

func TestEdgePathOK(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", "/"},
		{"t/osm/1/2/3.pbf", "/t/osm/1/2/3.pbf"},
		{"assets/", "/assets/"},
		{"a%20b/c", "/a%20b/c"},
		{"a b", "/a%20b"},
		{"caf%C3%A9", "/caf%C3%A9"},
		{"a?b", "/a%3Fb"},
		{"a%3Fb", "/a%3Fb"},
		{"a%23b", "/a%23b"},
		{"%252e%252e/x", "/%252e%252e/x"},
		{"...", "/..."},
		{".a/b.", "/.a/b."},
		{"a%2520b", "/a%2520b"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := EdgePath(tt.in)
			if err != nil || got != tt.want {
				t.Fatalf("EdgePath(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
			}
		})
	}
}

func TestEdgePathBad(t *testing.T) {
	bad := []string{
		"..", ".", "../x", "./x", "a/../b", "a/./b", "a/..", "a/.",
		"%2e%2e/x", "%2E%2E/x", "%2e/x", "a/%2e%2E", ".%2e/x", "%2e./x",
		"a%2Fb", "a%2fb", "%2F", "a/%2F..",
		"a\\b", "a%5Cb", "%5c..", "..\\x",
		"a\x00b", "a%00b",
		"a//b", "/a", "//",
		"%zz", "a%2", "%",
	}
	for _, in := range bad {
		t.Run(in, func(t *testing.T) {
			got, err := EdgePath(in)
			var he *httpx.Error
			if !errors.As(err, &he) || he.Status != http.StatusBadRequest || he.Code != httpx.CodeBadRequest {
				t.Fatalf("EdgePath(%q) = %q, %v; want 400 bad_request", in, got, err)
			}
			if got != "" {
				t.Fatalf("EdgePath(%q) returned path %q with error", in, got)
			}
		})
	}
}
