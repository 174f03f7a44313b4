package gateway

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/roles/edge/edgeapi"
	"github.com/ronhq/ron/roles/gateway/hygiene"
	"github.com/ronhq/ron/roles/gateway/upstream"
	"github.com/ronhq/ron/roles/index/indexapi"
	"github.com/ronhq/ron/roles/index/indexapi/clusterindex"
	"github.com/ronhq/ron/roles/registry/registryapi"
	"github.com/ronhq/ron/roles/storage/storageapi"
	"github.com/ronhq/ron/store"
)

// errNoUpstream answers a route whose upstream is neither co-located nor
// configured (nor, in a cluster, served by an alive member).
func errNoUpstream(role string) error {
	return httpx.NewError(http.StatusBadGateway, httpx.CodeUpstreamUnavailable, "no %s upstream is configured or alive", role).
		WithDetails(map[string]any{"reason": "no_upstream", "upstream": role})
}

// upstreamCall is the upstream.Call of the admitted request req to link at
// path (already escaped).
func upstreamCall(req *http.Request, cl *call, link *upstream.Link, path string, stream bool) upstream.Call {
	hdr := hygiene.ToUpstream(req.Header)
	hdr[corrIDKey] = []string{cl.corrID}
	uc := upstream.Call{Method: req.Method, Path: path, RawQuery: req.URL.RawQuery, Header: hdr,
		ContentLength: req.ContentLength, Tenant: string(cl.tenant), ClientIP: cl.clientIP,
		Proto: schemeOf(req), Host: req.Host, Deadline: cl.deadline, Stream: stream}
	if req.Body != nil && req.Body != http.NoBody {
		uc.Body = req.Body
	} else {
		uc.ContentLength = 0
	}
	if link.Name() == edgeapi.RoleName {
		uc.Prefix = "/edge"
	}
	return uc
}

// send forwards the admitted request and returns the upstream's response
// (for callers that read the body themselves).
func (r *Role) send(req *http.Request, cl *call, link *upstream.Link, path string) (*http.Response, error) {
	return link.Do(req.Context(), upstreamCall(req, cl, link, path, false))
}

// passing says how pass treats the final upstream answer.
type passing struct {
	set    http.Header           // replaces generated response headers (the /n ones)
	keep   func(status int) bool // nil: keep every answer
	onHead func()                // runs once the answer is accepted, before its status is written
	stream bool                  // an event stream: flushed, no progress limit
}

// pass forwards the admitted request and answers it through w: the final
// upstream answer is declined when its request body failed admission or
// p.keep refuses its status; otherwise its headers pass hygiene (docs/gateway.md §6),
// p.set replaces generated ones, and status and body follow unchanged.
// Results as upstream.Link.Serve.
func (r *Role) pass(w http.ResponseWriter, req *http.Request, cl *call, link *upstream.Link, path string, p passing) (bool, int, error) {
	uc := upstreamCall(req, cl, link, path, p.stream)
	return link.Serve(req.Context(), uc, w, func(status int, h http.Header) bool {
		if cl.bodyError() != nil || p.keep != nil && !p.keep(status) {
			return false
		}
		mergeHeaders(w.Header(), hygiene.FromUpstream(h, req.Method, status))
		for k, v := range p.set {
			w.Header()[k] = v
		}
		if p.onHead != nil {
			p.onHead()
		}
		return true
	})
}

// forward sends the request and passes the answer through unchanged (after
// docs/gateway.md §6). A request body that failed admission answers with its own error.
func (r *Role) forward(c echo.Context, cl *call, link *upstream.Link, path string) error {
	if link == nil {
		return errNoUpstream(upstreamOfPath(path))
	}
	served, _, err := r.pass(c.Response(), c.Request(), cl, link, path, passing{})
	return r.passed(c.Response(), c.Request(), cl, served, err)
}

// passed turns pass's results into the handler's: a body admission error
// when nothing was served, else the error; a body that failed after the
// status was sent aborts the response (connection closed short), never a
// clean end.
func (r *Role) passed(w http.ResponseWriter, req *http.Request, cl *call, served bool, err error) error {
	if !served {
		if berr := cl.bodyError(); berr != nil {
			return r.reject(cl.tenant, berr)
		}
		return err
	}
	if err == nil || req.Context().Err() != nil {
		return nil // complete, or the client left
	}
	r.Log.Info().Err(err).Str("corr_id", cl.corrID).Msg("upstream body failed after the status was sent; aborting the response")
	panic(http.ErrAbortHandler)
}

// corrIDKey is httpx.HeaderCorrID in canonical form: the key it has in a
// header map (Get and Set with the constant itself allocate its canonical
// form each time).
var corrIDKey = http.CanonicalHeaderKey(httpx.HeaderCorrID)

// mergeHeaders copies src (canonical keys, as hygiene makes them) into dst;
// Vary values are added to those already set (CORS adds Vary: Origin), the
// correlation id stays ours, every other field replaces.
func mergeHeaders(dst, src http.Header) {
	for k, v := range src {
		if k == "Vary" {
			dst[k] = append(dst[k], v...)
			continue
		}
		if k == corrIDKey {
			continue // ours, already set
		}
		dst[k] = v
	}
}

// schemeOf is the scheme the client used to reach the gateway.
func schemeOf(req *http.Request) string {
	if req.TLS != nil {
		return "https"
	}
	return "http"
}

// upstreamOfPath names the role serving an upstream path, for errors.
func upstreamOfPath(path string) string {
	switch {
	case strings.HasPrefix(path, "/o"):
		return storageapi.RoleName
	case strings.HasPrefix(path, "/registry"):
		return registryapi.RoleName
	case strings.HasPrefix(path, "/resolve"), strings.HasPrefix(path, "/names"):
		return indexapi.RoleName
	}
	return edgeapi.RoleName
}

// objectParam decodes the {b3} segment once and checks it (docs/gateway.md §4 step 1).
func objectParam(raw string) (store.ID, error) {
	s, err := url.PathUnescape(raw)
	if err == nil {
		var id store.ID
		if id, err = store.ParseID(s); err == nil {
			return id, nil
		}
	}
	return store.ID{}, httpx.NewError(http.StatusBadRequest, httpx.CodeBadRequest, "object id must be b3: and 64 lowercase hex digits")
}

// serveObjectPart passes GET|HEAD /o/{b3}/{part} to storage, the query
// included: the outboard and slices of the verified transfer
// (docs/storage.md §4), and /chunks, which storage answers 410 Gone.
func (r *Role) serveObjectPart(part string) func(echo.Context, *call) error {
	return func(c echo.Context, cl *call) error {
		id, err := objectParam(rawSegments(c.Request())[1])
		if err != nil {
			return err
		}
		return r.forward(c, cl, r.ups.link(storageapi.RoleName, id[:]), "/o/"+id.String()+"/"+part)
	}
}

// serveObjectWrite passes POST /o and PUT /o/{b3} to storage, streaming the
// (capped, paced) body; writes are never retried.
func (r *Role) serveObjectWrite(c echo.Context, cl *call) error {
	// POST: the id is not known yet; the correlation id spreads uploads
	// over the storage members (same zone first) instead of sending every
	// one to the same coordinator.
	path, key := "/o", []byte(httpx.CorrID(c))
	if segs := rawSegments(c.Request()); len(segs) > 1 {
		id, err := objectParam(segs[1])
		if err != nil {
			return err
		}
		path, key = path+"/"+id.String(), id[:]
	}
	return r.forward(c, cl, r.ups.link(storageapi.RoleName, key), path)
}

// serveResolve passes GET /resolve/{key} to the index after checking the
// key: a b3 id, a name or name@version.
func (r *Role) serveResolve(c echo.Context, cl *call) error {
	key, err := url.PathUnescape(rawSegments(c.Request())[1])
	if err != nil || !validResolveKey(key) {
		return httpx.NewError(http.StatusBadRequest, httpx.CodeBadRequest, "resolve key must be a b3 id, a name or name@version")
	}
	return r.forward(c, cl, r.ups.link(indexapi.RoleName, clusterindex.ResolveKey(key)), "/resolve/"+url.PathEscape(key))
}

// validResolveKey reports whether key is a b3 id, a name or name@version
// (indexapi.ParseResolveKey).
func validResolveKey(key string) bool {
	_, _, err := indexapi.ParseResolveKey(key)
	return err == nil
}

// nameParam decodes and checks the {name} segment of /names routes; reads
// accept name@version.
func nameParam(raw string, versioned bool) (string, error) {
	s, err := url.PathUnescape(raw)
	if err == nil {
		if versioned && strings.Contains(s, "@") {
			_, _, err = indexapi.ParseNameVersion(s)
		} else {
			_, err = indexapi.ParseName(s)
		}
	}
	if err != nil {
		return "", httpx.NewError(http.StatusBadRequest, httpx.CodeBadRequest, "invalid name: labels of [a-z0-9-] joined by dots")
	}
	return s, nil
}

// serveNameWrite passes PUT and DELETE /names/{name} to the index.
func (r *Role) serveNameWrite(c echo.Context, cl *call) error {
	name, err := nameParam(rawSegments(c.Request())[1], false)
	if err != nil {
		return err
	}
	return r.forward(c, cl, r.ups.link(indexapi.RoleName, clusterindex.ResolveKey(name)), "/names/"+url.PathEscape(name))
}

// serveNameRead passes GET /names/{name}[@{version}][/versions].
func (r *Role) serveNameRead(c echo.Context, cl *call) error {
	segs := rawSegments(c.Request())
	name, err := nameParam(segs[1], len(segs) == 2)
	if err != nil {
		return err
	}
	path := "/names/" + url.PathEscape(name)
	if len(segs) == 3 {
		path += "/versions"
	}
	return r.forward(c, cl, r.ups.link(indexapi.RoleName, clusterindex.ResolveKey(name)), path)
}

// serveRegistry passes GET /registry/head and /registry/{version}.
func (r *Role) serveRegistry(c echo.Context, cl *call) error {
	seg := rawSegments(c.Request())[1]
	if seg != "head" {
		if _, err := strconv.ParseUint(seg, 10, 64); err != nil || seg[0] == '+' {
			return httpx.NewError(http.StatusBadRequest, httpx.CodeBadRequest, "registry version must be a decimal u64")
		}
	}
	return r.forward(c, cl, r.ups.link(registryapi.RoleName, nil), "/registry/"+seg)
}

// serveRegistryStream relays the registry's event stream: the scheduler
// slot is given back once the upstream's headers arrive, the stream has no
// deadline, and it ends when the client leaves or shutdown begins.
func (r *Role) serveRegistryStream(c echo.Context, cl *call) error {
	link := r.ups.link(registryapi.RoleName, nil)
	if link == nil {
		return errNoUpstream(registryapi.RoleName)
	}
	ctx, cancel := context.WithCancel(c.Request().Context())
	defer cancel()
	stop := context.AfterFunc(r.drainCtx, cancel)
	defer stop()
	c.SetRequest(c.Request().WithContext(ctx))
	served, _, err := r.pass(c.Response(), c.Request(), cl, link, "/registry/stream", passing{stream: true,
		onHead: func() {
			cl.release()
			r.met.streams.Inc()
		}})
	return r.passed(c.Response(), c.Request(), cl, served, err)
}

// serveEdge passes GET|HEAD /edge/{rest} to the edge as /{rest}.
func (r *Role) serveEdge(c echo.Context, cl *call) error {
	raw := strings.TrimPrefix(c.Request().URL.EscapedPath(), "/edge")
	path, err := hygiene.EdgePath(strings.TrimPrefix(raw, "/"))
	if err != nil {
		return err
	}
	return r.forward(c, cl, r.ups.link(edgeapi.RoleName, []byte(path)), path)
}
