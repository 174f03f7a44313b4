package gateway

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/netip"
	"sync"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/httpx/auth"
	"github.com/ronhq/ron/roles/gateway/admission"
	"github.com/ronhq/ron/roles/gateway/drr"
	"github.com/ronhq/ron/roles/gateway/hygiene"
	"github.com/ronhq/ron/roles/gateway/tenant"
)

// bodyKind says what a route does with a request body (docs/gateway.md §3.1, docs/gateway.md §3.2).
type bodyKind int

const (
	bodyNone   bodyKind = iota // never read nor forwarded
	bodyJSON                   // json_body_max_bytes, decode guard
	bodyObject                 // object_body_max_bytes, no decoding, byte quota
)

// route is one row of the docs/gateway.md §1 table.
type route struct {
	methods []string
	path    string // echo pattern
	scope   string // capability scope (docs/gateway.md §3.7)
	write   bool   // always needs a token; shed first; CORS write rules
	body    bodyKind
	stream  bool // /registry/stream: max_streams, slot returned at headers
	serve   func(c echo.Context, cl *call) error
}

// call is an admitted request on its way to an upstream.
type call struct {
	tenant   tenant.ID
	clientIP string // the client address behind trusted proxies (docs/gateway.md §3.3)
	corrID   string // the request's X-Corr-ID, sent on every upstream call
	state    *tenant.State
	claims   *auth.Claims // verified token, nil for an anonymous read
	deadline time.Time    // absolute forward deadline (docs/gateway.md §3.8)
	release  func()       // gives the scheduler slot back; idempotent
	body     *watchedBody // the request body as forwarded; nil without one
}

// bodyError is the admission error a forwarded body failed with (cap,
// decode guard, byte quota), or nil: it replaces whatever the upstream
// answered to the cut-short body.
func (cl *call) bodyError() error {
	if cl.body == nil {
		return nil
	}
	return cl.body.admissionError()
}

// errDegraded answers writes while shedding (docs/gateway.md §8).
var errDegraded = httpx.NewError(http.StatusServiceUnavailable, httpx.CodeDegraded, "overloaded: writes are shed").
	WithRetryAfter(2).WithDetails(map[string]any{"limit": "shed_writes"})

// errDraining answers requests once shutdown began.
var errDraining = httpx.NewError(http.StatusServiceUnavailable, httpx.CodeDraining, "the gateway is shutting down").
	WithRetryAfter(1).WithDetails(map[string]any{"limit": "draining"})

// errStreams answers an event stream over max_streams.
var errStreams = httpx.NewError(http.StatusTooManyRequests, httpx.CodeBusy, "too many event streams").
	WithRetryAfter(1).WithDetails(map[string]any{"limit": "max_streams"})

// admit wraps rt's handler in the admission pipeline of docs/gateway.md §3, stages 4–10
// (stages 1–3 are the shared chain and the listener's connection cap).
func (r *Role) admit(rt route) echo.HandlerFunc {
	return func(c echo.Context) error {
		arrival := time.Now()
		req := c.Request()
		if r.Draining() {
			return errDraining
		}
		p := r.policy.Load()
		if err := hygiene.CheckHeaderLimits(req.Header); err != nil {
			return err
		}
		deadline, err := admission.RequestDeadline(arrival, req.Header, p.cfg.ForwardTimeout)
		if err != nil {
			return err
		}
		if err := r.limitBody(c, rt, p); err != nil {
			return r.reject("", err)
		}
		peer := peerAddr(req)
		id, claims, err := tenant.Identify(req, peer, r.opt.Keys, p.trusted, arrival)
		if err != nil {
			return r.reject("", err)
		}
		client := tenant.ClientIP(peer, req.Header.Values("X-Forwarded-For"), p.trusted)
		return r.admitTenant(c, rt, p, &call{tenant: id, claims: claims, clientIP: client.String(),
			corrID: httpx.CorrID(c), deadline: deadline})
	}
}

// admitTenant runs stages 7–10 for an identified tenant and serves.
func (r *Role) admitTenant(c echo.Context, rt route, p *policy, cl *call) error {
	st, err := r.states.Acquire(cl.tenant)
	if err != nil {
		return r.reject(cl.tenant, err)
	}
	defer r.states.Release(st)
	cl.state = st
	if err := r.states.Allow(st); err != nil {
		return r.reject(cl.tenant, err)
	}
	if rt.write && r.shed.Writes() {
		return r.reject(cl.tenant, errDegraded)
	}
	if rt.stream {
		if !r.streams.TryAcquire() {
			return r.reject(cl.tenant, errStreams)
		}
		defer r.streams.Release()
	}
	release, err := r.sched.AcquireBy(c.Request().Context(), cl.deadline, string(cl.tenant), st.Params().Weight, costOf(c.Request(), rt))
	if err != nil {
		if errors.Is(err, context.Canceled) {
			return nil // the client is gone: nobody to answer
		}
		return r.reject(cl.tenant, err)
	}
	defer release()
	cl.release = release
	if cl.claims, err = capability(cl.claims, rt, p); err != nil {
		return r.reject(cl.tenant, err)
	}
	if req := c.Request(); rt.body != bodyNone {
		var body io.Reader = req.Body
		if rt.body == bodyObject {
			body = r.states.PacedReader(req.Context(), st, body, p.cfg.ForwardTimeout)
		}
		cl.body = &watchedBody{r: body, c: req.Body}
		req.Body = cl.body
	}
	r.rej.Admitted(string(cl.tenant))
	return rt.serve(c, cl)
}

// limitBody applies the body cap and decode guard (docs/gateway.md §3.1, docs/gateway.md §3.2): bodies of
// routes without one are dropped unread.
func (r *Role) limitBody(c echo.Context, rt route, p *policy) error {
	req := c.Request()
	if rt.body == bodyNone || req.Body == nil || req.Body == http.NoBody {
		req.Body, req.ContentLength = http.NoBody, 0
		return nil
	}
	max := p.cfg.JSONBodyMaxBytes
	if rt.body == bodyObject {
		max = p.cfg.ObjectBodyMaxBytes
		if enc := httpx.ContentEncoding(req.Header); len(httpx.ContentCodings(enc)) > 0 {
			return httpx.NewError(http.StatusUnsupportedMediaType, httpx.CodeUnsupportedMedia,
				"objects are stored as sent: Content-Encoding %q is not accepted (the id is the hash of the bytes sent)", enc)
		}
	}
	if err := admission.BodyCap(req, max); err != nil {
		return err
	}
	body := progressBody(admission.CapReader(req.Body, max), http.NewResponseController(c.Response()), p.cfg.ForwardTimeout)
	if rt.body == bodyJSON {
		decoded, err := httpx.GuardBodyLimits(httpx.ContentEncoding(req.Header), body, p.cfg.DecodeMaxBytes, p.cfg.DecodeMaxRatio)
		if err != nil {
			return err
		}
		if decoded != body {
			req.Header.Del("Content-Encoding")
			req.Header.Del("Content-Length")
			req.ContentLength = -1
		}
		body = decoded
	}
	req.Body = body
	return nil
}

// capability is stage 10 (docs/gateway.md §3.7): writes always, reads when public_reads is
// off, need a token with the route's scope.
// claims are the token's, verified by tenant identification (nil: none).
func capability(claims *auth.Claims, rt route, p *policy) (*auth.Claims, error) {
	if !rt.write && p.cfg.PublicReads && (claims == nil || !claims.Allows(rt.scope)) {
		return nil, nil // anonymous, or a token without the read scope: a public read
	}
	return auth.Authorize(claims, rt.scope)
}

// costOf is the DRR cost of a request (docs/gateway.md §3.5): by its declared body.
func costOf(req *http.Request, rt route) int {
	if rt.body == bodyNone {
		return drr.Cost(0)
	}
	return drr.Cost(req.ContentLength)
}

// peerAddr is the TCP peer of req (the zero Addr when unparsable).
func peerAddr(req *http.Request) netip.Addr {
	ap, err := netip.ParseAddrPort(req.RemoteAddr)
	if err != nil {
		return netip.Addr{}
	}
	return ap.Addr().Unmap()
}

// reject counts a refusal under ron_gateway_rejected_total (by the reason
// err carries) and returns err.
func (r *Role) reject(id tenant.ID, err error) error {
	r.rej.RejectedErr(string(id), err)
	return err
}

// watchedBody is an admitted request body that remembers the first
// admission error (an *httpx.Error from the cap, decode guard or byte
// quota) its reads failed with.
type watchedBody struct {
	r   io.Reader
	c   io.Closer
	mu  sync.Mutex
	err error
}

func (b *watchedBody) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if err != nil && isEnvelope(err) {
		b.mu.Lock()
		if b.err == nil {
			b.err = err
		}
		b.mu.Unlock()
	}
	return n, err
}

func (b *watchedBody) Close() error { return b.c.Close() }

func (b *watchedBody) admissionError() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.err
}

// progressBody extends the connection's read deadline before every read of
// an admitted body, so a long upload is bounded per chunk (docs/gateway.md §3.8), not by
// the listener's whole-request ReadTimeout.
func progressBody(body io.ReadCloser, rc *http.ResponseController, d time.Duration) io.ReadCloser {
	return &deadlineBody{ReadCloser: body, rc: rc, d: d}
}

type deadlineBody struct {
	io.ReadCloser
	rc *http.ResponseController
	d  time.Duration
}

func (b *deadlineBody) Read(p []byte) (int, error) {
	_ = b.rc.SetReadDeadline(time.Now().Add(b.d))
	return b.ReadCloser.Read(p)
}

// isEnvelope reports whether err carries an *httpx.Error (an answer of its
// own) rather than being a plain failure.
func isEnvelope(err error) bool {
	var he *httpx.Error
	return errors.As(err, &he)
}
