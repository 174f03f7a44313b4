package tiles

import (
	"bytes"
	"encoding/json"
	"net/http"
	"slices"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/httpx/ranges"
	"github.com/ronhq/ron/roles/edge/edgeapi"
	"github.com/ronhq/ron/roles/edge/packs"
)

// archiveType is the Content-Type of a raw PMTiles archive.
const archiveType = "application/vnd.pmtiles"

// ServePacks answers GET|HEAD /packs (the listing) and
// /packs/{name}.pmtiles (the raw archive, docs/edge.md §4.6). Every other /packs path,
// /packs/{name}.mbtiles included, is 404 not_found.
func (t *Tiles) ServePacks(c echo.Context) error {
	listing, name, ok := parsePacksPath(c.Request().URL.EscapedPath())
	switch {
	case !ok:
		return httpx.NewError(http.StatusNotFound, httpx.CodeNotFound, "no such pack archive")
	case listing:
		return t.serveListing(c)
	}
	return t.serveArchive(c, name)
}

// serveArchive answers GET|HEAD /packs/{name}.pmtiles with the pack's
// file, read with positioned reads while the pack is held.
func (t *Tiles) serveArchive(c echo.Context, name string) error {
	p, release, ok := t.packs.Acquire(name)
	if !ok {
		return httpx.NewError(http.StatusNotFound, httpx.CodeNotFound, "no pack %q", name)
	}
	defer release()
	if p.Kind() != packs.KindPMTiles {
		return httpx.NewError(http.StatusNotFound, httpx.CodeNotFound, "pack %q is not a PMTiles archive", name)
	}
	s, date := t.current(), t.now()
	_, err := t.serve(c, s, body{route: RouteArchive, size: p.Size(), ctype: archiveType,
		v: validators(packETag(p.ID()), p.ModTime(), date), date: date, read: readerAtRead(p)})
	return err
}

// serveListing answers GET|HEAD /packs: the mounted packs sorted by name,
// with a strong ETag "pl-<first 32 hex of BLAKE3(body)>" and no
// Last-Modified.
func (t *Tiles) serveListing(c echo.Context) error {
	doc, err := Listing(t.packs.List())
	if err != nil {
		return httpx.NewError(http.StatusInternalServerError, httpx.CodeInternal, "listing does not encode")
	}
	s, date := t.current(), t.now()
	_, err = t.serve(c, s, body{route: RoutePacks, size: int64(len(doc)), ctype: "application/json",
		v: ranges.Validators{ETag: hashETag("pl", doc)}, date: date, data: doc})
	return err
}

// Listing renders {"packs":[…]} for ps sorted by name, ending in a
// newline. etag is the pack's ETag as sent in headers, quotes included.
func Listing(ps []*packs.Pack) ([]byte, error) {
	out := edgeapi.PackList{Packs: make([]edgeapi.Pack, 0, len(ps))}
	ps = slices.Clone(ps)
	slices.SortFunc(ps, func(a, b *packs.Pack) int { return strings.Compare(a.Name(), b.Name()) })
	for _, p := range ps {
		e := edgeapi.Pack{Name: p.Name(), Kind: string(p.Kind()), Bytes: p.Size(), ETag: packETag(p.ID()),
			TileType: p.TileType().String(), MinZoom: p.MinZoom(), MaxZoom: p.MaxZoom(),
			TileJSON: "/tiles/" + p.Name() + ".json"}
		if p.Kind() == packs.KindPMTiles {
			a := "/packs/" + p.Name() + ".pmtiles"
			e.Archive = &a
		}
		out.Packs = append(out.Packs, e)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(out); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
