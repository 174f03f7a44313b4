package verify

import (
	"context"
	"fmt"
	"strings"

	"golang.org/x/mod/sumdb/tlog"
)

// tileURLPath maps a tlog tile to the registry route serving it: tlog's
// "tile/8/L/N[.p/W]" is "/registry/log/tile/L/N[.p/W]" and its data tile
// "tile/8/data/N[.p/W]" the entry bundle "/registry/log/tile/entries/N[.p/W]".
// Both sides write N in the same 3-digit x-prefixed groups.
func tileURLPath(t tlog.Tile) string {
	p := strings.TrimPrefix(t.Path(), fmt.Sprintf("tile/%d/", t.H))
	if rest, ok := strings.CutPrefix(p, "data/"); ok {
		return "/registry/log/tile/entries/" + rest
	}
	return "/registry/log/tile/" + p
}

// tileReader is the tlog.TileReader adapter over the registry's HTTP tile
// routes. tlog's interface carries no context, so the adapter holds the
// run's; each request is still bounded by the fetcher's timeout.
type tileReader struct {
	ctx context.Context
	f   *fetcher
}

// Height is the registry's tile height, 8.
func (r *tileReader) Height() int { return tileHeight }

// ReadTiles fetches each tile; tlog authenticates them against the tree
// it was given before returning any hash.
func (r *tileReader) ReadTiles(tiles []tlog.Tile) ([][]byte, error) {
	out := make([][]byte, len(tiles))
	for i, t := range tiles {
		data, err := r.f.get(r.ctx, tileURLPath(t), maxTile)
		if err != nil {
			return nil, err
		}
		if len(data) != t.W*tlog.HashSize {
			return nil, mismatch(CheckTile, "%s: %d bytes, want %d", tileURLPath(t), len(data), t.W*tlog.HashSize)
		}
		out[i] = data
	}
	return out, nil
}

// SaveTiles does nothing: the verifier keeps no tile cache.
func (r *tileReader) SaveTiles([]tlog.Tile, [][]byte) {}

// hashReader returns tlog's authenticating HashReader for tree over HTTP.
func (f *fetcher) hashReader(ctx context.Context, tree tlog.Tree) tlog.HashReader {
	return tlog.TileHashReader(tree, &tileReader{ctx: ctx, f: f})
}
