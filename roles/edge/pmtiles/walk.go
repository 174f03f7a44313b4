package pmtiles

import (
	"context"
	"fmt"
)

// VerifyFull runs the full checks of docs/edge.md §4.2: every leaf directory
// reachable from the root decodes, is not empty, lies inside the leaf
// section, and at most MaxLeafLevels levels deep; every tile entry lies
// inside the tile-data section. Leaves are decoded directly, not through the
// DirCache. ctx bounds the walk (checked before each leaf).
func (r *Reader) VerifyFull(ctx context.Context) error {
	return r.Entries(ctx, nil)
}

// Entries walks every directory reachable from the root depth-first, in
// directory order, verifying as VerifyFull does, and calls fn (when not nil)
// for each tile entry (RunLength > 0). A leaf directory referenced more than
// once at the same depth is walked once. An error from fn stops the walk and
// is returned.
func (r *Reader) Entries(ctx context.Context, fn func(Entry) error) error {
	w := walker{r: r, ctx: ctx, fn: fn, seen: make(map[visit]bool)}
	return w.dir(r.root, 0)
}

type visit struct {
	offset uint64
	length uint32
	depth  int
}

type walker struct {
	r    *Reader
	ctx  context.Context
	fn   func(Entry) error
	seen map[visit]bool
}

// dir walks the entries of one directory found at depth (0 = root).
func (w *walker) dir(es []Entry, depth int) error {
	for _, e := range es {
		if !e.IsLeaf() {
			if w.fn != nil {
				if err := w.fn(e); err != nil {
					return err
				}
			}
			continue
		}
		if depth == MaxLeafLevels {
			return fmt.Errorf("%w: leaf entry for tile %d at level %d", ErrDepth, e.TileID, depth)
		}
		v := visit{e.Offset, e.Length, depth + 1}
		if w.seen[v] {
			continue
		}
		w.seen[v] = true
		leaf, err := w.r.loadLeaf(w.ctx, e)
		if err != nil {
			return err
		}
		if err := w.dir(leaf, depth+1); err != nil {
			return err
		}
	}
	return nil
}
