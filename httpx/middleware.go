package httpx

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"runtime/debug"
	"strconv"
	"sync"
	"sync/atomic"
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

// CorrID returns the request's correlation id.
func CorrID(c echo.Context) string {
	return c.Response().Header().Get(HeaderCorrID)
}

// chain returns the middleware in ARCHITECTURE §5 order.
func (s *Server) chain() []echo.MiddlewareFunc {
	return []echo.MiddlewareFunc{
		corrIDMiddleware,
		s.recoverMiddleware,
		s.observeMiddleware, // access log + metrics
		s.inflightMiddleware(),
		s.rateMiddleware,
		s.connCapMiddleware,
		s.bodyCapMiddleware,
		s.decodeGuardMiddleware,
		s.deadlineMiddleware,
	}
}

func corrIDMiddleware(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		id := c.Request().Header.Get(HeaderCorrID)
		if !ValidCorrID(id) {
			id = ulid.Make().String()
		}
		c.Response().Header().Set(HeaderCorrID, id)
		return next(c)
	}
}

func (s *Server) recoverMiddleware(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) (err error) {
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
		return next(c)
	}
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

func (s *Server) observeMiddleware(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		start := time.Now()
		if err := next(c); err != nil {
			c.Error(err)
		}
		route, status := RouteOf(c), c.Response().Status
		dur := time.Since(start)
		s.observe(route, status, dur)
		ev := s.opt.Log.Debug()
		if status >= 500 || dur > time.Second {
			ev = s.opt.Log.Info()
		}
		ev.Str("corr_id", CorrID(c)).Str("method", c.Request().Method).Str("route", route).
			Int("status", status).Int64("dur_ms", dur.Milliseconds()).Msg("request")
		return nil
	}
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
func (s *Server) busy(c echo.Context, code, why string) error {
	if s.opt.Metrics != nil {
		s.opt.Metrics.GetOrCreateCounter(fmt.Sprintf(`ron_busy_rejections_total{role=%q,endpoint=%q}`, s.opt.Role, RouteOf(c))).Inc()
	}
	return NewError(http.StatusTooManyRequests, code, "%s", why)
}

func (s *Server) inflightMiddleware() echo.MiddlewareFunc {
	var inflight atomic.Int64
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			max := int64(s.limits().MaxInflight)
			if max <= 0 || opsPaths[c.Path()] || s.opt.LongLived(c.Request().Method, c.Path()) {
				return next(c)
			}
			defer inflight.Add(-1)
			if inflight.Add(1) > max {
				return s.busy(c, CodeBusy, "too many requests in flight")
			}
			return next(c)
		}
	}
}

func (s *Server) rateMiddleware(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if lim := s.limiter.Load(); lim != nil && !opsPaths[c.Path()] && !lim.Allow() {
			return s.busy(c, CodeRateLimited, "request rate limit exceeded")
		}
		return next(c)
	}
}

func (s *Server) connCapMiddleware(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		capN, ip := s.limits().MaxConnsPerIP, hostOf(c.Request().RemoteAddr)
		if capN > 0 && !opsPaths[c.Path()] && s.conns.count(ip) > capN && (s.opt.ConnCapExempt == nil || !s.opt.ConnCapExempt(ip)) {
			if s.opt.OnConnCap != nil {
				s.opt.OnConnCap()
			}
			c.Response().Header().Set("Connection", "close")
			return s.busy(c, CodeBusy, "too many connections from this address")
		}
		return next(c)
	}
}

func (s *Server) streaming(c echo.Context) bool {
	return s.opt.Streaming(c.Request().Method, c.Path())
}

func (s *Server) bodyCapMiddleware(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		r := c.Request()
		if !s.streaming(c) && r.Body != nil && r.Body != http.NoBody {
			if r.ContentLength > JSONBodyCap {
				return NewError(http.StatusRequestEntityTooLarge, CodePayloadTooLarge, "body larger than %d bytes", JSONBodyCap)
			}
			r.Body = http.MaxBytesReader(c.Response(), r.Body, JSONBodyCap)
		}
		return next(c)
	}
}

func (s *Server) deadlineMiddleware(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
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
}

// RequestTimeout parses the Request-Timeout header: seconds as an integer or
// decimal, or a Go duration ("1.5", "2", "250ms").
func RequestTimeout(r *http.Request) (time.Duration, bool) {
	v := r.Header.Get("Request-Timeout")
	if v == "" {
		return 0, false
	}
	if f, err := strconv.ParseFloat(v, 64); err == nil && f > 0 && f < 86400 {
		return time.Duration(f * float64(time.Second)), true
	}
	if d, err := time.ParseDuration(v); err == nil && d > 0 {
		return d, true
	}
	return 0, false
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
