package gateway

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"
	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/roles/edge/edgeapi"
)

var (
	readMethods = []string{http.MethodGet, http.MethodHead}
	getOnly     = []string{http.MethodGet}
)

// routes is the docs/gateway.md §1 table. Edge routes exist only with an edge upstream
// (in a cluster without a co-located or configured edge: always, answered
// by edge members, 502 no_upstream while there is none).
func (r *Role) routes() []route {
	rs := []route{
		{methods: readMethods, path: "/o/:b3", scope: "storage:read", serve: r.serveObject},
		{methods: readMethods, path: "/o/:b3/outboard", scope: "storage:read", serve: r.serveObjectPart("outboard")},
		{methods: getOnly, path: "/o/:b3/slice", scope: "storage:read", serve: r.serveObjectPart("slice")},
		{methods: readMethods, path: "/o/:b3/chunks", scope: "storage:read", serve: r.serveObjectPart("chunks")},
		{methods: []string{http.MethodPost}, path: "/o", scope: "storage:write", write: true, body: bodyObject, serve: r.serveObjectWrite},
		{methods: []string{http.MethodPut}, path: "/o/:b3", scope: "storage:write", write: true, body: bodyObject, serve: r.serveObjectWrite},
		{methods: getOnly, path: "/resolve/:key", scope: "index:read", serve: r.serveResolve},
		{methods: readMethods, path: "/n/:name", scope: "index:read", serve: r.serveSite},
		{methods: readMethods, path: "/n/:name/*", scope: "index:read", serve: r.serveSite},
		{methods: []string{http.MethodPut, http.MethodDelete}, path: "/names/:name", scope: "index:write", write: true, body: bodyJSON, serve: r.serveNameWrite},
		{methods: getOnly, path: "/names/:name", scope: "index:read", serve: r.serveNameRead},
		{methods: getOnly, path: "/names/:name/versions", scope: "index:read", serve: r.serveNameRead},
		{methods: getOnly, path: "/registry/head", scope: "registry:read", serve: r.serveRegistry},
		{methods: getOnly, path: "/registry/:version", scope: "registry:read", serve: r.serveRegistry},
		{methods: getOnly, path: "/registry/stream", scope: "registry:read", stream: true, serve: r.serveRegistryStream},
	}
	if r.ups.has(edgeapi.RoleName) {
		rs = append(rs,
			route{methods: readMethods, path: "/edge", scope: edgeapi.ScopeRead, serve: r.serveEdge},
			route{methods: readMethods, path: "/edge/*", scope: edgeapi.ScopeRead, serve: r.serveEdge})
	}
	return rs
}

// mount adds the routes, each behind the admission pipeline and CORS, and
// the CORS preflight for every path.
func (r *Role) mount(e *echo.Echo) {
	e.Use(nosniff)
	for _, rt := range r.routes() {
		h := r.withCORS(rt, r.admit(rt))
		for _, m := range rt.methods {
			e.Add(m, rt.path, h)
		}
		e.Add(http.MethodOptions, rt.path, r.preflight)
	}
}

// withCORS adds the CORS response headers of docs/gateway.md §6 before h runs.
func (r *Role) withCORS(rt route, h echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		r.corsFor().Apply(c.Response().Header(), c.Request(), rt.write)
		err := h(c)
		if err != nil && !isEnvelope(err) && !errors.Is(err, context.Canceled) {
			r.Log.Error().Err(err).Str("corr_id", httpx.CorrID(c)).Str("route", rt.path).Msg("request failed")
		}
		return err
	}
}

// preflight answers OPTIONS (docs/gateway.md §6): 204 with the CORS headers, no token.
func (r *Role) preflight(c echo.Context) error {
	status := r.corsFor().Preflight(c.Response().Header(), c.Request())
	return c.NoContent(status)
}

// rawSegments splits the escaped request path into its segments, so path
// parameters are decoded exactly once by their own validators.
func rawSegments(req *http.Request) []string {
	return strings.Split(strings.TrimPrefix(req.URL.EscapedPath(), "/"), "/")
}

// nosniff marks every gateway answer X-Content-Type-Options: nosniff (docs/gateway.md §1):
// sites serve stored bytes under their declared types only.
func nosniff(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		c.Response().Header().Set("X-Content-Type-Options", "nosniff")
		return next(c)
	}
}
