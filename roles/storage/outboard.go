package storage

import (
	"context"
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/httpx/content"
	"github.com/ronhq/ron/httpx/ranges"
	"github.com/ronhq/ron/store"
	"github.com/ronhq/ron/store/bao"
)

// handleOutboard answers GET|HEAD /o/{b3}/outboard (docs/storage.md §4):
// the object's Bao outboard, immutable, with the strong ETag
// "b3:<hex>/outboard". A v1 object is upgraded first (its data hashed
// whole once).
func (r *Role) handleOutboard(c echo.Context) error {
	return r.withOutboard(c, nil, func(obj store.Object, ob bao.Outboard) error {
		return r.sendOutboard(c, obj.Info().ID, ob)
	})
}

// withOutboard runs the lookup an outboard or slice answer starts with —
// token, id syntax, then check (nil: none; it vets the query before the
// lookup), GET pool admission, lookup, the outboard (upgrading a v1
// object) — and calls serve with the open object, released afterwards.
func (r *Role) withOutboard(c echo.Context, check func() error, serve func(store.Object, bao.Outboard) error) error {
	if err := r.readAuth(c); err != nil {
		return err
	}
	id, err := parseID(c)
	if err != nil {
		return err
	}
	if check != nil {
		if err := check(); err != nil {
			return err
		}
	}
	ctx := c.Request().Context()
	obj, done, err := r.openObject(ctx, httpx.RouteOf(c), id)
	if err != nil {
		return err
	}
	defer done()
	ob, err := r.outboardOf(ctx, obj)
	if err != nil {
		return err
	}
	return serve(obj, ob)
}

// sendOutboard writes the outboard answer: conditionals, headers, bytes.
func (r *Role) sendOutboard(c echo.Context, id store.ID, ob bao.Outboard) error {
	h := c.Response().Header()
	etag := `"` + id.String() + `/outboard"`
	setTreeHeaders(h, etag)
	switch ranges.CheckPreconditions(c.Request(), etag) {
	case http.StatusNotModified:
		return c.NoContent(http.StatusNotModified)
	case http.StatusPreconditionFailed:
		return httpx.NewError(http.StatusPreconditionFailed, httpx.CodePreconditionFailed, "If-Match did not match")
	}
	h.Set("Content-Length", strconv.Itoa(len(ob)))
	if c.Request().Method == http.MethodHead {
		return c.NoContent(http.StatusOK)
	}
	r.metrics.bytesOut(httpx.RouteOf(c), int64(len(ob)))
	return c.Blob(http.StatusOK, "application/octet-stream", ob)
}

// setTreeHeaders sets the headers of an outboard or slice answer.
func setTreeHeaders(h http.Header, etag string) {
	content.SetImmutable(h, etag)
	h.Set("Content-Type", "application/octet-stream")
}

// outboardAttempts bounds outboardOf's upgrade-and-reopen rounds: a
// concurrent read may cache the v1 sidecar just before the background
// pass renames the v2 one over it (the next Upgrade drops that entry).
const outboardAttempts = 3

// outboardOf returns obj's outboard, upgrading a v1 object's sidecar
// first: the data is hashed whole, and the outboard is taken from the
// object reopened on the v2 sidecar.
func (r *Role) outboardOf(ctx context.Context, obj store.Object) (bao.Outboard, error) {
	if ob := obj.Outboard(); ob != nil {
		return ob, nil
	}
	id := obj.Info().ID
	for range outboardAttempts {
		if _, err := r.upgradeObject(ctx, id); err != nil {
			return nil, storeError(err)
		}
		ob, err := r.reopenedOutboard(ctx, id)
		if err != nil || ob != nil {
			return ob, err
		}
	}
	return nil, httpx.NewError(http.StatusServiceUnavailable, httpx.CodeNotReady,
		"the object's sidecar is being rewritten by an older ron sharing this data directory; retry").WithRetryAfter(1)
}

// reopenedOutboard opens id again and returns its outboard (nil while its
// sidecar is still v1).
func (r *Role) reopenedOutboard(ctx context.Context, id store.ID) (bao.Outboard, error) {
	again, err := r.engine.Open(ctx, id)
	if err != nil {
		return nil, storeError(err)
	}
	defer again.Close()
	return again.Outboard(), nil
}

// handleSlice answers GET /o/{b3}/slice?start=S&len=N (docs/storage.md §4):
// the Bao slice (group size 64 KiB) of bytes [S, S+N): the 8-byte size
// header, then in pre-order the parents on the paths to the covering
// groups and those groups' bytes, which any Bao decoder verifies with
// nothing but the id. The first covering group is verified before the
// headers are sent; a later corrupt group cuts the answer.
func (r *Role) handleSlice(c echo.Context) error {
	var start, n int64
	check := func() (err error) {
		start, n, err = ParseSliceQuery(c.QueryParam("start"), c.QueryParam("len"))
		return err
	}
	return r.withOutboard(c, check, func(obj store.Object, ob bao.Outboard) error {
		from, to, err := bao.Span(start, n, ob.Size())
		if err != nil {
			c.Response().Header().Set("Content-Range", "bytes */"+strconv.FormatInt(ob.Size(), 10))
			return httpx.NewError(http.StatusRequestedRangeNotSatisfiable, httpx.CodeRangeNotSatisfiable,
				"%d bytes at %d are not inside the object's %d", n, start, ob.Size())
		}
		return r.sendSlice(c, obj, ob, start, n, from, to)
	})
}

// sendSlice streams the slice whose covering groups are [from, to).
func (r *Role) sendSlice(c echo.Context, obj store.Object, ob bao.Outboard, start, n, from, to int64) error {
	cr := newChunkReader(obj, r.metrics.chunksVerified())
	defer cr.release()
	if err := cr.verifyFirst(from); err != nil {
		return err
	}
	setTreeHeaders(c.Response().Header(), `"`+obj.Info().ID.String()+"/slice/"+strconv.FormatInt(start, 10)+
		"+"+strconv.FormatInt(n, 10)+`"`)
	c.Response().WriteHeader(http.StatusOK)
	ctx := c.Request().Context()
	w := &deadlineWriter{w: c.Response(), rc: http.NewResponseController(c.Response()), d: r.Cfg.Load().StreamWriteTimeout}
	err := bao.ExtractSlice(w, &objectReader{ctx: ctx, cr: cr, off: from, end: to, done: func() {}}, ob, start, n)
	r.metrics.bytesOut(httpx.RouteOf(c), w.n)
	if err != nil {
		r.abortStream(err)
	}
	return nil
}

// ParseSliceQuery parses the start and len parameters of GET
// /o/{b3}/slice: decimal integers, start ≥ 0 and len ≥ 1 (400 bad_request
// otherwise; whether the range lies inside the object is checked against
// its size later).
func ParseSliceQuery(start, n string) (int64, int64, error) {
	s, err1 := strconv.ParseUint(start, 10, 63)
	l, err2 := strconv.ParseUint(n, 10, 63)
	if err1 != nil || err2 != nil || l == 0 {
		return 0, 0, httpx.NewError(http.StatusBadRequest, httpx.CodeBadRequest,
			"slice needs start (an integer ≥ 0) and len (an integer ≥ 1), got start=%q len=%q", start, n)
	}
	return int64(s), int64(l), nil
}

// handleChunksGone answers the removed GET|HEAD /o/{b3}/chunks with 410
// Gone naming its replacement (docs/storage.md §4).
func (r *Role) handleChunksGone(c echo.Context) error {
	return httpx.NewError(http.StatusGone, httpx.CodeGone,
		"chunk lists were replaced by the Bao outboard: GET /o/{b3}/outboard proves every 64 KiB group against the id; upgrade the reader to a ron with verified streaming")
}
