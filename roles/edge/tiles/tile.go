package tiles

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/httpx/ranges"
	"github.com/ronhq/ron/roles/edge/packs"
	"github.com/ronhq/ron/roles/edge/pmtiles"
	"github.com/ronhq/ron/roles/edge/tiletype"
)

// ServeTiles answers GET|HEAD /tiles/* (docs/edge.md §6): a tile at
// /tiles/{name}/{z}/{x}/{y}.{ext} or TileJSON at /tiles/{name}.json. Other
// paths under /tiles are 404 not_found.
func (t *Tiles) ServeTiles(c echo.Context) error {
	kind, tr, err := parsePath(c.Request().URL.EscapedPath())
	switch {
	case kind == reqNone:
		return httpx.NewError(http.StatusNotFound, httpx.CodeNotFound, "no such tiles path")
	case kind == reqTileJSON:
		return t.serveTileJSON(c, tr.Name)
	case err != nil:
		return httpx.NewError(http.StatusBadRequest, httpx.CodeBadRequest,
			"invalid tile path: z, x and y must be 1-10 digits with z <= 31 and x, y < 2^z, then .ext")
	}
	return t.serveTile(c, tr)
}

// serveTile answers one tile request whose path is valid.
func (t *Tiles) serveTile(c echo.Context, tr tileReq) error {
	p, release, ok := t.packs.Acquire(tr.Name)
	if !ok {
		t.met.tile("", http.StatusNotFound)
		return httpx.NewError(http.StatusNotFound, httpx.CodeNotFound, "no pack %q", tr.Name)
	}
	defer release()
	if err := t.checkTile(p, tr); err != nil {
		return err
	}
	s, date := t.current(), t.now()
	id, _ := pmtiles.TileID(tr.Z, tr.X, tr.Y) // valid: parseTile checked the coordinates
	tc := tileCtx{p: p, s: s, date: date, id: id}
	tc.coding, tc.known = p.Coding()
	if tc.known && hasConditionals(c.Request()) {
		// PMTiles: the ETag follows from the tile id and the pack's coding,
		// so a 304 (or 412) needs no tile read.
		if done, err := t.precheck(c, tc); done {
			return err
		}
	}
	ct, err := t.tile(c.Request().Context(), p, tr, id)
	if err != nil {
		return t.tileError(c, p, err)
	}
	if !ct.found {
		return t.serveAbsent(c, tc, ct.coding)
	}
	return t.serveFound(c, tc, ct)
}

// tile returns tile tr (id) of p from the tile cache, or reads and caches
// it.
func (t *Tiles) tile(ctx context.Context, p *packs.Pack, tr tileReq, id uint64) (*cachedTile, error) {
	if ct, ok := t.cache.get(tileKey{pack: p.ID(), id: id}); ok {
		return ct, nil
	}
	tile, err := p.Tile(ctx, tr.Z, tr.X, tr.Y)
	if err != nil {
		return nil, err
	}
	ct := newCachedTile(p, tile)
	t.cache.put(ct)
	return ct, nil
}

// hasConditionals reports whether r carries a precondition field (or
// If-Range, which only matters with Range).
func hasConditionals(r *http.Request) bool {
	h := r.Header
	return len(h["If-None-Match"]) > 0 || len(h["If-Match"]) > 0 || len(h["If-Modified-Since"]) > 0 ||
		len(h["If-Unmodified-Since"]) > 0 || len(h["If-Range"]) > 0
}

// tileCtx is what one tile answer is built from.
type tileCtx struct {
	p      *packs.Pack
	s      Settings
	date   time.Time
	id     uint64
	coding tiletype.Coding // the pack's coding, when known (PMTiles)
	known  bool
}

// checkTile applies the pack's rules to a valid tile path: the extension
// must be one of the tile type's (400), z within the zoom range (404,
// reason zoom).
func (t *Tiles) checkTile(p *packs.Pack, tr tileReq) error {
	typ := p.TileType()
	if !typ.AcceptsExt(tr.Ext) {
		return httpx.NewError(http.StatusBadRequest, httpx.CodeBadRequest,
			"pack %q serves %s tiles: extension %q is not accepted", p.Name(), typ, tr.Ext)
	}
	if int(tr.Z) < p.MinZoom() || int(tr.Z) > p.MaxZoom() {
		t.met.tile(p.Name(), http.StatusNotFound)
		return httpx.NewError(http.StatusNotFound, httpx.CodeNotFound, "zoom %d is outside pack %q's range %d-%d",
			tr.Z, p.Name(), p.MinZoom(), p.MaxZoom()).WithDetails(map[string]any{
			"reason": ReasonZoom, "minzoom": p.MinZoom(), "maxzoom": p.MaxZoom()})
	}
	return nil
}

// tileHeaders are the validator headers of one tile answer.
func (t *Tiles) tileHeaders(tc tileCtx, etag []string) headerSet {
	return headerSet{etag: etag, lastMod: t.hv.lastModified(tc.p, tc.date)}
}

// precheck evaluates the conditionals of a PMTiles tile (tc.known) before
// reading it. done reports that the answer is complete: a 304 was written
// (err nil), or err is the 412 envelope.
func (t *Tiles) precheck(c echo.Context, tc tileCtx) (done bool, err error) {
	sent := sentCoding(c.Request().Header, tc.coding)
	etag := tileETag(tc.p.ID(), tc.id, sent)
	v := validators(etag, tc.p.ModTime(), tc.date)
	switch st := ranges.CheckConditions(c.Request(), v); st {
	case http.StatusNotModified:
		h := c.Response().Header()
		t.setCommon(h, tc.s, v, tc.date, t.tileHeaders(tc, []string{etag}))
		setVary(h, tc.coding)
		c.Response().WriteHeader(st)
		t.met.tile(tc.p.Name(), st)
		return true, nil
	case http.StatusPreconditionFailed:
		return true, errPrecondition()
	}
	return false, nil
}

// serveAbsent answers a tile absent inside the zoom range: 204 with the
// tile's validators and no body, or 304 / 412 from the conditionals. stored
// is the pack's coding when known (PMTiles), so the ETag and Vary equal
// those of a present tile of the pack.
func (t *Tiles) serveAbsent(c echo.Context, tc tileCtx, stored tiletype.Coding) error {
	if tc.known {
		stored = tc.coding
	}
	sent := sentCoding(c.Request().Header, stored)
	etag := tileETag(tc.p.ID(), tc.id, sent)
	v := validators(etag, tc.p.ModTime(), tc.date)
	h := c.Response().Header()
	t.setCommon(h, tc.s, v, tc.date, t.tileHeaders(tc, []string{etag}))
	h.Del("Accept-Ranges")
	setVary(h, stored)
	st := ranges.CheckConditions(c.Request(), v)
	switch st {
	case http.StatusPreconditionFailed:
		return errPrecondition()
	case 0:
		st = http.StatusNoContent
	}
	c.Response().WriteHeader(st)
	t.met.tile(tc.p.Name(), st)
	return nil
}

// serveFound answers a present tile: its stored bytes when the client
// accepts their coding, else the bytes decoded under the cap.
func (t *Tiles) serveFound(c echo.Context, tc tileCtx, ct *cachedTile) error {
	sent := sentCoding(c.Request().Header, ct.coding)
	data, length := ct.data, ct.length
	if sent != ct.coding && ct.coding.ContentEncoding() != "" {
		var err error
		if data, err = ct.coding.Decode(ct.data, tc.s.TileMaxDecodedBytes); err != nil {
			return t.decodeError(c, tc.p, err)
		}
		length = nil
	}
	h := c.Response().Header()
	if enc := contentEncodingOf(sent); enc != nil {
		h["Content-Encoding"] = enc
	}
	setVary(h, ct.coding)
	typ := tc.p.TileType()
	etag := ct.etagFor(sent)
	hs := t.tileHeaders(tc, etag)
	hs.ctype, hs.length = contentTypeOf(typ), length
	st, err := t.serve(c, tc.s, body{route: RouteTile, size: int64(len(data)), ctype: typ.ContentType(),
		v: validators(etag[0], tc.p.ModTime(), tc.date), date: tc.date, data: data, hs: hs})
	if err == nil {
		t.met.tile(tc.p.Name(), st)
	}
	return err
}

// sentCoding is the coding a tile stored with stored is sent with: stored
// itself when it has a content coding the request accepts, else None
// (decoded, or a coding without Content-Encoding sent as is).
func sentCoding(h http.Header, stored tiletype.Coding) tiletype.Coding {
	if enc := stored.ContentEncoding(); enc != "" && acceptsCoding(h, enc) {
		return stored
	}
	return tiletype.None
}

// setVary adds Vary: Accept-Encoding when the stored tile is compressed
// (docs/edge.md §6.3).
func setVary(h http.Header, stored tiletype.Coding) {
	if stored.ContentEncoding() == "" {
		return
	}
	if _, ok := h["Vary"]; ok {
		h.Add("Vary", "Accept-Encoding")
		return
	}
	h["Vary"] = valAcceptEncoding
}

// decodeError maps a failed on-the-fly decode: over the cap → 500 internal
// with reason decompress_cap (counted); undecodable bytes → 500 internal.
func (t *Tiles) decodeError(c echo.Context, p *packs.Pack, err error) error {
	log := t.log.Error().Err(err).Str("corr_id", httpx.CorrID(c)).Str("pack", p.Name())
	if errors.Is(err, tiletype.ErrDecodedCap) {
		t.met.cap.Inc()
		log.Str("reason", ReasonDecompressCap).Msg("tile over tile_max_decoded_bytes when decoded")
		return httpx.NewError(http.StatusInternalServerError, httpx.CodeInternal,
			"tile too large to decode").WithDetails(map[string]any{"reason": ReasonDecompressCap})
	}
	log.Msg("tile does not decode")
	return httpx.NewError(http.StatusInternalServerError, httpx.CodeInternal, "tile does not decode")
}

// tileError maps a failed tile read: the context's end is returned as is
// (the role turns a deadline into 504); corruption and other failures are
// 500 internal (a corrupt pack is re-verified by the pack set).
func (t *Tiles) tileError(c echo.Context, p *packs.Pack, err error) error {
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return err
	}
	reason := "read_error"
	if errors.Is(err, packs.ErrCorrupt) {
		reason = "corrupt"
	}
	t.log.Error().Err(err).Str("corr_id", httpx.CorrID(c)).Str("pack", p.Name()).Str("reason", reason).
		Msg("tile read failed")
	return httpx.NewError(http.StatusInternalServerError, httpx.CodeInternal, "tile read failed")
}
