package vfetch

import (
	"mime"
	"strings"
	"testing"
)

func TestMediaType(t *testing.T) {
	long := "text/plain; x=" + strings.Repeat("a", 250)
	for _, row := range []struct{ in, want string }{
		{"text/plain; charset=utf-8", "text/plain; charset=utf-8"},
		{"application/json", "application/json"},
		{"", OctetStream},
		{"not a media type;;", OctetStream},
		{"text/", OctetStream},
		{"text/html; charset", OctetStream},
		{long, OctetStream},
		{long[:255], long[:255]},
	} {
		if got := MediaType(row.in); got != row.want {
			t.Errorf("MediaType(%q) = %q, want %q", row.in, got, row.want)
		}
	}
}

// FuzzMediaType: the answer is the input or application/octet-stream, at
// most 255 bytes, and always parses.
func FuzzMediaType(f *testing.F) {
	for _, s := range []string{"text/plain", "", "a/b; c=d", ";;", "text/html; charset=\"x\""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		got := MediaType(v)
		if got != v && got != OctetStream || len(got) > 255 {
			t.Fatalf("MediaType(%q) = %q", v, got)
		}
		if _, _, err := mime.ParseMediaType(got); err != nil {
			t.Fatalf("MediaType(%q) = %q, which does not parse: %v", v, got, err)
		}
	})
}
