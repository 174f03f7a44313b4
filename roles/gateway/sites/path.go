package sites

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/ronhq/ron/httpx"
)

// Path is a validated /n path: the part after "/n/{name}".
type Path struct {
	// Slash is false for "/n/{name}" itself and true once a '/' follows.
	Slash bool
	// P is the path after "/n/{name}/", percent-decoded once ("" for the
	// root; a trailing '/' names a directory).
	P string
}

// ParsePath validates rest, the raw (still escaped) text after "/n/{name}":
// "" (no slash) or text starting with '/'. It decodes it exactly once and
// rejects, with a 400 bad_request *httpx.Error, an encoded slash (%2F), an
// invalid escape, '\' or NUL after decoding, a "." or ".." segment (also
// spelled %2e) and an empty segment other than a trailing one (so "//" and
// "a//b" are rejected, "a/" is a directory).
func ParsePath(rest string) (Path, error) {
	if rest == "" {
		return Path{}, nil
	}
	if rest[0] != '/' {
		return Path{}, badPath("path must start with '/'")
	}
	if strings.Contains(strings.ToLower(rest), "%2f") {
		return Path{}, badPath("encoded slash in path")
	}
	p, err := url.PathUnescape(rest[1:])
	if err != nil {
		return Path{}, badPath("invalid percent-encoding in path")
	}
	if strings.ContainsAny(p, "\\\x00") {
		return Path{}, badPath("backslash or NUL in path")
	}
	segs := strings.Split(p, "/")
	for i, s := range segs {
		switch {
		case s == "." || s == "..":
			return Path{}, badPath("dot segment in path")
		case s == "" && i < len(segs)-1:
			return Path{}, badPath("empty segment in path")
		}
	}
	return Path{Slash: true, P: p}, nil
}

// IsDir reports whether p names a directory: empty or ending in '/'.
func (p Path) IsDir() bool { return p.P == "" || strings.HasSuffix(p.P, "/") }

func badPath(msg string) error {
	return httpx.NewError(http.StatusBadRequest, httpx.CodeBadRequest, "%s", msg)
}

// Action is what a site path maps to.
type Action int

// Actions of MapPath (docs/gateway.md §5 path mapping).
const (
	// NotFound: 404.
	NotFound Action = iota
	// ServeEntry: serve the entry Mapping.Path.
	ServeEntry
	// ServeListing: answer the JSON listing of directory Mapping.Path ("" or
	// ending in '/').
	ServeListing
	// Redirect: 301 to "/n/{name}/" + Mapping.Path (escaped per segment),
	// query kept. Mapping.Path is "" or ends in '/'.
	Redirect
)

// String names the action for tests and logs.
func (a Action) String() string {
	switch a {
	case ServeEntry:
		return "entry"
	case ServeListing:
		return "listing"
	case Redirect:
		return "redirect"
	}
	return "not_found"
}

// Mapping is the result of mapping a path over a manifest's tree.
type Mapping struct {
	Action Action
	Path   string
}

// MapPath validates rest with ParsePath and maps it over t (Tree.Map).
func MapPath(t *Tree, rest string) (Mapping, error) {
	p, err := ParsePath(rest)
	if err != nil {
		return Mapping{}, err
	}
	return t.Map(p), nil
}

// Map applies the docs/gateway.md §5 rules to a manifest target, in order:
//
//  0. "/n/{name}" (no slash) → Redirect to the root "".
//  1. p empty or ending in '/' (directory d): d+"index.html" is an entry →
//     ServeEntry; else d is empty or some entry starts with d → ServeListing;
//     else NotFound.
//  2. p is an entry → ServeEntry.
//  3. some entry starts with p+"/" → Redirect to p+"/".
//  4. otherwise NotFound.
func (t *Tree) Map(p Path) Mapping {
	switch {
	case !p.Slash:
		return Mapping{Action: Redirect}
	case p.IsDir():
		if idx := p.P + "index.html"; t.Has(idx) {
			return Mapping{Action: ServeEntry, Path: idx}
		}
		if p.P == "" || t.HasPrefix(p.P) {
			return Mapping{Action: ServeListing, Path: p.P}
		}
	case t.Has(p.P):
		return Mapping{Action: ServeEntry, Path: p.P}
	case t.HasPrefix(p.P + "/"):
		return Mapping{Action: Redirect, Path: p.P + "/"}
	}
	return Mapping{Action: NotFound}
}

// escapePath escapes each '/'-separated segment of p with url.PathEscape.
func escapePath(p string) string {
	segs := strings.Split(p, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return strings.Join(segs, "/")
}
