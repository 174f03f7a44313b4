package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/ronhq/ron/roles/edge/pmtiles"
)

// extensions is the first URL extension of each PMTiles tile type
// (docs/edge.md §6.2).
var extensions = map[pmtiles.TileType]string{
	pmtiles.TileTypeMVT: "mvt", pmtiles.TileTypePNG: "png", pmtiles.TileTypeJPEG: "jpg",
	pmtiles.TileTypeWebP: "webp", pmtiles.TileTypeAVIF: "avif", pmtiles.TileTypeMLT: "mlt",
}

// ExtOf returns the URL extension of tile type tt: the first of docs/edge.md §6.2, or
// "bin" for unknown types.
func ExtOf(tt pmtiles.TileType) string {
	if ext, ok := extensions[tt]; ok {
		return ext
	}
	return "bin"
}

// Dump writes every tile of the archive at path under dir as
// <z>/<x>/<y>.<ext> with its stored bytes, and returns those relative
// paths (slash-separated) in tile id order. The archive must pass the
// basic and full checks of the reader, and its tiles must be stored
// uncompressed.
func Dump(path, dir string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	ctx := context.Background()
	r, err := pmtiles.Open(ctx, f, st.Size(), pmtiles.Options{})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	h := r.Header()
	if c := h.TileCompression; c != pmtiles.CompressionNone && c != pmtiles.CompressionUnknown {
		return nil, fmt.Errorf("%s: tiles are stored with %s compression; only uncompressed archives can be served as static files", path, c)
	}
	d := dumper{r: r, dir: dir, ext: ExtOf(h.TileType)}
	if err := r.Entries(ctx, d.entry); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return d.written, nil
}

// dumper writes the tiles of one archive.
type dumper struct {
	r       *pmtiles.Reader
	dir     string
	ext     string
	written []string
}

// entry writes every tile id of one tile entry (a run shares its bytes).
func (d *dumper) entry(e pmtiles.Entry) error {
	ctx := context.Background()
	for id := e.TileID; id < e.TileID+uint64(e.RunLength); id++ {
		ref, ok, err := d.r.TileByID(ctx, id)
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("tile id %d of an entry is not found by a lookup", id)
		}
		data, err := d.r.ReadTile(ctx, ref)
		if err != nil {
			return err
		}
		if err := d.write(id, data); err != nil {
			return err
		}
	}
	return nil
}

// write stores one tile's bytes under its z/x/y path.
func (d *dumper) write(id uint64, data []byte) error {
	z, x, y, err := pmtiles.TileZXY(id)
	if err != nil {
		return err
	}
	rel := fmt.Sprintf("%d/%d/%d.%s", z, x, y, d.ext)
	p := filepath.Join(d.dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(p, data, 0o644); err != nil {
		return err
	}
	d.written = append(d.written, rel)
	return nil
}
