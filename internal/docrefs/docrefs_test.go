package docrefs

import (
	"slices"
	"strings"
	"testing"
)

const edgeDoc = "# Edge\n\n## 1. Endpoints\n\nSee §4.2.\n\n## 4. Packs\n\n### 4.2 Verification\n\n" +
	"1. first step\n   1. nested, not a section\n2. second step\n\n```\n## 9. in a code block\n```\n\n#### Notes\n\n3. under an unnumbered heading\n"

func TestSections(t *testing.T) {
	got := Sections(edgeDoc)
	var keys []string
	for k := range got {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	if want := []string{"1", "4", "4.2", "4.2.1", "4.2.2"}; !slices.Equal(keys, want) {
		t.Fatalf("sections %v, want %v", keys, want)
	}
}

func TestCheck(t *testing.T) {
	docs := map[string]string{"edge.md": edgeDoc, "storage.md": "## 3. Writes\n## 5. Engine\n"}
	cases := []struct {
		name, text, self string
		problems         []string // substrings, in order
	}{
		{"resolves", "// see docs/edge.md §4.2 and docs/storage.md §3", "", nil},
		{"whole document", "see docs/storage.md for writes", "", nil},
		{"list and range", "(docs/edge.md §4, §4.2.1–4.2.2; §1)", "", nil},
		{"split over comment lines", "// the writes of docs/storage.md\n// §3, §5 apply", "", nil},
		{"split over script lines", "# docs/storage.md\n#   §5", "", nil},
		{"missing section", "docs/edge.md §7", "", []string{"docs/edge.md has no §7"}},
		{"missing list member", "docs/edge.md §4, §6", "", []string{"has no §6"}},
		{"missing range end", "docs/edge.md §1–§2", "", []string{"has no §2"}},
		{"missing document", "docs/nosuch.md §1", "", []string{"docs/nosuch.md does not exist"}},
		{"missing document, no section", "read docs/nosuch.md", "", []string{"docs/nosuch.md does not exist"}},
		{"bare section in code", "// retries (§6)", "", []string{`"§6" names no document`}},
		{"bare after unrelated words", "// docs/edge.md says so; the cache is §4", "", []string{`"§4" names no document`}},
		{"rfc", "// RFC 9110 §13.1.5, §8.8.2.2 and 9111 §4.2.1", "", nil},
		{"rfc then bare", "// RFC 9111 §4.3.5 HEAD mismatch, §4.4 invalidation", "", []string{`"§4.4" names no document`}},
		{"outside spec", "// PMTiles v3 §3.2 and testdata/SOURCES.md §5", "", nil},
		{"bare in its own document", "See §4.2 and §1.", "edge.md", nil},
		{"bare in its own document, missing", "See §8.", "edge.md", []string{"docs/edge.md has no §8"}},
		{"bare rfc in a document", "as RFC 9110 §14.2 allows", "edge.md", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			probs := Check(c.text, c.self, docs)
			if len(probs) != len(c.problems) {
				t.Fatalf("problems %v, want %d matching %q", probs, len(c.problems), c.problems)
			}
			for i, p := range probs {
				if !strings.Contains(p.Msg, c.problems[i]) {
					t.Errorf("problem %d = %q, want it to contain %q", i, p.Msg, c.problems[i])
				}
			}
		})
	}
}

func TestProblemLines(t *testing.T) {
	text := "package x\n\n// one\n// docs/edge.md\n// §9 two\nvar y = 1 // §3\n"
	probs := Check(text, "", map[string]string{"edge.md": edgeDoc})
	if len(probs) != 2 || probs[0].Line != 6 || probs[1].Line != 4 {
		t.Fatalf("problems %+v, want the bare §3 on line 6, then the missing §9 of the reference on line 4", probs)
	}
}

func FuzzCheck(f *testing.F) {
	f.Add("docs/edge.md §4.2–4.2.1, §1; RFC 9110 §1\n// §3", "")
	f.Add("See §4 and §", "edge.md")
	f.Fuzz(func(t *testing.T, text, self string) {
		for _, p := range Check(text, self, map[string]string{"edge.md": edgeDoc}) {
			if p.Line < 1 || p.Line > strings.Count(text, "\n")+1 {
				t.Fatalf("problem on line %d of a %d-line text", p.Line, strings.Count(text, "\n")+1)
			}
		}
	})
}
