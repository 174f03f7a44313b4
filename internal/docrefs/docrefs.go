// Package docrefs reads the references that code, scripts and documents make
// to the design documents in docs/: `docs/<file>.md §N` (with lists and
// ranges such as `§4.2, §5` or `§7.2–7.4`), and bare `§N` inside a document,
// which means a section of that same document. A reference resolves when its
// document exists and has the section: a numbered heading (`## 4. …`,
// `### 4.2 …`) or a top-level numbered list item directly under a heading
// (item 3 under `## 13.` is §13.3). A § that cites an RFC or another
// outside text must follow its name directly (`RFC 9110 §14.2`,
// `PMTiles v3 §3.2`); in code and scripts any other § is an error, so every
// section a reader meets names the document it is in.
package docrefs

import (
	"fmt"
	"regexp"
	"strings"
)

// Ref is one section reference found in a text.
type Ref struct {
	Doc     string // base name under docs/, e.g. "edge.md"
	Section string // "4.2"; "" for a reference to the whole document
	Line    int    // 1-based line of the reference in the text
}

// Problem is a reference that does not resolve, or a § that names no
// document.
type Problem struct {
	Line int
	Msg  string
}

const sec = `\d+(?:\.\d+)*`

var (
	// joiner removes a line break and the comment leader of the next line,
	// so that a reference split over two comment lines reads as one.
	joiner = regexp.MustCompile(`\n[ \t]*(?://+|#+|\*|>|--)?[ \t]*`)
	docRef = regexp.MustCompile(`docs/([A-Za-z0-9_-]+\.md)`)
	// run is what may follow an anchor: §N, ranges §N–M and lists joined by
	// commas, semicolons, "and", "or" or "/".
	run = regexp.MustCompile(`^(?:[ \t]*§[ \t]?` + sec + `(?:[ \t]*[–-][ \t]*§?[ \t]?` + sec + `)?(?:[ \t]*(?:,|;|/|\band\b|\bor\b)[ \t]*)?)+`)
	// outside anchors: an RFC, a four-digit RFC number, an outside spec.
	outside = regexp.MustCompile(`(?:\bRFC[ \t]?\d+|\b\d{4}|PMTiles v3|SOURCES\.md)$`)
	section = regexp.MustCompile(`§[ \t]?(` + sec + `)`)
	rangeTo = regexp.MustCompile(`[–-][ \t]*§?[ \t]?(` + sec + `)`)
	heading = regexp.MustCompile(`^#{2,6}[ \t]+(` + sec + `)\.?(?:[ \t]|$)`)
	item    = regexp.MustCompile(`^(\d+)\.[ \t]`)
	fence   = regexp.MustCompile("^[ \t]*```")
)

// Sections returns the section numbers a document defines: its numbered
// headings and the numbered list items at the start of a line directly
// under a numbered heading.
func Sections(doc string) map[string]bool {
	out := map[string]bool{}
	current, inFence := "", false
	for _, line := range strings.Split(doc, "\n") {
		if fence.MatchString(line) {
			inFence = !inFence
			continue
		}
		if inFence {
			continue
		}
		if m := heading.FindStringSubmatch(line); m != nil {
			current = m[1]
			out[current] = true
		} else if strings.HasPrefix(line, "#") {
			current = ""
		} else if m := item.FindStringSubmatch(line); m != nil && current != "" {
			out[current+"."+m[1]] = true
		}
	}
	return out
}

// Scan returns the references in text. self is the document text belongs
// to ("edge.md" for docs/edge.md, "" for any other file): its bare § are
// references to self; elsewhere a bare § is returned as a Problem.
func Scan(text, self string) ([]Ref, []Problem) {
	joined, lines := join(text)
	var refs []Ref
	var probs []Problem
	claimed := make([]bool, len(joined)) // bytes of § runs already attributed
	claim := func(doc string, from int) {
		m := run.FindString(joined[from:])
		for i := range m {
			claimed[from+i] = true
		}
		if doc == "" { // an outside text's sections are not ours to check
			return
		}
		for _, s := range sectionsOf(m) {
			refs = append(refs, Ref{Doc: doc, Section: s, Line: lines(from)})
		}
	}
	for _, m := range docRef.FindAllStringSubmatchIndex(joined, -1) {
		doc := joined[m[2]:m[3]]
		if run.FindString(joined[m[1]:]) == "" {
			refs = append(refs, Ref{Doc: doc, Line: lines(m[0])})
			continue
		}
		claim(doc, m[1])
	}
	for _, m := range section.FindAllStringIndex(joined, -1) {
		if claimed[m[0]] {
			continue
		}
		start := runStart(joined, m[0])
		if outside.MatchString(strings.TrimRight(joined[:start], " \t(")) {
			claim("", start)
			continue
		}
		if self != "" {
			claim(self, start)
			continue
		}
		probs = append(probs, Problem{Line: lines(m[0]), Msg: fmt.Sprintf("%q names no document: write docs/<file>.md %s", joined[m[0]:m[1]], joined[m[0]:m[1]])})
	}
	return refs, probs
}

// Check returns the problems of text: its bare § (see Scan) and every
// reference whose document is missing from docs or lacks the section.
// docs maps a document's base name to its text.
func Check(text, self string, docs map[string]string) []Problem {
	refs, probs := Scan(text, self)
	known := map[string]map[string]bool{}
	for _, r := range refs {
		body, ok := docs[r.Doc]
		if !ok {
			probs = append(probs, Problem{Line: r.Line, Msg: "docs/" + r.Doc + " does not exist"})
			continue
		}
		if r.Section == "" {
			continue
		}
		if known[r.Doc] == nil {
			known[r.Doc] = Sections(body)
		}
		if !known[r.Doc][r.Section] {
			probs = append(probs, Problem{Line: r.Line, Msg: fmt.Sprintf("docs/%s has no §%s", r.Doc, r.Section)})
		}
	}
	return probs
}

// join returns text with comment continuations folded into single lines,
// and a function mapping an offset of the folded text to its 1-based line
// in text.
func join(text string) (string, func(int) int) {
	var b strings.Builder
	var starts []int // offsets in the folded text where a source line starts
	last := 0
	starts = append(starts, 0)
	for _, m := range joiner.FindAllStringIndex(text, -1) {
		b.WriteString(text[last:m[0]])
		b.WriteByte(' ')
		starts = append(starts, b.Len())
		last = m[1]
	}
	b.WriteString(text[last:])
	return b.String(), func(off int) int {
		n := 0
		for n < len(starts) && starts[n] <= off {
			n++
		}
		return n
	}
}

// runStart walks back from the § at i over earlier members of the same
// list or range, so that "RFC 9110 §13.1.5, §8.8.2.2" is one run.
func runStart(s string, i int) int {
	start := i
	for {
		prev := strings.LastIndex(s[:start], "§")
		if prev < 0 {
			return start
		}
		if m := run.FindString(s[prev:]); prev+len(m) < start {
			return start
		}
		start = prev
	}
}

// sectionsOf returns every section a run names, range ends included.
func sectionsOf(r string) []string {
	var out []string
	for _, m := range section.FindAllStringSubmatch(r, -1) {
		out = append(out, m[1])
	}
	for _, m := range rangeTo.FindAllStringSubmatch(r, -1) {
		if !strings.Contains(m[0], "§") {
			out = append(out, m[1])
		}
	}
	return out
}
