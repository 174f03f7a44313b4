package gateway

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/roles/gateway/hygiene"
	"github.com/ronhq/ron/roles/gateway/upstream"
	"github.com/ronhq/ron/roles/index/indexdb"
	"github.com/ronhq/ron/store"
)

// copyChunk is the unit of relayed bodies: each one must progress within
// forward_timeout (§3.8).
const copyChunk = 64 << 10

// copyBuffers recycles relay buffers: a 64 KiB buffer per request was most
// of the gateway's allocation (BenchmarkObjectGet64K).
var copyBuffers = sync.Pool{New: func() any { b := make([]byte, copyChunk); return &b }}

// errNoUpstream answers a route whose upstream is neither co-located nor
// configured.
func errNoUpstream(role string) error {
	return httpx.NewError(http.StatusBadGateway, httpx.CodeUpstreamUnavailable, "no %s upstream is configured", role).
		WithDetails(map[string]any{"reason": "no_upstream", "upstream": role})
}

// send forwards the admitted request req (answered through w) to link at
// path (already escaped).
func (r *Role) send(w http.ResponseWriter, req *http.Request, cl *call, link *upstream.Link, path string, stream bool) (*http.Response, error) {
	hdr := hygiene.ToUpstream(req.Header)
	hdr.Set(httpx.HeaderCorrID, w.Header().Get(httpx.HeaderCorrID))
	uc := upstream.Call{Method: req.Method, Path: path, RawQuery: req.URL.RawQuery, Header: hdr,
		ContentLength: req.ContentLength, Tenant: string(cl.tenant), ClientIP: cl.clientIP,
		Proto: schemeOf(req), Host: req.Host, Deadline: cl.deadline, Stream: stream}
	if req.Body != nil && req.Body != http.NoBody {
		uc.Body = req.Body
	} else {
		uc.ContentLength = 0
	}
	if link.Name() == "edge" {
		uc.Prefix = "/edge"
	}
	return link.Do(req.Context(), uc)
}

// forward sends the request and relays the answer unchanged (after §6).
func (r *Role) forward(c echo.Context, cl *call, link *upstream.Link, path string) error {
	if link == nil {
		return errNoUpstream(upstreamOfPath(path))
	}
	resp, err := r.send(c.Response(), c.Request(), cl, link, path, false)
	if berr := cl.bodyError(); berr != nil {
		if resp != nil {
			resp.Body.Close()
		}
		return r.reject(cl.tenant, berr)
	}
	if err != nil {
		return err
	}
	return r.relay(c.Response(), c.Request(), resp, nil, false)
}

// relay writes resp to the client: hygiene-filtered headers with set
// applied over them, the status, and the body in 64 KiB chunks under a
// per-chunk write deadline. A body that fails after the status was sent
// aborts the response (connection closed short), never a clean end.
func (r *Role) relay(w http.ResponseWriter, req *http.Request, resp *http.Response, set http.Header, stream bool) error {
	defer resp.Body.Close()
	mergeHeaders(w.Header(), hygiene.FromUpstream(resp.Header, req.Method, resp.StatusCode))
	for k, v := range set {
		w.Header()[k] = v
	}
	w.WriteHeader(resp.StatusCode)
	if req.Method == http.MethodHead || !bodyAllowed(resp.StatusCode) {
		return nil
	}
	if err := r.copyBody(w, resp.Body, stream); err != nil {
		if req.Context().Err() != nil {
			return nil // the client left
		}
		r.log.Info().Err(err).Str("corr_id", w.Header().Get(httpx.HeaderCorrID)).Msg("upstream body failed after the status was sent; aborting the response")
		panic(http.ErrAbortHandler)
	}
	return nil
}

// copyBody copies src to w in chunks, extending the write deadline before
// each one; a stream is flushed after every chunk.
func (r *Role) copyBody(w http.ResponseWriter, src io.Reader, stream bool) error {
	rc := http.NewResponseController(w)
	d := r.policy.Load().cfg.ForwardTimeout
	bp := copyBuffers.Get().(*[]byte)
	defer copyBuffers.Put(bp)
	buf := *bp
	for {
		n, err := src.Read(buf)
		if n > 0 {
			_ = rc.SetWriteDeadline(time.Now().Add(d))
			if _, werr := w.Write(buf[:n]); werr != nil {
				return werr
			}
			if stream {
				_ = rc.Flush()
			}
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// mergeHeaders copies src into dst; Vary values are added to those already
// set (CORS adds Vary: Origin), every other field replaces.
func mergeHeaders(dst, src http.Header) {
	for k, v := range src {
		if k == "Vary" {
			dst[k] = append(dst[k], v...)
			continue
		}
		if k == httpx.HeaderCorrID {
			continue // ours, already set
		}
		dst[k] = v
	}
}

// bodyAllowed reports whether a status may carry a body.
func bodyAllowed(status int) bool {
	return status >= 200 && status != http.StatusNoContent && status != http.StatusNotModified
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
		return "storage"
	case strings.HasPrefix(path, "/registry"):
		return "registry"
	case strings.HasPrefix(path, "/resolve"), strings.HasPrefix(path, "/names"):
		return "index"
	}
	return "edge"
}

// objectParam decodes the {b3} segment once and checks it (§4 step 1).
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

// serveChunks passes GET|HEAD /o/{b3}/chunks to storage.
func (r *Role) serveChunks(c echo.Context, cl *call) error {
	id, err := objectParam(rawSegments(c.Request())[1])
	if err != nil {
		return err
	}
	return r.forward(c, cl, r.ups.storage, "/o/"+id.String()+"/chunks")
}

// serveObjectWrite passes POST /o and PUT /o/{b3} to storage, streaming the
// (capped, paced) body; writes are never retried.
func (r *Role) serveObjectWrite(c echo.Context, cl *call) error {
	path := "/o"
	if segs := rawSegments(c.Request()); len(segs) > 1 {
		id, err := objectParam(segs[1])
		if err != nil {
			return err
		}
		path += "/" + id.String()
	}
	return r.forward(c, cl, r.ups.storage, path)
}

// serveResolve passes GET /resolve/{key} to the index after checking the
// key: a b3 id, a name or name@version.
func (r *Role) serveResolve(c echo.Context, cl *call) error {
	key, err := url.PathUnescape(rawSegments(c.Request())[1])
	if err != nil || !validResolveKey(key) {
		return httpx.NewError(http.StatusBadRequest, httpx.CodeBadRequest, "resolve key must be a b3 id, a name or name@version")
	}
	return r.forward(c, cl, r.ups.index, "/resolve/"+url.PathEscape(key))
}

// validResolveKey reports whether key is a b3 id, a name or name@version.
func validResolveKey(key string) bool {
	if strings.HasPrefix(key, "b3:") {
		_, err := store.ParseID(key)
		return err == nil
	}
	if strings.Contains(key, "@") {
		_, _, err := indexdb.ParseNameVersion(key)
		return err == nil
	}
	_, err := indexdb.ParseName(key)
	return err == nil
}

// nameParam decodes and checks the {name} segment of /names routes; reads
// accept name@version.
func nameParam(raw string, versioned bool) (string, error) {
	s, err := url.PathUnescape(raw)
	if err == nil {
		if versioned && strings.Contains(s, "@") {
			_, _, err = indexdb.ParseNameVersion(s)
		} else {
			_, err = indexdb.ParseName(s)
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
	return r.forward(c, cl, r.ups.index, "/names/"+url.PathEscape(name))
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
	return r.forward(c, cl, r.ups.index, path)
}

// serveRegistry passes GET /registry/head and /registry/{version}.
func (r *Role) serveRegistry(c echo.Context, cl *call) error {
	seg := rawSegments(c.Request())[1]
	if seg != "head" {
		if _, err := strconv.ParseUint(seg, 10, 64); err != nil || seg[0] == '+' {
			return httpx.NewError(http.StatusBadRequest, httpx.CodeBadRequest, "registry version must be a decimal u64")
		}
	}
	return r.forward(c, cl, r.ups.registry, "/registry/"+seg)
}

// serveRegistryStream relays the registry's event stream: the scheduler
// slot is given back once the upstream's headers arrive, the stream has no
// deadline, and it ends when the client leaves or shutdown begins.
func (r *Role) serveRegistryStream(c echo.Context, cl *call) error {
	if r.ups.registry == nil {
		return errNoUpstream("registry")
	}
	ctx, cancel := context.WithCancel(c.Request().Context())
	defer cancel()
	stop := context.AfterFunc(r.drainCtx, cancel)
	defer stop()
	c.SetRequest(c.Request().WithContext(ctx))
	resp, err := r.send(c.Response(), c.Request(), cl, r.ups.registry, "/registry/stream", true)
	if err != nil {
		return err
	}
	cl.release()
	r.met.streams.Inc()
	return r.relay(c.Response(), c.Request(), resp, nil, true)
}

// serveEdge passes GET|HEAD /edge/{rest} to the edge as /{rest}.
func (r *Role) serveEdge(c echo.Context, cl *call) error {
	raw := strings.TrimPrefix(c.Request().URL.EscapedPath(), "/edge")
	path, err := hygiene.EdgePath(strings.TrimPrefix(raw, "/"))
	if err != nil {
		return err
	}
	return r.forward(c, cl, r.ups.edge, path)
}
