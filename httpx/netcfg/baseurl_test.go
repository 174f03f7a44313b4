package netcfg

import (
	"strings"
	"testing"
)

func TestCheckBaseURL(t *testing.T) {
	for _, s := range []string{"http://127.0.0.1:5303", "https://storage.example", "http://[::1]:80/ron", "http://h/", "HTTP://h"} {
		if err := CheckBaseURL(s); err != nil {
			t.Errorf("CheckBaseURL(%q) = %v", s, err)
		}
	}
	for _, s := range []string{"", "storage:5303", "ftp://h", "http://", "http:///x", "http://u:p@h",
		"http://h?x=1", "http://h#f", "http://h/%zz", "//h", "http://h:port"} {
		err := CheckBaseURL(s)
		if err == nil || err.Error() != `"`+s+`" is not an http(s) base URL without user info, query or fragment` {
			t.Errorf("CheckBaseURL(%q) = %v", s, err)
		}
	}
}

// FuzzCheckBaseURL: an accepted URL is an http(s) URL with a host.
func FuzzCheckBaseURL(f *testing.F) {
	for _, s := range []string{"http://h", "https://h:1/p", "http://u@h", "x", "HTTP://h"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if CheckBaseURL(s) != nil {
			return
		}
		if len(s) < len("http://x") || !strings.EqualFold(s[:4], "http") {
			t.Fatalf("accepted %q", s)
		}
	})
}
