package live

import (
	"bytes"
	"errors"
	"io"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/roles/edge/httpcache"
)

// forwardUnsafe forwards a method other than GET and HEAD (docs/edge.md §7.6): once,
// not queued, not retried, its body at most body_max_bytes and under the
// decode guard; the answer is relayed, never stored, and a 2xx or 3xx
// invalidates the stored variants of the request's key and of the keys
// its Location and Content-Location name under the same origin. Without
// forward_unsafe: 405, Allow: GET, HEAD.
func (l *Live) forwardUnsafe(c echo.Context, sn *snapshot, t *target) error {
	r := c.Request()
	if !t.origin.ForwardUnsafe {
		c.Response().Header().Set("Allow", "GET, HEAD")
		return httpx.NewError(http.StatusMethodNotAllowed, httpx.CodeMethodNotAllowed,
			"%s is not forwarded to origin %q", r.Method, t.origin.Name)
	}
	body, err := l.readBody(r, sn.s)
	if err != nil {
		return err
	}
	k := l.newCall(c, sn, t)
	req := newRequest(r.Method, t.send, forwardHeader(r.Header, t.origin, k.peer))
	if len(body) > 0 {
		req.Body, req.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
	}
	l.met.lookup(lookupBypass, 1)
	u, err := l.attempt(k.ctx, req, sn.s.FillTimeout, func(code int, h http.Header) {
		if code == http.StatusProcessing || code == http.StatusEarlyHints {
			k.writeInterim(interimResp{code: code, header: h})
		}
	})
	if err != nil {
		return upstreamError(err)
	}
	defer u.Close()
	for _, key := range httpcache.Invalidations(r.Method, u.status(), t.canon, u.resp.Header, t.origin.URL) {
		l.cache.Invalidate(cacheKey(t.origin.Name, key.Path, key.RawQuery))
	}
	return k.relay(u, httpcache.CacheStatus{Fwd: httpcache.FwdBypass, FwdStatus: u.status()}.String())
}

// readBody reads a body to forward: at most s.BodyMaxBytes (413
// payload_too_large, reason body_cap), and its gzip or br decoding within
// the decode caps (413 decoded_cap, reason decompress_cap). The bytes
// are forwarded as received, Content-Encoding included.
func (l *Live) readBody(r *http.Request, s Settings) ([]byte, error) {
	if r.Body == nil || r.Body == http.NoBody {
		return nil, nil
	}
	tooLarge := httpx.NewError(http.StatusRequestEntityTooLarge, httpx.CodePayloadTooLarge,
		"request body larger than %d bytes", s.BodyMaxBytes).WithReason(reasonBodyCap)
	if r.ContentLength > s.BodyMaxBytes {
		l.met.reject(reasonBodyCap)
		return nil, tooLarge
	}
	b, err := io.ReadAll(io.LimitReader(r.Body, s.BodyMaxBytes+1))
	if err != nil {
		return nil, httpx.NewError(http.StatusBadRequest, httpx.CodeBadRequest, "reading the request body: %v", err)
	}
	if int64(len(b)) > s.BodyMaxBytes {
		l.met.reject(reasonBodyCap)
		return nil, tooLarge
	}
	if err := l.checkDecoded(r.Header, b, s); err != nil {
		return nil, err
	}
	return b, nil
}

// checkDecoded runs the decode guard over a buffered body.
func (l *Live) checkDecoded(h http.Header, b []byte, s Settings) error {
	g, err := httpx.GuardBodyLimits(httpx.ContentEncoding(h), io.NopCloser(bytes.NewReader(b)), s.DecodeMaxBytes, s.DecodeMaxRatio)
	if err != nil {
		return err
	}
	defer g.Close()
	if _, err := io.Copy(io.Discard, g); err != nil {
		var he *httpx.Error
		if errors.As(err, &he) && he.Code == httpx.CodeDecodedCap {
			l.met.reject(reasonDecompressCap)
			return (he).WithReason(reasonDecompressCap)
		}
		return err
	}
	return nil
}
