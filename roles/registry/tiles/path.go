package tiles

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Tile geometry (C2SP tlog-tiles).
const (
	// TileHeight is the number of tree levels one tile spans.
	TileHeight = 8
	// TileWidth is the number of hashes in a full tile.
	TileWidth = 1 << TileHeight
	// HashSize is the size of one hash in a tile.
	HashSize = 32
	// FullTileSize is the byte length of a full tile.
	FullTileSize = TileWidth * HashSize
	// MaxLevel is the highest tile level a path may name.
	MaxLevel = 63
)

// maxGroups bounds the 3-digit groups of an index: math.MaxUint64 has 20
// decimal digits.
const maxGroups = 7

// TilePath names one hash tile (Level, Index) or entry bundle (Entries,
// Index), full when Width is 0 or partial with Width hashes or entries
// (1–255). Entry bundles have Level 0.
type TilePath struct {
	Level   uint8
	Index   uint64
	Width   int
	Entries bool
}

// ParseTilePath parses the part of a C2SP tlog-tiles URL after "tile/":
// "<L>/<N>[.p/<W>]" or "entries/<N>[.p/<W>]". L is 0–63 and W 1–255, both
// decimal without leading zeros; N is written in zero-padded 3-digit groups,
// all but the last prefixed with "x", with no leading "x000" group (1234067 →
// "x001/x234/067"). Anything else, including an index beyond uint64, wraps
// ErrBadPath. For every accepted p, ParseTilePath(p).String() == p.
func ParseTilePath(p string) (TilePath, error) {
	head, rest, ok := strings.Cut(p, "/")
	if !ok {
		return TilePath{}, badPath(p, "no index")
	}
	var tp TilePath
	if head == "entries" {
		tp.Entries = true
	} else {
		l, ok := parseSmall(head, MaxLevel)
		if !ok {
			return TilePath{}, badPath(p, "level")
		}
		tp.Level = uint8(l)
	}
	idx, w, partial := strings.Cut(rest, ".p/")
	if partial {
		width, ok := parseSmall(w, TileWidth-1)
		if !ok || width == 0 {
			return TilePath{}, badPath(p, "width")
		}
		tp.Width = width
	}
	n, ok := parseIndex(idx)
	if !ok {
		return TilePath{}, badPath(p, "index")
	}
	tp.Index = n
	return tp, nil
}

func badPath(p, what string) error {
	return fmt.Errorf("%w: %q: %s", ErrBadPath, p, what)
}

// parseSmall parses a decimal in [0, max] with no sign and no leading zeros.
func parseSmall(s string, max int) (int, bool) {
	if s == "" || len(s) > 3 || (len(s) > 1 && s[0] == '0') || !allDigits(s) {
		return 0, false
	}
	v, _ := strconv.Atoi(s)
	return v, v <= max
}

// parseIndex parses the grouped tile index "xNNN/…/NNN".
func parseIndex(s string) (uint64, bool) {
	groups := strings.Split(s, "/")
	if len(groups) > maxGroups {
		return 0, false
	}
	var n uint64
	for i, g := range groups {
		last := i == len(groups)-1
		if !last {
			var ok bool
			if g, ok = strings.CutPrefix(g, "x"); !ok || (i == 0 && g == "000") {
				return 0, false
			}
		}
		if len(g) != 3 || !allDigits(g) {
			return 0, false
		}
		v, _ := strconv.ParseUint(g, 10, 64)
		if n > (math.MaxUint64-v)/1000 {
			return 0, false
		}
		n = n*1000 + v
	}
	return n, true
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// String formats p in canonical tlog-tiles syntax (without "tile/"). It is
// the inverse of ParseTilePath for every valid TilePath; for an invalid one
// (Level > 63, Width outside 0–255) the result does not parse.
func (p TilePath) String() string {
	var b strings.Builder
	if p.Entries {
		b.WriteString("entries/")
	} else {
		b.WriteString(strconv.Itoa(int(p.Level)))
		b.WriteByte('/')
	}
	b.WriteString(formatIndex(p.Index))
	if p.Width != 0 {
		b.WriteString(".p/")
		b.WriteString(strconv.Itoa(p.Width))
	}
	return b.String()
}

// formatIndex writes n as 3-digit groups, all but the last prefixed "x".
func formatIndex(n uint64) string {
	groups := []string{fmt.Sprintf("%03d", n%1000)}
	for n /= 1000; n > 0; n /= 1000 {
		groups = append(groups, fmt.Sprintf("x%03d", n%1000))
	}
	var b strings.Builder
	for i := len(groups) - 1; i >= 0; i-- {
		b.WriteString(groups[i])
		if i > 0 {
			b.WriteByte('/')
		}
	}
	return b.String()
}

// Valid reports whether p is a path ParseTilePath accepts: Level ≤ 63 (0
// for entries) and Width 0–255.
func (p TilePath) Valid() bool {
	return p.Level <= MaxLevel && p.Width >= 0 && p.Width < TileWidth && !(p.Entries && p.Level != 0)
}

// width returns the number of hashes or entries p names.
func (p TilePath) width() uint64 {
	if p.Width == 0 {
		return TileWidth
	}
	return uint64(p.Width)
}

// End returns the index, within p's level, one past the last hash (or for
// entries, leaf) that p names: 256·Index + width, saturating at
// math.MaxUint64. A bundle whose End is ≤ min_index lies wholly below it.
func (p TilePath) End() uint64 {
	if p.Index > (math.MaxUint64-TileWidth)/TileWidth {
		return math.MaxUint64
	}
	return p.Index*TileWidth + p.width()
}

// Covered reports whether a tree of the given size holds everything p names
// (docs/registry.md §5): a full tile (L, N) once (N+1)·256^(L+1) ≤ size, a
// partial one while ⌊size/256^L⌋ − 256·N ≥ W. Entry bundles count leaves
// (level 0). An invalid p is never covered.
func (p TilePath) Covered(size uint64) bool {
	if !p.Valid() {
		return false
	}
	count := levelCount(size, p.Level)
	if p.Index > count/TileWidth {
		return false
	}
	return count-p.Index*TileWidth >= p.width()
}

// levelCount is the number of level-L hashes in a tree of size leaves:
// ⌊size/256^L⌋.
func levelCount(size uint64, level uint8) uint64 {
	shift := uint(level) * TileHeight
	if shift >= 64 {
		return 0
	}
	return size >> shift
}
