package httpx

import (
	"compress/gzip"
	"errors"
	"io"
	"net/http"
	"strings"

	"github.com/andybalholm/brotli"
	"github.com/labstack/echo/v4"
)

// Decode guard limits (docs/architecture.md §5): a compressed JSON body may expand to
// at most MaxDecodeRatio times its compressed size and MaxDecodedBytes in all.
// DecodeRatioFloor is where GuardBodyLimits starts applying the ratio rule
// (docs/gateway.md §3.2): small bodies may compress well without being bombs.
const (
	MaxDecodeRatio   = 10
	MaxDecodedBytes  = 8 << 20
	DecodeRatioFloor = 64 << 10
)

// errDecodedCap is returned by a guarded body that passed a cap.
var errDecodedCap = NewError(http.StatusRequestEntityTooLarge, CodeDecodedCap, "decoded body exceeds the decode caps")

// decodeGuard puts a non-streaming request's encoded body behind the
// decode caps (GuardBody): the handler reads it decoded, without its
// Content-Encoding.
func (s *Server) decodeGuard(c echo.Context) error {
	r := c.Request()
	if r.Body == nil || r.Body == http.NoBody || s.streaming(c) {
		return nil
	}
	body, err := GuardBody(ContentEncoding(r.Header), r.Body)
	if err != nil {
		return err
	}
	if body != r.Body {
		r.Body = body
		r.Header.Del("Content-Encoding")
		r.ContentLength = -1
	}
	return nil
}

// GuardBody wraps a request body sent with the given Content-Encoding in a
// decoder that enforces the ratio and absolute caps; reads past a cap fail with
// a 413 decoded_cap *Error. Identity, nil and empty bodies are returned
// unchanged; unknown encodings are a 415. The ratio rule applies from the
// first byte (decoded > MaxDecodeRatio × encoded), and a gzip header is
// checked at once (400 malformed). A failing source read that already
// carries an answer (*Error, *http.MaxBytesError) is returned as it is;
// other failures of the stream are a 400 malformed.
func GuardBody(encoding string, body io.ReadCloser) (io.ReadCloser, error) {
	if body == nil || body == http.NoBody {
		return body, nil
	}
	g, err := newGuard(encoding, body, decodeLimits{maxBytes: MaxDecodedBytes, maxRatio: MaxDecodeRatio})
	if err != nil {
		return nil, err
	}
	if g == nil {
		return body, nil
	}
	if err := g.open(); err != nil {
		return nil, err
	}
	return g, nil
}

// GuardBodyLimits is the gateway's decode guard (docs/gateway.md §3.2).
// encoding is the request's Content-Encoding (several header lines joined
// with ", "): no coding (absent, empty, whitespace or "identity", see
// ContentCodings) returns body unchanged, and the decoded-size caps are then
// not this function's to apply (the body caps are); "gzip", "x-gzip" or "br"
// (any case) returns a decoding reader; anything else, including a list of
// codings such as "gzip, br", is a 415 unsupported_media_type.
//
// The decoder is created on the first Read, so nothing is read from body
// before then. A Read fails with a 413 decoded_cap *Error once the decoded
// total passes maxBytes, or passes DecodeRatioFloor and exceeds maxRatio ×
// the encoded bytes read so far; bytes past the breach are never returned.
// A corrupt or truncated stream (at its start or mid-stream, an empty body
// included) fails with a 400 malformed *Error. An error of body itself (a
// cap, a deadline, a client gone) is returned as body returned it. Errors
// are sticky. Non-positive limits take MaxDecodedBytes / MaxDecodeRatio.
// Close closes body.
func GuardBodyLimits(encoding string, body io.ReadCloser, maxBytes int64, maxRatio float64) (io.ReadCloser, error) {
	if maxBytes <= 0 {
		maxBytes = MaxDecodedBytes
	}
	if maxRatio <= 0 {
		maxRatio = MaxDecodeRatio
	}
	lim := decodeLimits{maxBytes: maxBytes, maxRatio: maxRatio, floor: DecodeRatioFloor, passSource: true}
	src := body
	if src == nil {
		src = http.NoBody
	}
	g, err := newGuard(encoding, src, lim)
	if err != nil {
		return nil, err
	}
	if g == nil {
		return body, nil
	}
	return g, nil
}

// decodeLimits are the caps of one guarded body.
type decodeLimits struct {
	maxBytes   int64   // decoded bytes in all
	maxRatio   float64 // decoded / encoded
	floor      int64   // the ratio rule applies once decoded passes floor
	passSource bool    // return every source error as is (else only answers)
}

// breached reports whether decoded bytes out from in encoded ones break lim.
func (lim decodeLimits) breached(out, in int64) bool {
	if out > lim.maxBytes {
		return true
	}
	return out > lim.floor && float64(out) > lim.maxRatio*float64(max(in, 1))
}

// Content codings the guard decodes.
const (
	codingGzip = "gzip"
	codingBr   = "br"
)

// ContentEncoding returns h's Content-Encoding field value: its field lines
// joined with ", ", as RFC 9110 §5.3 combines them.
func ContentEncoding(h http.Header) string {
	return strings.Join(h.Values("Content-Encoding"), ", ")
}

// ContentCodings returns the content codings a Content-Encoding field
// value lists (several field lines joined with ", "), lower-cased, in
// order. By RFC 9110 §5.6.1 a list may hold empty elements, which do not
// count, so an empty or whitespace-only value is an empty list: no coding,
// the body is as sent. A list of just "identity" means no coding too; in a
// longer list it counts as a coding like any other.
func ContentCodings(field string) []string {
	var out []string
	for _, el := range strings.Split(field, ",") {
		if el = strings.ToLower(strings.Trim(el, " \t")); el != "" {
			out = append(out, el)
		}
	}
	if len(out) == 1 && out[0] == "identity" {
		return nil
	}
	return out
}

// contentCoding maps a Content-Encoding value to "" (no coding, see
// ContentCodings), codingGzip or codingBr; another coding, or more than
// one, is a 415.
func contentCoding(encoding string) (string, error) {
	codings := ContentCodings(encoding)
	switch {
	case len(codings) == 0:
		return "", nil
	case len(codings) > 1:
		return "", NewError(http.StatusUnsupportedMediaType, CodeUnsupportedMedia, "more than one Content-Encoding (%q) is not accepted", encoding)
	}
	switch codings[0] {
	case "gzip", "x-gzip":
		return codingGzip, nil
	case "br":
		return codingBr, nil
	}
	return "", NewError(http.StatusUnsupportedMediaType, CodeUnsupportedMedia, "unsupported Content-Encoding %q", encoding)
}

// newGuard returns the guarded body for encoding, or nil for no coding.
func newGuard(encoding string, body io.ReadCloser, lim decodeLimits) (*guardedBody, error) {
	coding, err := contentCoding(encoding)
	if err != nil || coding == "" {
		return nil, err
	}
	return &guardedBody{coding: coding, in: &countingReader{r: body}, closer: body, lim: lim}, nil
}

// countingReader counts the encoded bytes read and remembers the source's
// last failure (anything but io.EOF).
type countingReader struct {
	r   io.Reader
	n   int64
	err error
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	if err != nil && !errors.Is(err, io.EOF) {
		c.err = err
	}
	return n, err
}

// guardedBody decodes one body under its limits.
type guardedBody struct {
	coding string
	in     *countingReader
	closer io.Closer
	lim    decodeLimits
	dec    io.Reader // nil until open
	out    int64     // decoded bytes so far
	err    error     // sticky failure
}

// open creates the decoder; gzip reads its header here.
func (g *guardedBody) open() error {
	if g.dec != nil {
		return nil
	}
	if g.coding == codingBr {
		g.dec = brotli.NewReader(g.in)
		return nil
	}
	zr, err := gzip.NewReader(g.in)
	if err != nil {
		return g.streamError("invalid gzip body")
	}
	g.dec = zr
	return nil
}

func (g *guardedBody) Read(p []byte) (int, error) {
	if g.err != nil {
		return 0, g.err
	}
	if err := g.open(); err != nil {
		g.err = err
		return 0, err
	}
	n, err := g.dec.Read(p)
	g.out += int64(n)
	if g.lim.breached(g.out, g.in.n) {
		g.err = errDecodedCap
		return 0, g.err
	}
	if err != nil && !errors.Is(err, io.EOF) {
		g.err = g.streamError("invalid compressed body: %v", err)
		return n, g.err
	}
	return n, err
}

// streamError is the error of a failed decode: the source's own failure
// when it had one worth passing on, else a 400 malformed.
func (g *guardedBody) streamError(format string, args ...any) error {
	if src := g.in.err; src != nil {
		var he *Error
		var mbe *http.MaxBytesError
		if g.lim.passSource || errors.As(src, &he) || errors.As(src, &mbe) {
			return src
		}
	}
	return NewError(http.StatusBadRequest, CodeMalformed, format, args...)
}

func (g *guardedBody) Close() error { return g.closer.Close() }
