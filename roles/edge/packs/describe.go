package packs

import (
	"bytes"
	"encoding/json"
	"math"

	"github.com/ronhq/ron/roles/edge/mbtiles"
)

// defaultBounds is the TileJSON default of docs/edge.md §6.4.
var defaultBounds = mbtiles.DefaultBounds.Array()

// describePMTiles fills the serving fields from the archive's header and
// metadata.
func (p *Pack) describePMTiles() {
	h := p.pm.Header()
	p.tileType = h.TileType.Type()
	p.coding = h.TileCompression.Coding()
	p.minZoom, p.maxZoom = int(h.MinZoom), int(h.MaxZoom)
	w, s, e, n := h.Bounds()
	p.bounds = defaultBounds
	if validBounds(w, s, e, n) {
		p.bounds = [4]float64{w, s, e, n}
	}
	lon, lat, z := h.Center()
	p.center = [3]float64{(p.bounds[0] + p.bounds[2]) / 2, (p.bounds[1] + p.bounds[3]) / 2, float64(p.minZoom)}
	if validLon(lon) && validLat(lat) {
		p.center = [3]float64{lon, lat, float64(min(max(int(z), p.minZoom), p.maxZoom))}
	}
	p.metaJSON = p.pm.Metadata()
	p.meta, p.vectorLayers = jsonMeta(p.metaJSON)
	p.warnings = p.pm.Warnings()
}

// describeMBTiles fills the serving fields from the MBTiles pack (which
// already applies the docs/edge.md §6.4 defaults).
func (p *Pack) describeMBTiles() {
	p.tileType = p.mb.TileType()
	p.minZoom, p.maxZoom = p.mb.MinZoom(), p.mb.MaxZoom()
	p.bounds = p.mb.Bounds().Array()
	p.center = p.mb.Center().Array()
	p.meta = p.mb.Metadata()
	p.metaJSON, _ = json.Marshal(p.meta)
	p.vectorLayers, _ = p.mb.VectorLayers()
}

// validBounds: finite degrees in range, west ≤ east, south ≤ north, and not
// the all-zero box writers leave when they know no bounds.
func validBounds(w, s, e, n float64) bool {
	if w == 0 && s == 0 && e == 0 && n == 0 {
		return false
	}
	return validLon(w) && validLon(e) && validLat(s) && validLat(n) && w <= e && s <= n
}

func validLon(v float64) bool { return !math.IsNaN(v) && v >= -180 && v <= 180 }
func validLat(v float64) bool { return !math.IsNaN(v) && v >= -90 && v <= 90 }

// jsonMeta extracts the string members and the vector_layers array of a
// PMTiles metadata object.
func jsonMeta(raw json.RawMessage) (map[string]string, json.RawMessage) {
	var obj map[string]json.RawMessage
	if json.Unmarshal(raw, &obj) != nil {
		return map[string]string{}, nil
	}
	strs := make(map[string]string, len(obj))
	for k, v := range obj {
		var s string
		if json.Unmarshal(v, &s) == nil && bytes.HasPrefix(bytes.TrimSpace(v), []byte(`"`)) {
			strs[k] = s
		}
	}
	vl := bytes.TrimSpace(obj["vector_layers"])
	if len(vl) == 0 || vl[0] != '[' {
		vl = nil
	}
	return strs, vl
}
