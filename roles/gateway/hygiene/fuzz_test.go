package hygiene

import (
	"net/url"
	"strings"
	"testing"
)

func FuzzEdgePath(f *testing.F) {
	for _, s := range []string{"", "a/b", "%2e%2e/x", "a%2Fb", "a\\b", "a%00b", "a//b", "x/", "%252e", "a?b#c", "é/%C3%A9"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, rest string) {
		out, err := EdgePath(rest)
		if err != nil {
			return
		}
		if !strings.HasPrefix(out, "/") {
			t.Fatalf("EdgePath(%q) = %q: no leading slash", rest, out)
		}
		dec, _ := url.PathUnescape(rest)
		segs := strings.Split(out[1:], "/")
		decoded := make([]string, len(segs))
		for i, s := range segs {
			if s == "." || s == ".." {
				t.Fatalf("EdgePath(%q) = %q: raw dot segment", rest, out)
			}
			d, uerr := url.PathUnescape(s)
			if uerr != nil {
				t.Fatalf("EdgePath(%q) = %q: segment %q does not decode: %v", rest, out, s, uerr)
			}
			if d == "." || d == ".." || strings.ContainsAny(d, "/\\\x00") {
				t.Fatalf("EdgePath(%q) = %q: bad decoded segment %q", rest, out, d)
			}
			if url.PathEscape(d) != s {
				t.Fatalf("EdgePath(%q) = %q: segment %q not PathEscape'd", rest, out, s)
			}
			decoded[i] = d
		}
		if strings.Join(decoded, "/") != dec {
			t.Fatalf("EdgePath(%q) = %q: decodes to %q, want %q", rest, out, strings.Join(decoded, "/"), dec)
		}
	})
}
