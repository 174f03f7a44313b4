package tiles

import (
	"encoding/hex"
	"net/http"
	"strconv"
	"time"

	"github.com/zeebo/blake3"

	"github.com/ronhq/ron/httpx/ranges"
	"github.com/ronhq/ron/roles/edge/tiletype"
)

// packETag is a pack's ETag: "pk-<id>" (docs/edge.md §4.4).
func packETag(packID string) string { return `"pk-` + packID + `"` }

// tileETag is a tile's ETag (docs/edge.md §4.4): "pk-<pack id>-<tile id>", plus the
// coding's suffix when the stored bytes are sent content-encoded.
func tileETag(packID string, tileID uint64, sent tiletype.Coding) string {
	b := make([]byte, 0, 48+len(packID))
	b = append(b, `"pk-`...)
	b = append(b, packID...)
	b = append(b, '-')
	b = strconv.AppendUint(b, tileID, 10)
	b = append(b, sent.ETagSuffix()...)
	b = append(b, '"')
	return string(b)
}

// hashETag is `"<prefix>-<first 32 hex of BLAKE3(body)>"` (TileJSON: "tj").
func hashETag(prefix string, body []byte) string {
	sum := blake3.Sum256(body)
	return `"` + prefix + "-" + hex.EncodeToString(sum[:16]) + `"`
}

// validators are the validators of a pack-derived representation: the
// file's mtime, replaced by the response's Date when later (RFC 9110
// §8.8.2.1), never a strong date (docs/edge.md §2: a file can be rewritten twice within
// one second).
func validators(etag string, mtime, date time.Time) ranges.Validators {
	return ranges.Validators{ETag: etag, LastModified: clampMTime(mtime, date)}
}

// clampMTime is mtime, or date when mtime is later.
func clampMTime(mtime, date time.Time) time.Time {
	if mtime.After(date) {
		return date
	}
	return mtime
}

// headerSet holds header values an answer has ready; nil fields are
// formatted from the validators by setCommon (or left to the Range plan).
type headerSet struct {
	etag    []string // ETag
	lastMod []string // Last-Modified
	ctype   []string // Content-Type of a 200
	length  []string // Content-Length of a 200
}

// setCommon sets the headers every pack-derived answer carries: Date (when
// Options.Now was given; else net/http adds it), ETag, Last-Modified (when
// set), Cache-Control and Accept-Ranges, taking the values hs has ready.
func (t *Tiles) setCommon(h http.Header, s Settings, v ranges.Validators, date time.Time, hs headerSet) {
	if t.date {
		h["Date"] = t.hv.dateOf(date)
	}
	switch {
	case hs.etag != nil:
		h["Etag"] = hs.etag
	case v.ETag != "":
		h.Set("ETag", v.ETag)
	}
	switch {
	case hs.lastMod != nil:
		h["Last-Modified"] = hs.lastMod
	case !v.LastModified.IsZero():
		h.Set("Last-Modified", v.LastModified.UTC().Format(http.TimeFormat))
	}
	h["Cache-Control"] = t.hv.cacheControlOf(s.TilesCacheControl)
	h["Accept-Ranges"] = valBytes
}
