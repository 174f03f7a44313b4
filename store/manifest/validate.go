package manifest

import (
	"fmt"
	"maps"
	"mime"
	"slices"
	"strings"
	"unicode/utf8"
)

// validate checks a ManifestV1 built in Go against every rule of the format.
// Paths are visited in tree order so the reported error is deterministic.
func validate(m ManifestV1) error {
	paths := slices.SortedFunc(maps.Keys(m.Entries), cmpTree)
	for _, p := range paths {
		if err := checkPath(p); err != nil {
			return err
		}
		if err := checkEntry(p, m.Entries[p]); err != nil {
			return err
		}
	}
	if err := checkPrefixes(paths); err != nil {
		return err
	}
	return checkMeta(m.Meta)
}

// checkEntry checks the fields of a Go-built entry (the id is always valid).
func checkEntry(p string, e Entry) error {
	w := entryWhere(p)
	if e.Size < 0 || e.Size > MaxSize {
		return invalidf(w+".size", "%d is outside 0...2^53-1", e.Size)
	}
	if err := checkType(e.Type); err != nil {
		return invalidf(w+".type", "%v", err)
	}
	return nil
}

// checkPath applies the path rules: 1–1024 bytes of valid UTF-8, segments of
// 1–255 bytes joined by '/', no "." or ".." segment, no '\', no control
// characters (U+0000–U+001F, U+007F).
func checkPath(p string) error {
	w := entryWhere(p)
	switch {
	case len(p) == 0 || len(p) > MaxPathBytes:
		return invalidf(w, "path length %d is outside 1...%d bytes", len(p), MaxPathBytes)
	case !utf8.ValidString(p):
		return invalidf(w, "path is not valid UTF-8")
	case p[0] == '/':
		return invalidf(w, "path has a leading '/'")
	case p[len(p)-1] == '/':
		return invalidf(w, "path has a trailing '/'")
	}
	for i := 0; i < len(p); i++ {
		if c := p[i]; c == '\\' || c < 0x20 || c == 0x7f {
			return invalidf(w, "path contains forbidden byte %#02x at offset %d", c, i)
		}
	}
	for seg := range strings.SplitSeq(p, "/") {
		if err := checkSegment(seg); err != nil {
			return invalidf(w, "%s", err)
		}
	}
	return nil
}

func checkSegment(seg string) error {
	switch {
	case seg == "":
		return fmt.Errorf("path has an empty segment")
	case seg == "." || seg == "..":
		return fmt.Errorf("path has a %q segment", seg)
	case len(seg) > MaxSegmentBytes:
		return fmt.Errorf("path segment of %d bytes exceeds %d", len(seg), MaxSegmentBytes)
	}
	return nil
}

// checkType accepts 1–255 bytes of printable ASCII that mime.ParseMediaType
// accepts (parameters included). The error does not name the field.
func checkType(t string) error {
	if len(t) == 0 || len(t) > MaxTypeBytes {
		return fmt.Errorf("media type length %d is outside 1...%d bytes", len(t), MaxTypeBytes)
	}
	for i := 0; i < len(t); i++ {
		if c := t[i]; c < 0x20 || c > 0x7e {
			return fmt.Errorf("media type contains non-printable or non-ASCII byte %#02x", c)
		}
	}
	if _, _, err := mime.ParseMediaType(t); err != nil {
		return fmt.Errorf("bad media type %s: %v", clip(t), err)
	}
	return nil
}

// checkMeta applies the meta limits to a whole map.
func checkMeta(meta map[string]string) error {
	if len(meta) > MaxMetaKeys {
		return invalidf("meta", "%d keys exceed %d", len(meta), MaxMetaKeys)
	}
	for _, k := range slices.Sorted(maps.Keys(meta)) {
		if err := checkMetaPair(k, meta[k]); err != nil {
			return err
		}
	}
	return nil
}

// checkMetaPair checks one key and its value: key 1–128 bytes, value at most
// 4096 bytes, both valid UTF-8.
func checkMetaPair(k, v string) error {
	w := "meta[" + clip(k) + "]"
	switch {
	case len(k) == 0 || len(k) > MaxMetaKeyBytes:
		return invalidf(w, "key length %d is outside 1...%d bytes", len(k), MaxMetaKeyBytes)
	case len(v) > MaxMetaValueBytes:
		return invalidf(w, "value of %d bytes exceeds %d", len(v), MaxMetaValueBytes)
	case !utf8.ValidString(k) || !utf8.ValidString(v):
		return invalidf(w, "not valid UTF-8")
	}
	return nil
}

// checkPrefixes rejects a path that is also a directory of another path
// ("a" next to "a/b"). paths must be sorted by cmpTree, which places a
// path's descendants immediately after it, so comparing neighbours suffices.
func checkPrefixes(paths []string) error {
	for i := 1; i < len(paths); i++ {
		a, b := paths[i-1], paths[i]
		if len(b) > len(a) && b[len(a)] == '/' && b[:len(a)] == a {
			return invalidf(entryWhere(a), "path is also a directory (of %s)", clip(b))
		}
	}
	return nil
}

// cmpTree orders paths bytewise except that '/' sorts before every other
// byte (valid paths hold no byte below 0x20), so that "a", "a/b" and "a/c"
// are adjacent even when "a-b" or "a.b" exist.
func cmpTree(a, b string) int {
	n := min(len(a), len(b))
	i := 0
	for ; i+64 <= n && a[i:i+64] == b[i:i+64]; i += 64 { // skip long shared prefixes fast
	}
	for ; i < n; i++ {
		x, y := treeByte(a[i]), treeByte(b[i])
		if x != y {
			return int(x) - int(y)
		}
	}
	if len(a) != len(b) {
		return len(a) - len(b)
	}
	return strings.Compare(a, b) // total order even for invalid paths holding 0x00
}

func treeByte(c byte) byte {
	if c == '/' {
		return 0
	}
	return c
}
