package tiles

import (
	"errors"
	"strconv"
	"strings"
	"testing"
)

func TestParsePath(t *testing.T) {
	for _, c := range []struct {
		path string
		kind int
		bad  bool
		want tileReq
	}{
		{"/tiles/p/0/0/0.png", reqTile, false, tileReq{Name: "p", Ext: "png"}},
		{"/tiles/p/3/7/5.pbf", reqTile, false, tileReq{Name: "p", Z: 3, X: 7, Y: 5, Ext: "pbf"}},
		{"/tiles/p/31/2147483647/2147483647.mvt", reqTile, false, tileReq{Name: "p", Z: 31, X: 1<<31 - 1, Y: 1<<31 - 1, Ext: "mvt"}},
		{"/tiles/p/0000000003/0000000007/0.png", reqTile, false, tileReq{Name: "p", Z: 3, X: 7, Ext: "png"}},
		{"/tiles/a.b-c_d/1/1/1.webp", reqTile, false, tileReq{Name: "a.b-c_d", Z: 1, X: 1, Y: 1, Ext: "webp"}},
		{"/tiles/p/abc/0/0.png", reqTile, true, tileReq{}},
		{"/tiles/p/32/0/0.png", reqTile, true, tileReq{}},
		{"/tiles/p/3/8/0.png", reqTile, true, tileReq{}},
		{"/tiles/p/3/0/8.png", reqTile, true, tileReq{}},
		{"/tiles/p/00000000003/0/0.png", reqTile, true, tileReq{}},
		{"/tiles/p/3/0/00000000001.png", reqTile, true, tileReq{}},
		{"/tiles/p/99999999999/0/0.png", reqTile, true, tileReq{}},
		{"/tiles/p//0/0.png", reqTile, true, tileReq{}},
		{"/tiles/p/-1/0/0.png", reqTile, true, tileReq{}},
		{"/tiles/p/+1/0/0.png", reqTile, true, tileReq{}},
		{"/tiles/p/%31/0/0.png", reqTile, true, tileReq{}},
		{"/tiles/p/0/0/0", reqTile, true, tileReq{}},
		{"/tiles/p/0/0/0.", reqTile, true, tileReq{}},
		{"/tiles/p/0/0/0.png.gz", reqTile, true, tileReq{}},
		{"/tiles/p/0/0/0.p%6Eg", reqTile, true, tileReq{}},
		{"/tiles/p/0/0/.png", reqTile, true, tileReq{}},
		{"/tiles/p/0/0/0x.png", reqTile, true, tileReq{}},
		{"/tiles/p.json", reqTileJSON, false, tileReq{Name: "p"}},
		{"/tiles/p.json.json", reqTileJSON, false, tileReq{Name: "p.json"}},
		{"/tiles/.json", reqNone, false, tileReq{}},
		{"/tiles/p", reqNone, false, tileReq{}},
		{"/tiles/", reqNone, false, tileReq{}},
		{"/tiles/p/0/0.png", reqNone, false, tileReq{}},
		{"/tiles/p/0/0/0/0.png", reqNone, false, tileReq{}},
		{"/tiles//0/0/0.png", reqNone, false, tileReq{}},
		{"/tiles/p/0/0/0.png/", reqNone, false, tileReq{}},
		{"/other/p/0/0/0.png", reqNone, false, tileReq{}},
	} {
		kind, tr, err := parsePath(c.path)
		if kind != c.kind || (err != nil) != c.bad {
			t.Errorf("%s: kind %d err %v, want kind %d bad %v", c.path, kind, err, c.kind, c.bad)
			continue
		}
		if err == nil && tr != c.want {
			t.Errorf("%s: %+v, want %+v", c.path, tr, c.want)
		}
	}
}

func TestParsePacksPath(t *testing.T) {
	for _, c := range []struct {
		path    string
		listing bool
		name    string
		ok      bool
	}{
		{"/packs", true, "", true},
		{"/packs/p.pmtiles", false, "p", true},
		{"/packs/a.b.pmtiles", false, "a.b", true},
		{"/packs/p.mbtiles", false, "", false},
		{"/packs/.pmtiles", false, "", false},
		{"/packs/", false, "", false},
		{"/packs/p", false, "", false},
		{"/packs/d/p.pmtiles", false, "", false},
		{"/packsx", false, "", false},
	} {
		listing, name, ok := parsePacksPath(c.path)
		if listing != c.listing || ok != c.ok || (ok && name != c.name) {
			t.Errorf("%s: %v %q %v", c.path, listing, name, ok)
		}
	}
}

// FuzzTilePath: the parser never panics; an accepted tile path has
// coordinates in range and re-renders to itself up to leading zeros.
func FuzzTilePath(f *testing.F) {
	for _, s := range []string{"/tiles/p/0/0/0.png", "/tiles/p/31/2147483647/0.mvt", "/tiles/p.json",
		"/tiles/p/abc/0/0.png", "/tiles/p/32/0/0.png", "/tiles/p/3/8/0.png", "/tiles/p/00000000003/0/0.png",
		"/tiles/p/0/0/0", "/tiles//0/0/0.png", "/tiles/p/0/0/0.png.gz", "/tiles/%2e%2e/0/0/0.png"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, path string) {
		kind, tr, err := parsePath(path)
		switch kind {
		case reqNone:
			if err != nil || tr != (tileReq{}) {
				t.Fatalf("%q: none with %v %+v", path, err, tr)
			}
			return
		case reqTileJSON:
			if err != nil || path != "/tiles/"+tr.Name+".json" || tr.Name == "" || strings.Contains(tr.Name, "/") {
				t.Fatalf("%q: tilejson %+v %v", path, tr, err)
			}
			return
		}
		if err != nil {
			if !errors.Is(err, errBadTile) {
				t.Fatalf("%q: %v", path, err)
			}
			return
		}
		if tr.Z > MaxZoom || uint64(tr.X) >= 1<<tr.Z || uint64(tr.Y) >= 1<<tr.Z || !validExt(tr.Ext) || tr.Name == "" {
			t.Fatalf("%q: accepted %+v", path, tr)
		}
		seg := strings.Split(strings.TrimPrefix(path, "/tiles/"), "/")
		y, _, _ := strings.Cut(seg[3], ".")
		for i, want := range []uint32{tr.Z, tr.X, tr.Y} {
			s := []string{seg[1], seg[2], y}[i]
			if n, err := strconv.ParseUint(s, 10, 32); err != nil || uint32(n) != want || len(s) > maxDigits {
				t.Fatalf("%q: part %q parsed as %d", path, s, want)
			}
		}
		if seg[0] != tr.Name || !strings.HasSuffix(path, "."+tr.Ext) {
			t.Fatalf("%q: %+v", path, tr)
		}
	})
}
