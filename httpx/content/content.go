// Package content is the response policy of every content-addressed answer,
// whichever role sends it (docs/architecture.md §2): the bytes behind an id
// never change, so an answer about an object is cacheable for a year and
// immutable, its strong ETag is the quoted id ("b3:<hex>"), byte ranges are
// offered, and its declared type is not to be sniffed. Range and
// precondition evaluation is httpx/ranges; this package decides the headers.
package content

import (
	"encoding/hex"
	"net/http"
	"strings"

	"github.com/ronhq/ron/store"
)

// Immutable is the Cache-Control of every answer whose bytes are fixed by
// their id: objects, their outboards and slices, registry tiles.
const Immutable = "public, max-age=31536000, immutable"

// Shared header values. Each slice has capacity 1, so an h.Add copies it;
// nothing may modify them in place.
var (
	valImmutable = []string{Immutable}
	valBytes     = []string{"bytes"}
	valNosniff   = []string{"nosniff"}
)

// ETag is the strong ETag of an object: `"b3:<hex>"`, the quoted
// store.ID.String, formatted in one allocation.
func ETag(id store.ID) string {
	var b [2 + len(`b3:`) + 2*len(store.ID{})]byte
	n := copy(b[:], `"b3:`)
	n += hex.Encode(b[n:], id[:])
	b[n] = '"'
	return string(b[:])
}

// ETagMatches applies If-None-Match's weak comparison (RFC 9110 §13.1.2)
// to id's ETag: true when a listed tag is "b3:<hex>" or W/"b3:<hex>". A
// bare "*" does not match: it says nothing about which object exists.
func ETagMatches(ifNoneMatch string, id store.ID) bool {
	if ifNoneMatch == "" {
		return false
	}
	want := ETag(id)
	for t := range strings.SplitSeq(ifNoneMatch, ",") {
		if strings.TrimPrefix(strings.TrimSpace(t), "W/") == want {
			return true
		}
	}
	return false
}

// SetImmutable sets the headers of an answer whose bytes never change
// under etag: ETag, Cache-Control Immutable and X-Content-Type-Options
// nosniff.
func SetImmutable(h http.Header, etag string) {
	h["Etag"] = []string{etag}
	h["Cache-Control"] = valImmutable
	h["X-Content-Type-Options"] = valNosniff
}

// SetObject sets the headers of an answer about an object whose ETag is
// etag (ETag(id)): those of SetImmutable and Accept-Ranges bytes.
func SetObject(h http.Header, etag string) {
	SetImmutable(h, etag)
	h["Accept-Ranges"] = valBytes
}
