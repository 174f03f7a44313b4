package tiles

import (
	"bytes"
	"encoding/json"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/roles/edge/packs"
	"github.com/ronhq/ron/roles/edge/tiletype"
)

// tileJSON is the TileJSON 3.0.0 document of docs/edge.md §6.4, fields in the spec's
// order. description, version and attribution appear when the metadata has
// them as strings; vector_layers as docs/edge.md §6.4 says (see vectorLayers).
type tileJSON struct {
	TileJSON     string          `json:"tilejson"`
	Name         string          `json:"name"`
	Description  *string         `json:"description,omitempty"`
	Version      *string         `json:"version,omitempty"`
	Attribution  *string         `json:"attribution,omitempty"`
	Scheme       string          `json:"scheme"`
	Tiles        []string        `json:"tiles"`
	MinZoom      int             `json:"minzoom"`
	MaxZoom      int             `json:"maxzoom"`
	Bounds       [4]float64      `json:"bounds"`
	Center       [3]float64      `json:"center"`
	VectorLayers json.RawMessage `json:"vector_layers,omitempty"`
}

// serveTileJSON answers GET|HEAD /tiles/{name}.json.
func (t *Tiles) serveTileJSON(c echo.Context, name string) error {
	p, release, ok := t.packs.Acquire(name)
	if !ok {
		return httpx.NewError(http.StatusNotFound, httpx.CodeNotFound, "no pack %q", name)
	}
	defer release()
	s, date := t.current(), t.now()
	base, err := baseURL(c.Request(), s)
	if err != nil {
		return err
	}
	doc, err := TileJSON(p, base)
	if err != nil {
		t.log.Error().Err(err).Str("pack", p.Name()).Msg("TileJSON does not encode")
		return httpx.NewError(http.StatusInternalServerError, httpx.CodeInternal, "TileJSON does not encode")
	}
	if s.PublicURL == "" {
		c.Response().Header().Add("Vary", varyForwarded)
	}
	_, err = t.serve(c, s, body{route: RouteTileJSON, size: int64(len(doc)), ctype: "application/json",
		v: validators(hashETag("tj", doc), p.ModTime(), date), date: date, data: doc})
	return err
}

// TileJSON renders the TileJSON document of pack p with tile URLs under
// base ("<base>/tiles/<name>/{z}/{x}/{y}.<ext>"), ending in a newline. HTML
// characters in strings are not escaped.
func TileJSON(p *packs.Pack, base string) ([]byte, error) {
	doc := tileJSON{TileJSON: "3.0.0", Name: p.Name(), Scheme: "xyz",
		Tiles:   []string{base + "/tiles/" + p.Name() + "/{z}/{x}/{y}." + p.TileType().TileJSONExt()},
		MinZoom: p.MinZoom(), MaxZoom: p.MaxZoom(), Bounds: p.Bounds(), Center: p.Center(),
		Description: metaString(p, "description"), Version: metaString(p, "version"),
		Attribution: metaString(p, "attribution"), VectorLayers: vectorLayers(p)}
	if n := metaString(p, "name"); n != nil && *n != "" {
		doc.Name = *n
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(doc); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// metaString is the metadata string value of key, nil when absent.
func metaString(p *packs.Pack, key string) *string {
	if v, ok := p.MetaString(key); ok {
		return &v
	}
	return nil
}

// vectorLayers is the pack's vector_layers array when it has one, "[]" for
// vector packs (MVT, MLT) without one, and nil (omitted) otherwise.
func vectorLayers(p *packs.Pack) json.RawMessage {
	if vl, ok := p.VectorLayers(); ok && json.Valid(vl) {
		return vl
	}
	if typ := p.TileType(); typ == tiletype.TypeMVT || typ == tiletype.TypeMLT {
		return json.RawMessage("[]")
	}
	return nil
}
