package sites

import (
	"slices"
	"sort"
	"strings"
)

// Tree is the sorted (byte order) set of a manifest's entry paths, for
// exact and prefix lookups. It is immutable once built.
type Tree struct {
	paths []string
}

// NewTree returns the tree of paths (copied, sorted, duplicates dropped).
func NewTree(paths []string) *Tree {
	ps := slices.Clone(paths)
	slices.Sort(ps)
	return &Tree{paths: slices.Compact(ps)}
}

// Len returns the number of paths.
func (t *Tree) Len() int { return len(t.paths) }

// Has reports whether p is a path of t.
func (t *Tree) Has(p string) bool {
	_, ok := slices.BinarySearch(t.paths, p)
	return ok
}

// HasPrefix reports whether some path of t starts with prefix.
func (t *Tree) HasPrefix(prefix string) bool {
	i, _ := slices.BinarySearch(t.paths, prefix)
	return i < len(t.paths) && strings.HasPrefix(t.paths[i], prefix)
}

// Under returns the paths starting with prefix, in byte order. Paths
// sharing a prefix are contiguous in byte order, so this is one range.
func (t *Tree) Under(prefix string) []string {
	lo, _ := slices.BinarySearch(t.paths, prefix)
	rest := t.paths[lo:]
	n := sort.Search(len(rest), func(i int) bool { return !strings.HasPrefix(rest[i], prefix) })
	return rest[:n]
}

// Child is one name in a directory listing: a file (Dir false, Path its
// full path) or a subdirectory (Dir true, Name ending in '/').
type Child struct {
	Name string
	Path string
	Dir  bool
}

// Children returns the direct children of directory d ("" or ending in
// '/'), sorted by Name in byte order, each subdirectory once.
func (t *Tree) Children(d string) []Child {
	var out []Child
	for _, p := range t.Under(d) {
		rel := p[len(d):]
		if i := strings.IndexByte(rel, '/'); i >= 0 {
			name := rel[:i+1]
			if n := len(out); n > 0 && out[n-1].Dir && out[n-1].Name == name {
				continue
			}
			out = append(out, Child{Name: name, Dir: true})
			continue
		}
		out = append(out, Child{Name: rel, Path: p})
	}
	slices.SortStableFunc(out, func(a, b Child) int { return strings.Compare(a.Name, b.Name) })
	return out
}
