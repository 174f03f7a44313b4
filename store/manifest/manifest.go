// Package manifest implements ManifestV1 (docs/index.md §2): the JSON object
// that describes a directory tree as a map of slash-separated paths to object
// ids, sizes and media types.
//
// Writers (Encode, FromDir) produce only the RFC 8785 (JCS) canonical bytes,
// so the same tree always gets the same id. The reader (Parse) accepts any
// JSON text of the ManifestV1 shape up to MaxBytes: whitespace and key order
// are free, a missing meta means {}, a missing type is guessed from the
// path's extension. Both apply the same rules (the reader additionally fills
// in defaults), so Encode succeeds on every value Parse returns, and
// Parse(Encode(m)) equals m for every m Encode accepts (nil maps come back
// empty).
//
// Every error about manifest content wraps ErrInvalid and names the offending
// field (for example `entries["a/b.txt"].size`).
package manifest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"path"

	"github.com/gowebpki/jcs"

	"github.com/ronhq/ron/store"
)

// Format constants and limits of ManifestV1.
const (
	// MediaType is the Content-Type a manifest is stored with. Readers match
	// it ignoring parameters.
	MediaType = "application/vnd.ron.manifest+json"
	// Version is the only supported value of the top-level "version" field.
	Version = 1
	// MaxBytes bounds the encoded size of a manifest (readers and writers).
	MaxBytes = 8 << 20
	// MaxPathBytes bounds the length of an entry path in bytes.
	MaxPathBytes = 1024
	// MaxSegmentBytes bounds each '/'-separated segment of a path in bytes.
	MaxSegmentBytes = 255
	// MaxTypeBytes bounds the length of an entry's media type in bytes.
	MaxTypeBytes = 255
	// MaxSize is the largest entry size (2^53-1, exact in an IEEE double).
	MaxSize = 1<<53 - 1
	// MaxMetaKeys bounds the number of meta keys.
	MaxMetaKeys = 64
	// MaxMetaKeyBytes bounds the length of a meta key (at least 1 byte).
	MaxMetaKeyBytes = 128
	// MaxMetaValueBytes bounds the length of a meta value (may be empty).
	MaxMetaValueBytes = 4096
	// DefaultType is the type of an entry whose extension is unknown.
	DefaultType = "application/octet-stream"
)

// ErrInvalid is wrapped by every error reporting a manifest that breaks a
// rule of the format (Parse, Encode, FromDir's result check).
var ErrInvalid = errors.New("manifest: invalid")

// Entry is one file of a manifest: the id of its bytes, its size (advisory
// for readers, 0…MaxSize) and its media type (1–MaxTypeBytes bytes of
// printable ASCII that mime.ParseMediaType accepts).
type Entry struct {
	ID   store.ID
	Size int64
	Type string
}

// ManifestV1 is a decoded manifest. Entries maps paths (see Parse for the
// rules) to files; Meta holds free-form string metadata. The version is
// always Version. Values returned by Parse have non-nil maps; Encode treats
// nil maps as empty.
type ManifestV1 struct {
	Entries map[string]Entry
	Meta    map[string]string
}

// wireEntry and wire are the JSON shape handed to encoding/json before
// jcs.Transform puts it in canonical form (key order is JCS's, not ours).
type wireEntry struct {
	ID   string `json:"id"`
	Size int64  `json:"size"`
	Type string `json:"type"`
}

type wire struct {
	Version int                  `json:"version"`
	Entries map[string]wireEntry `json:"entries"`
	Meta    map[string]string    `json:"meta"`
}

// Encode returns the canonical RFC 8785 bytes of m: no whitespace, keys
// ordered by UTF-16 code units, "meta" always present ({} when empty) and
// every "type" written. It first checks m against every rule Parse applies,
// including that no path is also a directory of another path (one Entry
// "a" next to "a/b"), that every Type is non-empty (Encode never guesses),
// and that the result fits in MaxBytes; a failure wraps ErrInvalid.
func Encode(m ManifestV1) ([]byte, error) {
	if err := validate(m); err != nil {
		return nil, err
	}
	raw, err := json.Marshal(toWire(m))
	if err != nil {
		return nil, fmt.Errorf("manifest: encode: %w", err)
	}
	out, err := jcs.Transform(raw)
	if err != nil {
		return nil, fmt.Errorf("manifest: canonicalize: %w", err)
	}
	if len(out) > MaxBytes {
		return nil, invalidf("manifest", "encoded size %d exceeds %d bytes", len(out), MaxBytes)
	}
	return out, nil
}

func toWire(m ManifestV1) wire {
	w := wire{
		Version: Version,
		Entries: make(map[string]wireEntry, len(m.Entries)),
		Meta:    make(map[string]string, len(m.Meta)),
	}
	for p, e := range m.Entries {
		w.Entries[p] = wireEntry{ID: e.ID.String(), Size: e.Size, Type: e.Type}
	}
	for k, v := range m.Meta {
		w.Meta[k] = v
	}
	return w
}

// IsCanonical reports whether b is a valid manifest in exactly the form a
// writer produces: Parse(b) succeeds and Encode of the result equals b byte
// for byte. Whitespace, another key order, a missing meta or type, escapes
// such as \/ or \u0041, or numbers such as 1e2 make it false.
func IsCanonical(b []byte) bool {
	m, err := Parse(b)
	if err != nil {
		return false
	}
	enc, err := Encode(m)
	return err == nil && bytes.Equal(enc, b)
}

// ID returns the id of the canonical encoding of m (store.Sum(Encode(m))),
// the id under which a writer stores it.
func ID(m ManifestV1) (store.ID, error) {
	b, err := Encode(m)
	if err != nil {
		return store.ID{}, err
	}
	return store.Sum(b), nil
}

// GuessType returns the media type for p's extension according to
// mime.TypeByExtension, or DefaultType when the extension is unknown or maps
// to a type Encode would refuse. The result depends on the host's MIME
// tables for extensions Go does not know built in.
func GuessType(p string) string {
	t := mime.TypeByExtension(path.Ext(p))
	if t == "" || checkType(t) != nil {
		return DefaultType
	}
	return t
}

// invalidf builds an error wrapping ErrInvalid that names the field at where.
func invalidf(where, format string, args ...any) error {
	return fmt.Errorf("%w: %s: %s", ErrInvalid, where, fmt.Sprintf(format, args...))
}

// clip quotes s for an error message, cutting it to a bounded length so that
// hostile input cannot flood logs.
func clip(s string) string {
	const limit = 64
	if len(s) > limit {
		return fmt.Sprintf("%q…(%d bytes)", s[:limit], len(s))
	}
	return fmt.Sprintf("%q", s)
}

// entryWhere names the entry at path p in error messages.
func entryWhere(p string) string { return "entries[" + clip(p) + "]" }
