package httpx

import (
	"context"
	"errors"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/VictoriaMetrics/metrics"
	"github.com/labstack/echo/v4"
	"github.com/rs/zerolog"
	"golang.org/x/time/rate"
)

// Listener timeouts shared by every ron listener (docs/architecture.md §5). Object
// bodies and streams replace the read/write timeouts with per-chunk deadlines
// through http.ResponseController.
const (
	ReadHeaderTimeout = 5 * time.Second
	ReadTimeout       = 5 * time.Second
	WriteTimeout      = 5 * time.Second
	IdleTimeout       = 60 * time.Second
	MaxHeaderBytes    = 16 << 10
)

// Limits are the ingress keys every listener section has.
type Limits struct {
	MaxInflight   int     // in-flight requests; over → 429 busy
	RPS           float64 // 0 = off; over-rate → 429 rate_limited
	MaxConnsPerIP int     // open connections per client IP; over → 429 busy
}

// ServerOptions configure one listener.
type ServerOptions struct {
	Role    string // "storage", "admin", … used in metric labels and logs
	Addr    string // host:port to bind
	Log     zerolog.Logger
	Metrics *metrics.Set
	Limits  Limits
	// Streaming reports whether a route template carries an object body that
	// the handler streams under its own cap and deadlines; such requests skip
	// the JSON body cap, the decode guard and the handler deadline.
	Streaming func(method, route string) bool
	// LongLived reports whether a route holds its connection open for a
	// long time by design (an event stream); such requests do not count
	// against max_inflight, so open streams cannot starve other requests.
	// The role bounds them itself (e.g. stream_max_clients).
	LongLived func(method, route string) bool
	// ConnCapExempt, when set, reports whether a client IP is exempt from
	// max_conns_per_ip (the gateway's trusted proxies); OnConnCap, when set,
	// is called for each request refused by that cap.
	ConnCapExempt func(ip string) bool
	OnConnCap     func()
	// RateLimitReason, when set, is the details.reason of the 429s of the
	// rps bucket; OnRateLimit, when set, is called for each of them (the
	// edge's rate_limit reject reason and counter).
	RateLimitReason string
	OnRateLimit     func()
	// HandlerTimeout bounds non-streaming handlers (default 30 s); a shorter
	// Request-Timeout header wins.
	HandlerTimeout time.Duration
}

// Server is a listener service: an echo router behind the shared middleware
// chain, bound by Listen and served by Serve until Shutdown.
type Server struct {
	opt   ServerOptions
	echo  *echo.Echo
	http  *http.Server
	ln    net.Listener
	conns *connTracker

	counters   sync.Map // routeStatus → *metrics.Counter
	histograms sync.Map // route → *metrics.PrometheusHistogram

	lim      atomic.Pointer[Limits]
	limiter  atomic.Pointer[rate.Limiter] // nil = no rate limit
	inflight atomic.Int64                 // requests counted against MaxInflight

	mu       sync.Mutex
	draining bool
}

// SetLimits replaces the ingress limits (hot reload). The RPS bucket starts
// full again when its rate changes.
func (s *Server) SetLimits(l Limits) {
	old := s.lim.Swap(&l)
	if old != nil && old.RPS == l.RPS {
		return
	}
	if l.RPS <= 0 {
		s.limiter.Store(nil)
		return
	}
	s.limiter.Store(rate.NewLimiter(rate.Limit(l.RPS), max(int(l.RPS), 1)))
}

// Limits returns the limits in force (the last SetLimits).
func (s *Server) Limits() Limits { return *s.lim.Load() }

// NewServer builds the router and middleware chain. It binds nothing.
func NewServer(opt ServerOptions) *Server {
	if opt.HandlerTimeout == 0 {
		opt.HandlerTimeout = 30 * time.Second
	}
	if opt.LongLived == nil {
		opt.LongLived = func(string, string) bool { return false }
	}
	if opt.Streaming == nil {
		opt.Streaming = func(string, string) bool { return false }
	}
	s := &Server{opt: opt, echo: echo.New(), conns: newConnTracker()}
	s.SetLimits(opt.Limits)
	s.echo.HideBanner, s.echo.HidePort = true, true
	s.echo.HTTPErrorHandler = s.handleError
	s.echo.Use(s.middleware)
	s.http = &http.Server{
		Handler:           s.echo,
		ReadHeaderTimeout: ReadHeaderTimeout,
		ReadTimeout:       ReadTimeout,
		WriteTimeout:      WriteTimeout,
		IdleTimeout:       IdleTimeout,
		MaxHeaderBytes:    MaxHeaderBytes,
		ConnState:         s.connState,
		ConnContext:       withConn,
		ErrorLog:          zerologStdLogger(opt.Log),
	}
	return s
}

// connState is the server's ConnState hook: a coalesced response ends when
// its connection turns idle or is hijacked; connections are counted per
// client IP.
func (s *Server) connState(c net.Conn, state http.ConnState) {
	connStateHook(c, state)
	s.conns.track(c, state)
}

// Echo returns the router so the role can add its routes.
func (s *Server) Echo() *echo.Echo { return s.echo }

// Listen binds the address; a bind error is returned (fatal at start-up).
// Its connections can coalesce a response's writes (CoalesceResponse).
func (s *Server) Listen() error {
	ln, err := net.Listen("tcp", s.opt.Addr)
	if err != nil {
		return err
	}
	s.ln = coalesceListener{ln}
	return nil
}

// Addr is the bound address (useful with port 0), or the configured one
// before Listen.
func (s *Server) Addr() string {
	if s.ln != nil {
		return s.ln.Addr().String()
	}
	return s.opt.Addr
}

// Serve serves until Shutdown; it returns nil after a Shutdown and the
// listener's error otherwise.
func (s *Server) Serve() error {
	err := s.http.Serve(s.ln)
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

// Run serves until ctx ends (nil) or serving fails (the error: a dead
// listener is fatal to its role, never restarted). The serving goroutine
// belongs to the server and ends when Shutdown closes the listener, which
// the role's Stop does after Run has returned.
func (s *Server) Run(ctx context.Context) error {
	errc := make(chan error, 1)
	go func() { errc <- s.Serve() }() // owned: ends at Shutdown
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
		return nil
	}
}

// Drain marks the server as draining: requests that reach a handler after this
// may consult Draining() and answer 503 draining.
func (s *Server) Drain() {
	s.mu.Lock()
	s.draining = true
	s.mu.Unlock()
}

// Draining reports whether Drain or Shutdown has been called.
func (s *Server) Draining() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.draining
}

// Shutdown stops accepting, waits for in-flight requests until ctx ends, then
// closes the remaining connections. It returns how many connections were
// still active (aborted) at the deadline.
func (s *Server) Shutdown(ctx context.Context) (aborted int) {
	s.Drain()
	s.http.SetKeepAlivesEnabled(false)
	if err := s.http.Shutdown(ctx); err == nil {
		return 0
	}
	aborted = s.conns.active()
	_ = s.http.Close()
	return aborted
}
