// Package ui is the node's status page, served by the admin listener at
// /ui/ (docs/architecture.md §7). The page is three embedded files (index.html,
// app.js, style.css) with no external assets and no build step: app.js polls
// /api/v1/status, /readyz and /metrics every 2 s and renders roles,
// readiness, queues, rejections, request rates and latency, storage,
// registry, edge packs and cluster members without reloading.
package ui

import (
	"embed"
	"encoding/hex"
	"net/http"
	"path"
	"strconv"

	"github.com/labstack/echo/v4"
	"github.com/zeebo/blake3"

	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/httpx/ranges"
)

// Prefix is where the page lives on the admin listener.
const Prefix = "/ui/"

// ContentSecurityPolicy is sent with every file of the page: scripts,
// styles, fetches and images only from the admin listener itself, no inline
// script or style, no framing, no form posts, no <base> rewriting.
const ContentSecurityPolicy = "default-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

//go:embed index.html app.js style.css
var files embed.FS

// asset is one embedded file ready to serve.
type asset struct {
	body        []byte
	contentType string
	etag        string // strong, quoted: "b3:<hex>" of the body
}

// contentTypes maps the embedded files' extensions to their media types.
var contentTypes = map[string]string{
	".html": "text/html; charset=utf-8",
	".js":   "text/javascript; charset=utf-8",
	".css":  "text/css; charset=utf-8",
}

// assets holds every embedded file by name; "" is the index page.
var assets = loadAssets()

func loadAssets() map[string]asset {
	out := map[string]asset{}
	for _, name := range []string{"index.html", "app.js", "style.css"} {
		body, err := files.ReadFile(name)
		if err != nil {
			panic("roles/ui: embedded file missing: " + name) // a build defect, caught by the package's tests
		}
		sum := blake3.Sum256(body)
		out[name] = asset{body: body, contentType: contentTypes[path.Ext(name)], etag: `"b3:` + hex.EncodeToString(sum[:]) + `"`}
	}
	out[""] = out["index.html"]
	return out
}

// Mount adds the page to an admin listener: GET and HEAD /ui answer 301 to
// /ui/, /ui/ serves index.html, /ui/app.js, /ui/style.css and
// /ui/index.html the other files, anything else under /ui/ is 404
// not_found. Files carry their Content-Type, the Content-Security-Policy
// above, nosniff, no-referrer and Cache-Control: no-cache with a strong
// ETag (If-None-Match → 304). The page is public like /api/v1/status; the
// /metrics it polls keeps its own access rule.
func Mount(e *echo.Echo) {
	methods := []string{http.MethodGet, http.MethodHead}
	e.Match(methods, "/ui", func(c echo.Context) error {
		return c.Redirect(http.StatusMovedPermanently, Prefix)
	})
	e.Match(methods, Prefix+"*", serveAsset)
}

// serveAsset answers one file of the page.
func serveAsset(c echo.Context) error {
	a, ok := assets[c.Param("*")]
	if !ok {
		return httpx.NewError(http.StatusNotFound, httpx.CodeNotFound, "no such file in the status page")
	}
	h := c.Response().Header()
	setSecurityHeaders(h)
	h.Set("Cache-Control", "no-cache")
	h.Set("ETag", a.etag)
	if st := ranges.CheckPreconditions(c.Request(), a.etag); st != 0 {
		return c.NoContent(st)
	}
	h.Set("Content-Length", strconv.Itoa(len(a.body)))
	return c.Blob(http.StatusOK, a.contentType, a.body)
}

// setSecurityHeaders adds the headers every file of the page carries.
func setSecurityHeaders(h http.Header) {
	h.Set("Content-Security-Policy", ContentSecurityPolicy)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Frame-Options", "DENY")
}
