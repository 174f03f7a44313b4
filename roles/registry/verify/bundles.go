package verify

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"

	"golang.org/x/mod/sumdb/tlog"
)

// parseBundle splits a C2SP entry bundle into its leaves: each a
// big-endian u16 length followed by that many bytes, at most 256 of them.
func parseBundle(b []byte) ([][]byte, error) {
	var out [][]byte
	for len(b) > 0 {
		if len(b) < 2 {
			return nil, errors.New("truncated length prefix")
		}
		n := int(binary.BigEndian.Uint16(b))
		if len(b)-2 < n {
			return nil, fmt.Errorf("leaf %d truncated: %d of %d bytes", len(out), len(b)-2, n)
		}
		if len(out) == tileWidth {
			return nil, errors.New("more than 256 entries")
		}
		out = append(out, b[2:2+n])
		b = b[2+n:]
	}
	return out, nil
}

// width is the number of entries tile (or bundle) n holds at a level of
// count entries: 256, or fewer for the rightmost partial tile.
func width(count, n uint64) int {
	return int(min(tileWidth, count-n*tileWidth))
}

// checkLeaves fetches every entry bundle from min_index's to the last,
// runs the chain checks on each leaf from min_index on, records its leaf
// hash and compares the level-0 tile of the same index at once, so a
// mismatch is reported at the first version it affects.
func (r *run) checkLeaves(ctx context.Context) error {
	size := r.cp.Size
	for b := r.minIndex / tileWidth; b*tileWidth < size; b++ {
		t := tlog.Tile{H: tileHeight, L: -1, N: int64(b), W: width(size, b)}
		if err := r.checkBundle(ctx, t); err != nil {
			return err
		}
		if err := r.compareTile(ctx, 0, b, false); err != nil {
			return err
		}
		if b%64 == 63 {
			fmt.Fprintf(r.opt.Progress, "verified through version %d of %d\n", (b+1)*tileWidth-1, size-1)
		}
	}
	return nil
}

// checkBundle fetches bundle t and checks its leaves.
func (r *run) checkBundle(ctx context.Context, t tlog.Tile) error {
	first := uint64(t.N) * tileWidth
	data, err := r.f.get(ctx, tileURLPath(t), maxBundle)
	if err != nil {
		return err
	}
	leaves, err := parseBundle(data)
	if err != nil {
		return atVersion(first, CheckBundle, "entry bundle %d: %v", t.N, err)
	}
	if len(leaves) != t.W {
		return atVersion(first, CheckBundle, "entry bundle %d holds %d leaves, want %d", t.N, len(leaves), t.W)
	}
	for j, leaf := range leaves {
		v := first + uint64(j)
		if v < r.minIndex {
			continue
		}
		if m := r.chain.check(v, leaf); m != nil {
			return m
		}
		r.levels.setLeaf(v, tlog.RecordHash(leaf))
		r.res.Verified++
	}
	return nil
}
