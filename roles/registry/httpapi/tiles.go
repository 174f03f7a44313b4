package httpapi

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"math"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/ronhq/ron/httpx/content"
	"github.com/ronhq/ron/roles/registry/tiles"
)

// getCheckpoint answers GET /registry/log/checkpoint: the published signed
// note, no-cache, ETag = quoted hex SHA-256 of the body.
func (a *API) getCheckpoint(c echo.Context) error {
	note := a.opt.Tree.Checkpoint().Note
	sum := sha256.Sum256(note)
	if done, err := conditional(c, `"`+hex.EncodeToString(sum[:])+`"`, ccNoCache); done {
		return err
	}
	return writeBytes(c, http.StatusOK, ctText, note, "")
}

// getKey answers GET /registry/log/key: the note verifier key and a
// newline, cacheable for an hour.
func (a *API) getKey(c echo.Context) error {
	return writeBytes(c, http.StatusOK, ctText, []byte(a.opt.Tree.Key().VerifierKey()+"\n"), ccKey)
}

// getTile answers GET /registry/log/tile/{L}/{N}[.p/{W}] and
// /registry/log/tile/entries/{N}[.p/{W}]: 400 for a non-canonical path,
// 410 (pruned) when the tile ends at or below min_index, 404 beyond the
// published checkpoint; immutable caching.
func (a *API) getTile(c echo.Context) error {
	p, err := tiles.ParseTilePath(c.Param("*"))
	if err != nil {
		return errBadRequest(reasonTile, "tile path %.64q is not canonical", c.Param("*"))
	}
	if err := a.tileAvailable(p); err != nil {
		return err
	}
	if p.Entries {
		return a.serveEntries(c, p)
	}
	data, err := a.opt.Tree.Tile(p.Level, p.Index, p.Width)
	switch {
	case errors.Is(err, tiles.ErrNotFound):
		return errNotFound("tile %s is not covered by the checkpoint", p)
	case errors.Is(err, tiles.ErrCorrupt):
		return errCorrupt("tile %s: %v", p, err)
	case err != nil:
		return errInternal("tile %s: %v", p, err)
	}
	return writeBytes(c, http.StatusOK, ctBinary, data, content.Immutable)
}

// tileAvailable applies the min_index (410) and coverage (404) rules to p.
func (a *API) tileAvailable(p tiles.TilePath) error {
	if min := a.opt.MinIndex(); endLeaf(p) <= min {
		return errGone(reasonPruned, "tile %s ends at or below min_index %d", p, min)
	}
	if size := a.opt.Tree.Size(); !p.Covered(size) {
		return errNotFound("tile %s is not covered by the checkpoint of size %d", p, size)
	}
	return nil
}

// endLeaf is the C2SP tlog-tiles end index of p's tile, in leaves:
// (N+1)·256^(L+1) whatever its width (entry bundles count as level 0),
// saturating. Using the full tile's end for partial tiles too keeps every
// root of a tree at least min_index in size obtainable: a level ≥ 1 partial
// tile holding hashes of pruned subtrees is still served.
func endLeaf(p tiles.TilePath) uint64 {
	n := p.Index
	if n == math.MaxUint64 {
		return math.MaxUint64
	}
	n++
	shift := (uint(p.Level) + 1) * tiles.TileHeight
	if shift >= 64 || n > math.MaxUint64>>shift {
		return math.MaxUint64
	}
	return n << shift
}
