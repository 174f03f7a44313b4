package httpx

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"regexp"
	"runtime/debug"
	"strconv"
	"sync"
	"time"

	"github.com/VictoriaMetrics/metrics"
	"github.com/labstack/echo/v4"
	"github.com/oklog/ulid/v2"
)

// HeaderCorrID carries the correlation id of a request, accepted from the
// client when well formed and generated otherwise.
const HeaderCorrID = "X-Corr-ID"

// JSONBodyCap is the body cap for every non-streaming request.
const JSONBodyCap = 1 << 20

// ValidCorrID reports whether id matches ^[A-Za-z0-9._-]{1,64}$ (a byte
// loop: this runs on every request, twice for in-process forwards).
func ValidCorrID(id string) bool {
	if len(id) == 0 || len(id) > 64 {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// opsPaths bypass admission (in-flight, rate and connection caps).
var opsPaths = map[string]bool{"/healthz": true, "/readyz": true, "/metrics": true, "/version": true}

// corrIDKey is HeaderCorrID in canonical form, its key in a header map
// (direct map access spares a canonicalization, and its allocation, per
// request).
var corrIDKey = http.CanonicalHeaderKey(HeaderCorrID)

// CorrID returns the request's correlation id.
func CorrID(c echo.Context) string {
	if v := c.Response().Header()[corrIDKey]; len(v) > 0 {
		return v[0]
	}
	return ""
}

// newCorrID returns a fresh ULID: the current millisecond and 80 random
// bits (math/rand/v2's per-thread generator: no lock shared by requests,
// unlike ulid.Make's monotonic source; a correlation id needs uniqueness,
// not secrecy or order within a millisecond).
func newCorrID() string {
	var id ulid.ULID
	_ = id.SetTime(ulid.Now()) // Now is always within ULID's time range
	binary.BigEndian.PutUint64(id[6:14], rand.Uint64())
	binary.BigEndian.PutUint16(id[14:], uint16(rand.Uint32()))
	return id.String()
}

// middleware is the shared chain in docs/architecture.md §5 order: corr-id →
// recover → access log + metrics → in-flight cap → RPS bucket → per-IP
// connection cap → body cap → decode guard → handler deadline. It is one
// echo middleware calling each step in turn, because echo wraps the global
// middleware around the route's handler anew for every request (a closure
// per middleware per request).
func (s *Server) middleware(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		setCorrID(c)
		return s.recovering(c, next)
	}
}

// setCorrID accepts a well-formed X-Corr-ID or generates a ULID, and echoes
// it.
func setCorrID(c echo.Context) {
	var id string
	if v := c.Request().Header[corrIDKey]; len(v) > 0 {
		id = v[0]
	}
	if !ValidCorrID(id) {
		id = newCorrID()
	}
	c.Response().Header()[corrIDKey] = []string{id}
}

// recovering turns a handler panic into a 500 internal (logged with its
// stack); http.ErrAbortHandler goes on to net/http, which drops the
// connection.
func (s *Server) recovering(c echo.Context, next echo.HandlerFunc) (err error) {
	defer func() {
		if r := recover(); r != nil {
			if r == http.ErrAbortHandler {
				panic(r)
			}
			s.opt.Log.Error().Str("corr_id", CorrID(c)).Str("route", c.Path()).
				Str("panic", fmt.Sprint(r)).Bytes("stack", debug.Stack()).Msg("handler panicked")
			err = NewError(http.StatusInternalServerError, CodeInternal, "internal error")
		}
	}()
	return s.observing(c, next)
}

// RouteOf is the route template used in labels and logs ("/o/{b3}"), never
// a raw path; requests that matched no route are "unmatched".
func RouteOf(c echo.Context) string {
	p := c.Path()
	if p == "" || p == "/*" {
		return "unmatched"
	}
	if r, ok := routeNames.Load(p); ok {
		return r.(string)
	}
	r := paramPattern.ReplaceAllString(p, "{$1}")
	routeNames.Store(p, r) // route patterns are a fixed, small set
	return r
}

// routeNames caches RouteOf by echo route pattern.
var routeNames sync.Map

var paramPattern = regexp.MustCompile(`:([A-Za-z0-9_]+)`)

// observing writes the answer of an error (the envelope), then counts the
// request in ron_http_requests_total and ron_http_request_duration_seconds
// and logs it (debug; info for a 5xx or a request over a second).
func (s *Server) observing(c echo.Context, next echo.HandlerFunc) error {
	start := time.Now()
	if err := s.admitting(c, next); err != nil {
		c.Error(err)
	}
	route, status := RouteOf(c), c.Response().Status
	dur := time.Since(start)
	s.observe(route, status, dur)
	ev := s.opt.Log.Debug()
	if status >= 500 || dur > time.Second {
		ev = s.opt.Log.Info()
	}
	if ev != nil {
		ev.Str("corr_id", CorrID(c)).Str("method", c.Request().Method).Str("route", route).
			Int("status", status).Int64("dur_ms", dur.Milliseconds()).Msg("request")
	}
	return nil
}

// admitting applies the ingress limits, the body cap and the decode guard,
// then runs next under the handler deadline. The in-flight count covers
// everything after it.
func (s *Server) admitting(c echo.Context, next echo.HandlerFunc) error {
	if max := int64(s.Limits().MaxInflight); max > 0 && !opsPaths[c.Path()] && !s.opt.LongLived(c.Request().Method, c.Path()) {
		defer s.inflight.Add(-1)
		if s.inflight.Add(1) > max {
			return s.busy(c, CodeBusy, "too many requests in flight")
		}
	}
	if err := s.rateCheck(c); err != nil {
		return err
	}
	if err := s.connCapCheck(c); err != nil {
		return err
	}
	if err := s.bodyCap(c); err != nil {
		return err
	}
	if err := s.decodeGuard(c); err != nil {
		return err
	}
	return s.deadlined(c, next)
}

func (s *Server) observe(route string, status int, dur time.Duration) {
	if s.opt.Metrics == nil {
		return
	}
	s.requestCounter(route, status).Inc()
	s.durationHistogram(route).Update(dur.Seconds())
}

// routeStatus keys the cached per-request counters.
type routeStatus struct {
	route  string
	status int
}

// requestCounter returns ron_http_requests_total{role,route,code}, cached so
// the hot path formats no label strings.
func (s *Server) requestCounter(route string, status int) *metrics.Counter {
	key := routeStatus{route, status}
	if c, ok := s.counters.Load(key); ok {
		return c.(*metrics.Counter)
	}
	c := s.opt.Metrics.GetOrCreateCounter(fmt.Sprintf(`ron_http_requests_total{role=%q,route=%q,code="%d"}`, s.opt.Role, route, status))
	s.counters.Store(key, c)
	return c
}

// durationHistogram returns ron_http_request_duration_seconds{role,route}, cached.
func (s *Server) durationHistogram(route string) *metrics.PrometheusHistogram {
	if h, ok := s.histograms.Load(route); ok {
		return h.(*metrics.PrometheusHistogram)
	}
	h := s.opt.Metrics.GetOrCreatePrometheusHistogram(fmt.Sprintf(`ron_http_request_duration_seconds{role=%q,route=%q}`, s.opt.Role, route))
	s.histograms.Store(route, h)
	return h
}

// busy answers 429 busy and counts the rejection under the route template.
func (s *Server) busy(c echo.Context, code, why string) *Error {
	if s.opt.Metrics != nil {
		s.opt.Metrics.GetOrCreateCounter(fmt.Sprintf(`ron_busy_rejections_total{role=%q,endpoint=%q}`, s.opt.Role, RouteOf(c))).Inc()
	}
	return NewError(http.StatusTooManyRequests, code, "%s", why)
}

// rateCheck refuses a request over the listener's RPS bucket (429
// rate_limited).
func (s *Server) rateCheck(c echo.Context) error {
	if lim := s.limiter.Load(); lim != nil && !opsPaths[c.Path()] && !lim.Allow() {
		err := s.busy(c, CodeRateLimited, "request rate limit exceeded")
		if s.opt.OnRateLimit != nil {
			s.opt.OnRateLimit()
		}
		if s.opt.RateLimitReason != "" {
			return err.WithDetails(map[string]any{"reason": s.opt.RateLimitReason})
		}
		return err
	}
	return nil
}

// connCapCheck refuses a request from an address over max_conns_per_ip
// (429 busy, the connection closed after the answer).
func (s *Server) connCapCheck(c echo.Context) error {
	capN := s.Limits().MaxConnsPerIP
	if capN <= 0 || opsPaths[c.Path()] {
		return nil
	}
	ip := hostOf(c.Request().RemoteAddr)
	if s.conns.count(ip) > capN && (s.opt.ConnCapExempt == nil || !s.opt.ConnCapExempt(ip)) {
		if s.opt.OnConnCap != nil {
			s.opt.OnConnCap()
		}
		c.Response().Header().Set("Connection", "close")
		return s.busy(c, CodeBusy, "too many connections from this address")
	}
	return nil
}

func (s *Server) streaming(c echo.Context) bool {
	return s.opt.Streaming(c.Request().Method, c.Path())
}

// bodyCap caps a non-streaming request's body at JSONBodyCap (413
// payload_too_large).
func (s *Server) bodyCap(c echo.Context) error {
	r := c.Request()
	if r.Body == nil || r.Body == http.NoBody || s.streaming(c) {
		return nil
	}
	if r.ContentLength > JSONBodyCap {
		return NewError(http.StatusRequestEntityTooLarge, CodePayloadTooLarge, "body larger than %d bytes", JSONBodyCap)
	}
	r.Body = http.MaxBytesReader(c.Response(), r.Body, JSONBodyCap)
	return nil
}

// deadlined runs next under the handler deadline (HandlerTimeout, or a
// shorter Request-Timeout); a deadline it hits is a 504 timeout. Streaming
// routes keep their own deadlines.
func (s *Server) deadlined(c echo.Context, next echo.HandlerFunc) error {
	if s.streaming(c) {
		return next(c)
	}
	d := s.opt.HandlerTimeout
	if rt, ok := RequestTimeout(c.Request()); ok && rt < d {
		d = rt
	}
	ctx, cancel := context.WithTimeout(c.Request().Context(), d)
	defer cancel()
	c.SetRequest(c.Request().WithContext(ctx))
	err := next(c)
	if err != nil && errors.Is(err, context.DeadlineExceeded) {
		return NewError(http.StatusGatewayTimeout, CodeTimeout, "handler deadline exceeded")
	}
	return err
}

// MinRequestTimeout is the shortest Request-Timeout any listener honours
// (the shared chain, the gateway's and the edge's parsers alike); a shorter
// one could not even be read in time, and below a nanosecond it would round
// to no deadline at all.
const MinRequestTimeout = time.Millisecond

// RequestTimeout parses the Request-Timeout header: seconds as an integer or
// decimal below one day, or a Go duration ("1.5", "2", "250ms"), of at
// least MinRequestTimeout. ok is false for anything else.
func RequestTimeout(r *http.Request) (d time.Duration, ok bool) {
	v := r.Header.Get("Request-Timeout")
	if v == "" {
		return 0, false
	}
	if f, err := strconv.ParseFloat(v, 64); err == nil && f > 0 && f < 86400 {
		d = time.Duration(f * float64(time.Second))
	} else if d, err = time.ParseDuration(v); err != nil {
		return 0, false
	}
	return d, d >= MinRequestTimeout
}

// handleError is echo's error handler: every error leaves as the envelope.
func (s *Server) handleError(err error, c echo.Context) {
	if c.Response().Committed {
		return
	}
	WriteError(c.Response(), CorrID(c), fromEcho(err))
}

// fromEcho maps echo's router errors and body-cap errors onto envelope codes.
func fromEcho(err error) error {
	var he *echo.HTTPError
	if errors.As(err, &he) {
		switch he.Code {
		case http.StatusNotFound:
			return NewError(he.Code, CodeNotFound, "no such route")
		case http.StatusMethodNotAllowed:
			return NewError(he.Code, CodeMethodNotAllowed, "method not allowed")
		case http.StatusRequestEntityTooLarge:
			return NewError(he.Code, CodePayloadTooLarge, "body too large")
		}
		return &Error{Status: he.Code, Code: codeForStatus(he.Code), Message: fmt.Sprint(he.Message)}
	}
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return NewError(http.StatusRequestEntityTooLarge, CodePayloadTooLarge, "body larger than %d bytes", mbe.Limit)
	}
	return err
}
