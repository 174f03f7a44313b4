package sites

import (
	"net/http"
	"testing"

	"github.com/ronhq/ron/httpx"
)

func TestParsePath(t *testing.T) {
	good := []struct {
		rest  string
		want  Path
		isDir bool
	}{
		{"", Path{}, true},
		{"/", Path{Slash: true}, true},
		{"/a", Path{Slash: true, P: "a"}, false},
		{"/a/", Path{Slash: true, P: "a/"}, true},
		{"/a/b.html", Path{Slash: true, P: "a/b.html"}, false},
		{"/a%20b/%C3%BC", Path{Slash: true, P: "a b/ü"}, false},
		{"/%252F", Path{Slash: true, P: "%2F"}, false}, // decoded once only
		{"/a+b", Path{Slash: true, P: "a+b"}, false},
		{"/...", Path{Slash: true, P: "..."}, false},
		{"/.well-known/x", Path{Slash: true, P: ".well-known/x"}, false},
	}
	for _, c := range good {
		p, err := ParsePath(c.rest)
		if err != nil || p != c.want || p.IsDir() != c.isDir {
			t.Fatalf("ParsePath(%q) = %+v, %v", c.rest, p, err)
		}
	}
	for _, rest := range []string{
		"x", "//", "/a//b", "//a", "/.", "/..", "/./a", "/a/./b", "/a/../b", "/%2e%2e/a", "/%2E", "/a%2Fb",
		"/a%2fb", "/a%5Cb", "/a\\b", "/a%00", "/%zz", "/a%", "/a/%2e/", "/../",
	} {
		_, err := ParsePath(rest)
		if he := httpx.AsError(err); err == nil || he.Status != http.StatusBadRequest || he.Code != httpx.CodeBadRequest {
			t.Fatalf("ParsePath(%q) = %v, want 400", rest, err)
		}
	}
}

func TestMapPathTable(t *testing.T) {
	tree := NewTree([]string{"index.html", "docs/index.html", "docs/a.html", "img/x.png", "img/sub/y.png", "a-b", "img-x"})
	noIndex := NewTree([]string{"a/b", "c"})
	for _, c := range []struct {
		tree *Tree
		rest string
		want Mapping
	}{
		{tree, "", Mapping{Action: Redirect}},
		{tree, "/", Mapping{ServeEntry, "index.html"}},
		{tree, "/docs/", Mapping{ServeEntry, "docs/index.html"}},
		{tree, "/docs", Mapping{Redirect, "docs/"}},
		{tree, "/docs/a.html", Mapping{ServeEntry, "docs/a.html"}},
		{tree, "/img/", Mapping{ServeListing, "img/"}},
		{tree, "/img", Mapping{Redirect, "img/"}},
		{tree, "/img/sub", Mapping{Redirect, "img/sub/"}},
		{tree, "/img/sub/", Mapping{ServeListing, "img/sub/"}},
		{tree, "/im", Mapping{Action: NotFound}},
		{tree, "/img-", Mapping{Action: NotFound}},
		{tree, "/img-x", Mapping{ServeEntry, "img-x"}},
		{tree, "/img-x/", Mapping{Action: NotFound}},
		{tree, "/nope/", Mapping{Action: NotFound}},
		{tree, "/index.html/", Mapping{Action: NotFound}},
		{noIndex, "/", Mapping{ServeListing, ""}},
		{noIndex, "/a/", Mapping{ServeListing, "a/"}},
		{NewTree(nil), "/", Mapping{ServeListing, ""}},
		{NewTree(nil), "/x", Mapping{Action: NotFound}},
	} {
		got, err := MapPath(c.tree, c.rest)
		if err != nil || got != c.want {
			t.Fatalf("MapPath(%q) = %+v (%v), %v; want %+v (%v)", c.rest, got, got.Action, err, c.want, c.want.Action)
		}
	}
	if _, err := MapPath(tree, "/../x"); err == nil {
		t.Fatal("MapPath accepted ..")
	}
}

func TestTreeChildren(t *testing.T) {
	tree := NewTree([]string{"b", "a0", "a/y", "a/z/q", "a.b", "a-z/x", "a-z/y", "a/y2", "b"})
	var names []string
	for _, c := range tree.Children("") {
		names = append(names, c.Name)
	}
	if got := joinNames(names); got != "a-z/,a.b,a/,a0,b" {
		t.Fatalf("root children %s", got)
	}
	names = names[:0]
	for _, c := range tree.Children("a/") {
		names = append(names, c.Name)
	}
	if got := joinNames(names); got != "y,y2,z/" {
		t.Fatalf("a/ children %s", got)
	}
	if tree.Len() != 8 || !tree.Has("a/y") || tree.Has("a") || !tree.HasPrefix("a/z/") || tree.HasPrefix("c") {
		t.Fatal("tree lookups")
	}
	if got := tree.Under("a-z/"); len(got) != 2 {
		t.Fatalf("Under = %v", got)
	}
}

func TestActionString(t *testing.T) {
	for a, want := range map[Action]string{NotFound: "not_found", ServeEntry: "entry", ServeListing: "listing", Redirect: "redirect"} {
		if a.String() != want {
			t.Fatalf("%d.String() = %q", a, a.String())
		}
	}
}

func TestParseName(t *testing.T) {
	for raw, want := range map[string][2]string{
		"site":           {"site", "site"},
		"blog.example":   {"blog.example", "blog.example"},
		"site@12":        {"site", "site@12"},
		"site%4012":      {"site", "site@12"},
		"a-b.c1.example": {"a-b.c1.example", "a-b.c1.example"},
	} {
		name, key, err := ParseName(raw)
		if err != nil || name != want[0] || key != want[1] {
			t.Fatalf("ParseName(%q) = %q, %q, %v", raw, name, key, err)
		}
	}
}
