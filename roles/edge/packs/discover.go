package packs

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// nameRE is the pack name rule of docs/edge.md §4.1.
var nameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)

// ValidName reports whether name is a valid pack name (docs/edge.md §4.1).
func ValidName(name string) bool { return nameRE.MatchString(name) }

// KindOf returns the kind a file's extension names (".pmtiles" or
// ".mbtiles", exactly), and false for any other file.
func KindOf(path string) (Kind, bool) {
	switch filepath.Ext(path) {
	case ".pmtiles":
		return KindPMTiles, true
	case ".mbtiles":
		return KindMBTiles, true
	}
	return "", false
}

// NameOf returns a pack file's name: its base name without the extension.
func NameOf(path string) string {
	base := filepath.Base(path)
	return strings.TrimSuffix(base, filepath.Ext(base))
}

// ignored reports whether a folder entry is skipped by discovery: hidden
// files and names ending in .tmp or .part (docs/edge.md §4.1).
func ignored(base string) bool {
	return strings.HasPrefix(base, ".") || strings.HasSuffix(base, ".tmp") || strings.HasSuffix(base, ".part")
}

// candidate is one pack name found by discovery. err, when set, is a mount
// error known before opening (a bad name, an unknown extension, two files
// with the name).
type candidate struct {
	name   string
	path   string
	kind   Kind
	listed bool // from Options.Files
	err    error
}

// discover lists the pack files of opt: the packs directly inside Dir plus
// Files. The error says why Dir cannot be read; the candidates are then
// those of Files alone.
func discover(opt Options) (map[string]candidate, error) {
	var found []candidate
	var dirErr error
	if opt.Dir != "" {
		entries, err := os.ReadDir(opt.Dir)
		if err != nil {
			dirErr = fmt.Errorf("packs_dir %s: %w", opt.Dir, err)
		}
		for _, e := range entries {
			if c, ok := dirCandidate(opt.Dir, e); ok {
				found = append(found, c)
			}
		}
	}
	for _, f := range opt.Files {
		found = append(found, listedCandidate(f))
	}
	return group(found), dirErr
}

// dirCandidate turns a folder entry into a candidate, or false when it is
// not a pack file.
func dirCandidate(dir string, e os.DirEntry) (candidate, bool) {
	base := e.Name()
	kind, ok := KindOf(base)
	if !ok || ignored(base) || e.IsDir() {
		return candidate{}, false
	}
	return named(candidate{path: filepath.Join(dir, base), kind: kind}), true
}

// CheckFile reports why a listed pack file (Options.Files, the packs key)
// cannot mount, judged by its path alone: a name that is not valid (docs/edge.md §4.1)
// or an extension other than .pmtiles and .mbtiles. nil when neither.
func CheckFile(path string) error { return listedCandidate(path).err }

// listedCandidate turns an Options.Files entry into a candidate; a file
// with another extension is a mount error.
func listedCandidate(path string) candidate {
	kind, ok := KindOf(path)
	c := named(candidate{path: path, kind: kind, listed: true})
	if !ok && c.err == nil {
		c.err = fmt.Errorf("%s: not a .pmtiles or .mbtiles file", path)
	}
	return c
}

// named sets c's name from its path and checks it.
func named(c candidate) candidate {
	c.name = NameOf(c.path)
	if !ValidName(c.name) {
		c.err = fmt.Errorf("%s: pack name %q does not match %s", c.path, c.name, nameRE)
	}
	return c
}

// group merges candidates by name: the same file found twice counts once,
// two files with one name are a mount error for that name.
func group(found []candidate) map[string]candidate {
	out := make(map[string]candidate, len(found))
	paths := map[string][]string{}
	for _, c := range found {
		key := cleanPath(c.path)
		prev, seen := out[c.name]
		if seen && slices.Contains(paths[c.name], key) {
			prev.listed = prev.listed || c.listed
			out[c.name] = prev
			continue
		}
		paths[c.name] = append(paths[c.name], key)
		if seen {
			c.err = fmt.Errorf("pack name %q is used by %d files: %s", c.name, len(paths[c.name]),
				strings.Join(paths[c.name], ", "))
		}
		out[c.name] = c
	}
	return out
}

// cleanPath is path made absolute and clean, for comparing two spellings
// of one file.
func cleanPath(path string) string {
	if abs, err := filepath.Abs(path); err == nil {
		return abs
	}
	return filepath.Clean(path)
}
