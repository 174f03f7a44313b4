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

// Decode guard limits (ARCHITECTURE §5): a compressed JSON body may expand to
// at most MaxDecodeRatio times its compressed size and MaxDecodedBytes in all.
const (
	MaxDecodeRatio  = 10
	MaxDecodedBytes = 8 << 20
)

// errDecodedCap is returned by a guarded body that passed a cap.
var errDecodedCap = NewError(http.StatusRequestEntityTooLarge, CodeDecodedCap, "decoded body exceeds the decode caps")

func (s *Server) decodeGuardMiddleware(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if s.streaming(c) {
			return next(c)
		}
		r := c.Request()
		body, err := GuardBody(r.Header.Get("Content-Encoding"), r.Body)
		if err != nil {
			return err
		}
		if body != r.Body {
			r.Body = body
			r.Header.Del("Content-Encoding")
			r.ContentLength = -1
		}
		return next(c)
	}
}

// GuardBody wraps a request body sent with the given Content-Encoding in a
// decoder that enforces the ratio and absolute caps; reads past a cap fail with
// a 413 decoded_cap *Error. Identity bodies are returned unchanged; unknown
// encodings are a 415.
func GuardBody(encoding string, body io.ReadCloser) (io.ReadCloser, error) {
	enc := strings.ToLower(strings.TrimSpace(encoding))
	if enc == "" || enc == "identity" || body == nil || body == http.NoBody {
		return body, nil
	}
	in := &countingReader{r: body}
	var dec io.Reader
	switch enc {
	case "gzip", "x-gzip":
		zr, err := gzip.NewReader(in)
		if err != nil {
			return nil, NewError(http.StatusBadRequest, CodeMalformed, "invalid gzip body")
		}
		dec = zr
	case "br":
		dec = brotli.NewReader(in)
	default:
		return nil, NewError(http.StatusUnsupportedMediaType, CodeUnsupportedMedia, "unsupported Content-Encoding %q", encoding)
	}
	return &guardedBody{dec: dec, in: in, closer: body}, nil
}

type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

type guardedBody struct {
	dec    io.Reader
	in     *countingReader
	closer io.Closer
	out    int64
}

func (g *guardedBody) Read(p []byte) (int, error) {
	n, err := g.dec.Read(p)
	g.out += int64(n)
	if g.out > MaxDecodedBytes || g.out > MaxDecodeRatio*max(g.in.n, 1) {
		return 0, errDecodedCap
	}
	if err != nil && !errors.Is(err, io.EOF) {
		return n, NewError(http.StatusBadRequest, CodeMalformed, "invalid compressed body: %v", err)
	}
	return n, err
}

func (g *guardedBody) Close() error { return g.closer.Close() }
