package ranges

import (
	"crypto/rand"
	"encoding/hex"
	"io"
	"net/http"
	"strconv"
	"strings"
)

// Plan is the answer to one request decided from its conditionals and Range:
// the status, the ranges, the multipart boundary and the exact body length.
type Plan struct {
	// Status is 200, 206, 304, 412 or 416.
	Status int
	// Ranges holds the ranges of a 206 in request order (one or more); nil
	// otherwise.
	Ranges []ByteRange
	// Boundary is the multipart/byteranges boundary of a 206 with several
	// ranges: 30 random lowercase hex characters. Empty otherwise.
	Boundary string
	// ContentLength is the exact number of body bytes WriteBody writes for a
	// 200 (the size) or a 206 (the range length, or the whole multipart body
	// including its framing). Zero for 304, 412 and 416.
	ContentLength int64
}

// NewPlan evaluates the request's conditionals ([CheckPreconditions]), then its
// If-Range ([IfRangeAllows]) and Range ([ParseRange] with maxParts) against a
// representation of size bytes with entity tag etag and media type contentType
// (used for the multipart framing; may be empty; callers pass a valid header
// field value).
//
// Range and If-Range apply to GET only: HEAD (and any other method) ignores
// them and gets 200, 304 or 412. A failed If-Range ignores Range, even a
// malformed one. Range on an empty representation is ignored. A single range
// gives a 206 with one range; several give a multipart 206 with a fresh random
// boundary.
func NewPlan(r *http.Request, size int64, etag, contentType string, maxParts int) Plan {
	return NewPlanFor(r, size, Validators{ETag: etag}, contentType, maxParts)
}

// NewPlanFor is [NewPlan] for a representation with the validators v: the
// preconditions are those of [CheckConditions] (so Last-Modified dates count
// when v has one) and an If-Range date allows the Range only when it equals a
// strong v.LastModified.
func NewPlanFor(r *http.Request, size int64, v Validators, contentType string, maxParts int) Plan {
	if st := CheckConditions(r, v); st != 0 {
		return Plan{Status: st}
	}
	full := Plan{Status: http.StatusOK, ContentLength: max(size, 0)}
	hdr := r.Header.Get("Range")
	if r.Method != http.MethodGet || hdr == "" || !ifRangeAllowsFor(r, v) {
		return full
	}
	rs, outcome := ParseRange(hdr, size, maxParts)
	switch outcome {
	case Unsatisfiable:
		return Plan{Status: http.StatusRequestedRangeNotSatisfiable}
	case Satisfiable:
		return partialPlan(rs, size, contentType)
	}
	return full
}

// partialPlan builds the 206 plan for one or more satisfiable ranges.
func partialPlan(rs []ByteRange, size int64, contentType string) Plan {
	p := Plan{Status: http.StatusPartialContent, Ranges: rs}
	if len(rs) == 1 {
		p.ContentLength = rs[0].Length
		return p
	}
	p.Boundary = newBoundary()
	p.ContentLength = int64(len(closeDelimiter(p.Boundary)))
	for _, br := range rs {
		p.ContentLength += int64(len(partHeader(p.Boundary, contentType, br, size))) + br.Length
	}
	return p
}

// newBoundary returns 30 random lowercase hex characters.
func newBoundary() string {
	var b [15]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (it crashes instead)
	return hex.EncodeToString(b[:])
}

// MultipartContentType returns the Content-Type value of a multipart/byteranges
// body with the given boundary.
func MultipartContentType(boundary string) string {
	return "multipart/byteranges; boundary=" + boundary
}

// partHeader is the framing before one part's bytes (RFC 9110 §14.6):
// "\r\n--B\r\nContent-Type: T\r\nContent-Range: bytes a-b/N\r\n\r\n". The
// Content-Type line is left out when contentType is empty; CR and LF in it
// become spaces.
func partHeader(boundary, contentType string, br ByteRange, size int64) string {
	b := make([]byte, 0, 96+len(boundary)+len(contentType))
	b = append(b, "\r\n--"...)
	b = append(b, boundary...)
	b = append(b, "\r\n"...)
	if contentType != "" {
		b = append(b, "Content-Type: "...)
		b = append(b, headerNewlineToSpace.Replace(contentType)...)
		b = append(b, "\r\n"...)
	}
	b = append(b, "Content-Range: "...)
	b = append(b, br.ContentRange(size)...)
	b = append(b, "\r\n\r\n"...)
	return string(b)
}

// headerNewlineToSpace keeps a part's Content-Type on one line, as net/http
// does for response headers.
var headerNewlineToSpace = strings.NewReplacer("\r", " ", "\n", " ")

// closeDelimiter is the framing after the last part: "\r\n--B--\r\n".
func closeDelimiter(boundary string) string {
	return "\r\n--" + boundary + "--\r\n"
}

// SetHeaders sets the representation-framing headers of the plan on h for a
// representation of size bytes and media type contentType:
//
//   - 200: Content-Length, and Content-Type when contentType is not empty.
//   - 206 single: Content-Length, Content-Range "bytes a-b/N", and Content-Type
//     when contentType is not empty.
//   - 206 multipart: Content-Length and Content-Type
//     "multipart/byteranges; boundary=…".
//   - 416: Content-Range "bytes */N" (the caller writes the error body and its
//     length).
//   - 304, 412: nothing.
//
// It never sets ETag, Cache-Control or Accept-Ranges; callers do.
func (p Plan) SetHeaders(h http.Header, size int64, contentType string) {
	switch p.Status {
	case http.StatusOK, http.StatusPartialContent:
	case http.StatusRequestedRangeNotSatisfiable:
		h.Set("Content-Range", UnsatisfiedContentRange(size))
		return
	default:
		return
	}
	h.Set("Content-Length", strconv.FormatInt(p.ContentLength, 10))
	switch {
	case p.Status == http.StatusPartialContent && len(p.Ranges) > 1:
		h.Set("Content-Type", MultipartContentType(p.Boundary))
		return
	case p.Status == http.StatusPartialContent && len(p.Ranges) == 1:
		h.Set("Content-Range", p.Ranges[0].ContentRange(size))
	}
	if contentType != "" {
		h.Set("Content-Type", contentType)
	}
}

// WriteBody writes the body of a 200 (the whole representation) or a 206 (the
// single range, or a multipart/byteranges body with the parts in request order,
// each carrying Content-Type and Content-Range) to w, calling read(w, off, n) to
// copy bytes [off, off+n) of the representation; read is never called with
// n == 0. size and contentType must be those given to [NewPlan]. When every
// read writes exactly n bytes, WriteBody writes exactly p.ContentLength bytes.
// It returns the first error from read or w and stops there. For other statuses
// it writes nothing and returns nil; callers skip it for HEAD.
func (p Plan) WriteBody(w io.Writer, size int64, contentType string, read func(w io.Writer, off, n int64) error) error {
	switch {
	case p.Status == http.StatusOK:
		if size <= 0 {
			return nil
		}
		return read(w, 0, size)
	case p.Status != http.StatusPartialContent || len(p.Ranges) == 0:
		return nil
	case len(p.Ranges) == 1:
		return read(w, p.Ranges[0].Start, p.Ranges[0].Length)
	}
	for _, br := range p.Ranges {
		if _, err := io.WriteString(w, partHeader(p.Boundary, contentType, br, size)); err != nil {
			return err
		}
		if err := read(w, br.Start, br.Length); err != nil {
			return err
		}
	}
	_, err := io.WriteString(w, closeDelimiter(p.Boundary))
	return err
}
