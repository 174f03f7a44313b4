package sites

import (
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/store/manifest"
)

// FuzzManifestDecode feeds arbitrary bytes as a manifest target through the
// cache path (Head, ReadAll, hash check, Parse, LRU): the outcome must be
// exactly manifest.Parse's, a refusal must be 502 malformed with reason
// "manifest", and a second lookup must not read again.
func FuzzManifestDecode(f *testing.F) {
	id := `"b3:` + strings.Repeat("0f", 32) + `"`
	for _, s := range []string{
		`{"version":1,"entries":{}}`,
		`{"version":1,"entries":{"index.html":{"id":` + id + `,"size":5,"type":"text/html"}},"meta":{"title":"x"}}`,
		`{"version":1,"entries":{"../x":{"id":` + id + `,"size":1}}}`,
		`{"version":1,"entries":{"a":{"id":` + id + `,"size":1,"x":1}}}`,
		`{"version":1,"entries":{"a":{"id":"b3:00","size":1}}}`,
		`{"version":1,"entries":{},"entries":{}}`,
		`{"version":1,"entries":{"a\u0000":{"id":` + id + `,"size":1}}}`,
		`{"version":1,"entries":{"\ud800":{"id":` + id + `,"size":1}}}`,
		`[]`, ``, `{"version":1.0,"entries":{}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		obj := newFakeObjects()
		s := New(Options{Objects: obj, Resolver: newFakeResolver(), ManifestCacheBytes: 64 << 20})
		mid := obj.put(raw, manifest.MediaType)
		want, perr := manifest.Parse(raw)
		for range 2 {
			st, err := s.target(t.Context(), mid)
			if perr != nil {
				var he *httpx.Error
				if !errors.As(err, &he) || he.Status != http.StatusBadGateway || he.Code != httpx.CodeMalformed ||
					he.Details["reason"] != "manifest" {
					t.Fatalf("Parse failed (%v) but target gave %v", perr, err)
				}
				continue
			}
			if err != nil || st == nil || st.id != mid || len(st.entries) != len(want.Entries) || st.tree.Len() != len(want.Entries) {
				t.Fatalf("Parse succeeded but target gave %v, %v", st, err)
			}
			for p, e := range want.Entries {
				if st.entries[p] != e || !st.tree.Has(p) {
					t.Fatalf("entry %q differs", p)
				}
			}
		}
		if obj.count("readall") != 1 || obj.count("head") != 1 {
			t.Fatalf("second lookup not served from the cache: %v", obj.calls)
		}
	})
}

// FuzzMapPath checks the /n path mapping over a fixed tree: it never
// panics, errors are 400s, and each action is consistent with the tree.
func FuzzMapPath(f *testing.F) {
	tree := NewTree([]string{"index.html", "a/b.html", "a/c/index.html", "a b/ü", "x-y", "x/z", "d/e/f"})
	for _, s := range []string{"", "/", "/a", "/a/", "/a/c", "/a/c/", "/d/", "/d/e", "/a%20b/%C3%BC",
		"/../x", "/a%2Fb", "//", "/a/./b", "/%2e%2e", "/a%5c", "/a%00", "/%zz", "x", "/x", "/x/"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, rest string) {
		m, err := MapPath(tree, rest)
		if err != nil {
			if he := httpx.AsError(err); he.Status != http.StatusBadRequest {
				t.Fatalf("MapPath(%q) error %v is not a 400", rest, err)
			}
			return
		}
		p, _ := ParsePath(rest)
		for _, seg := range strings.Split(p.P, "/") {
			if seg == "." || seg == ".." || strings.ContainsAny(seg, "\\\x00") {
				t.Fatalf("MapPath(%q) accepted segment %q", rest, seg)
			}
		}
		switch m.Action {
		case ServeEntry:
			if !tree.Has(m.Path) {
				t.Fatalf("MapPath(%q) serves %q, not an entry", rest, m.Path)
			}
		case ServeListing:
			if m.Path != p.P || (m.Path != "" && (!strings.HasSuffix(m.Path, "/") || !tree.HasPrefix(m.Path))) {
				t.Fatalf("MapPath(%q) lists %q", rest, m.Path)
			}
		case Redirect:
			if rest == "" && m.Path == "" {
				return
			}
			if m.Path != p.P+"/" || !tree.HasPrefix(m.Path) || tree.Has(p.P) {
				t.Fatalf("MapPath(%q) redirects to %q", rest, m.Path)
			}
		case NotFound:
			if !p.IsDir() && (tree.Has(p.P) || tree.HasPrefix(p.P+"/")) {
				t.Fatalf("MapPath(%q) 404 for an existing path", rest)
			}
		}
	})
}
