package edge

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync/atomic"

	"github.com/labstack/echo/v4"

	"github.com/ronhq/ron/httpx"
)

var readMethods = []string{http.MethodGet, http.MethodHead}

// Route templates (docs/edge.md §1). The CORS routes answer OPTIONS as a
// preflight; /assets/* takes every method, extension methods included.
const (
	routeObject = "/o/:b3"
	routePacks  = "/packs"
	routePack   = "/packs/*"
	routeTiles  = "/tiles/*"
	routeAssets = "/assets/*"
)

// corsRoutes get the CORS headers and the preflight of docs/edge.md §2.
var corsRoutes = []string{routeObject, routePacks, routePack, routeTiles}

// opsRoutes are mounted by Ops; the role's own limits and deadline skip them.
var opsRoutes = map[string]bool{"/healthz": true, "/readyz": true, "/metrics": true, "/version": true}

// handlers are the route handlers of docs/edge.md §1.
type handlers struct {
	object, packs, tiles, assets echo.HandlerFunc
}

// mount adds the docs/edge.md §1 routes with the role's handlers, and the Ops routes.
func (r *Role) mount(e *echo.Echo) {
	r.mountWith(e, handlers{object: r.objects.Serve, packs: r.tiles.ServePacks, tiles: r.tiles.ServeTiles,
		assets: r.live.Serve})
	if r.opt.Ops != nil {
		r.opt.Ops(e)
	}
}

// mountWith adds the docs/edge.md §1 routes with h behind the role's middleware: guard
// → rate limit → deadline (and CORS).
func (r *Role) mountWith(e *echo.Echo, h handlers) {
	e.Use(r.middleware)
	e.Match(readMethods, routeObject, h.object)
	e.Match(readMethods, routePacks, h.packs)
	e.Match(readMethods, routePack, h.packs)
	e.Match(readMethods, routeTiles, h.tiles)
	for _, p := range corsRoutes {
		e.OPTIONS(p, r.preflight)
	}
	// Any covers the methods echo knows; the not-found route of the same
	// path takes the others (M-SEARCH, …), which the live fill answers.
	e.Any(routeAssets, h.assets)
	e.RouteNotFound(routeAssets, h.assets)
}

// middleware is the role's part of the chain: guard → deadline (and
// CORS); the rps bucket is the shared chain's (ServerOptions.RateLimitReason).
// It is one echo middleware because echo wraps the global middleware
// around the handler anew for every request.
func (r *Role) middleware(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if err := r.guard(c); err != nil {
			return err
		}
		return r.deadline(c, next)
	}
}

// valNosniff is the X-Content-Type-Options value of every answer (shared;
// never modified).
var valNosniff = []string{"nosniff"}

// guard applies to every request: X-Content-Type-Options: nosniff;
// CONNECT and TRACE → 405; an absolute-form request target (a proxy
// request) → 403 forbidden. Both refusals carry reason not_allowed.
func (r *Role) guard(c echo.Context) error {
	c.Response().Header()["X-Content-Type-Options"] = valNosniff
	req := c.Request()
	switch {
	case req.Method == http.MethodConnect || req.Method == http.MethodTrace:
		r.met.reject(ReasonNotAllowed)
		c.Response().Header().Set("Allow", allowOf(c.Path()))
		return httpx.NewError(http.StatusMethodNotAllowed, httpx.CodeMethodNotAllowed,
			"%s is not served", req.Method).WithReason(ReasonNotAllowed)
	case absoluteForm(req):
		r.met.reject(ReasonNotAllowed)
		return httpx.NewError(http.StatusForbidden, httpx.CodeForbidden,
			"the edge is not a forward proxy: absolute-form request targets are refused").WithReason(ReasonNotAllowed)
	}
	return nil
}

// absoluteForm reports whether the request target was not origin-form
// ("/path"): absolute-form ("http://host/…"). "*" (OPTIONS) passes.
func absoluteForm(req *http.Request) bool {
	t := req.RequestURI
	return t != "" && t != "*" && !strings.HasPrefix(t, "/")
}

// allowOf is the Allow value of a route template.
func allowOf(route string) string {
	if isCORSRoute(route) {
		return "GET, HEAD, OPTIONS"
	}
	if opsRoutes[route] {
		return "GET"
	}
	return "GET, HEAD"
}

// deadline gives the handler its deadline (docs/edge.md §2: request_timeout or a
// shorter Request-Timeout, to the first byte), paces the writes of the
// body, adds the CORS headers on the CORS routes, and turns a deadline
// that passed before the first byte into 504 timeout (reason timeout).
func (r *Role) deadline(c echo.Context, next echo.HandlerFunc) error {
	if opsRoutes[c.Path()] {
		return next(c)
	}
	s := r.set.Load()
	req, resp := c.Request(), c.Response()
	d, err := requestTimeout(req, s.cfg.RequestTimeout)
	if err != nil {
		return err
	}
	pr := &pacedRequest{req: req}
	if isCORSRoute(c.Path()) && req.Method != http.MethodOptions {
		pr.cors = &s.cors
	}
	pr.ctx.init(req.Context(), d, &pr.committed)
	defer pr.ctx.stop()
	pr.w.init(resp.Writer, r.met.writeTimeout, pr)
	resp.Writer = &pr.w
	c.SetRequest(req.WithContext(&pr.ctx))
	err = r.timedOut(c, &pr.ctx, next(c))
	pr.w.endPacing()
	return err
}

// pacedRequest is the per-request state of the deadline middleware, in one
// allocation: the first-byte context, the pacing writer and the commit
// flag they share.
type pacedRequest struct {
	req       *http.Request
	cors      *cors // nil: not a CORS route (or a preflight)
	committed atomic.Bool
	ctx       firstByteCtx
	w         chunkWriter
}

// commit implements committer: the first byte is on its way, and a CORS
// route gets its CORS headers.
func (pr *pacedRequest) commit(h http.Header) {
	pr.committed.Store(true)
	if pr.cors != nil {
		pr.cors.apply(h, pr.req)
	}
}

// timedOut maps the handler's result: a deadline that passed before the
// first byte becomes 504 timeout with reason timeout (counted); a 504
// timeout envelope of a building block without a reason gets that reason
// (and is counted here).
func (r *Role) timedOut(c echo.Context, ctx context.Context, err error) error {
	if err == nil || c.Response().Committed {
		return err
	}
	var he *httpx.Error
	switch {
	case errors.As(err, &he):
		if he.Code == httpx.CodeTimeout && he.Details["reason"] == nil {
			r.met.reject(ReasonTimeout)
			return (he).WithReason(ReasonTimeout)
		}
		return err
	case errors.Is(err, context.DeadlineExceeded) || errors.Is(ctx.Err(), context.DeadlineExceeded):
		r.met.reject(ReasonTimeout)
		return (httpx.NewError(http.StatusGatewayTimeout, httpx.CodeTimeout, "request deadline exceeded")).WithReason(ReasonTimeout)
	}
	return err
}

// preflight answers OPTIONS on a CORS route (docs/edge.md §2): 204, no body.
func (r *Role) preflight(c echo.Context) error {
	r.set.Load().cors.preflight(c.Response().Header(), c.Request())
	return c.NoContent(http.StatusNoContent)
}

// isCORSRoute reports whether route is one of corsRoutes.
func isCORSRoute(route string) bool {
	switch route {
	case routeObject, routePacks, routePack, routeTiles:
		return true
	}
	return false
}
