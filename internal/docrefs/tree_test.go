package docrefs

import (
	"path"
	"strings"
	"testing"

	"github.com/ronhq/ron/internal/fixtures"
)

// TestTreeReferencesResolve: every docs/<file>.md §N in the repository
// names a document and a section that exist, and no code, script or
// document cites a bare § that a reader could not follow. Third-party data
// under testdata/ is not ours and is left out (its SOURCES.md is checked),
// and so is this package, whose texts are examples of references.
func TestTreeReferencesResolve(t *testing.T) {
	docs := map[string]string{}
	type file struct{ rel, text string }
	var files []file
	fixtures.ForEachTextFile(t, func(rel string, text []byte) {
		if strings.HasPrefix(rel, "docs/") && strings.HasSuffix(rel, ".md") {
			docs[path.Base(rel)] = string(text)
		}
		ours := !strings.HasPrefix(rel, "testdata/") || rel == "testdata/SOURCES.md"
		if ours && !strings.HasPrefix(rel, "internal/docrefs/") {
			files = append(files, file{rel, string(text)})
		}
	})
	for _, want := range []string{"architecture.md", "storage.md", "index.md", "registry.md", "gateway.md", "edge.md", "cluster.md"} {
		if docs[want] == "" {
			t.Errorf("docs/%s is missing", want)
		}
	}
	refs := 0
	for _, f := range files {
		self := ""
		if strings.HasPrefix(f.rel, "docs/") {
			self = path.Base(f.rel)
		}
		r, _ := Scan(f.text, self)
		refs += len(r)
		for _, p := range Check(f.text, self, docs) {
			t.Errorf("%s:%d: %s", f.rel, p.Line, p.Msg)
		}
	}
	if refs < 500 {
		t.Errorf("only %d references found; the scan is not reading the tree", refs)
	}
}
