package verified

import (
	lru "github.com/hashicorp/golang-lru/v2"

	"github.com/ronhq/ron/store"
	"github.com/ronhq/ron/store/bao"
)

// DefaultSizes is the capacity of a Sizes built with NewSizes(0): a few
// thousand objects, about 100 bytes each.
const DefaultSizes = 4096

// Sizes remembers the sizes that reads proved: object id → size, for ids
// whose last group verified against the id under an outboard stating that
// size (see the package doc: only that group proves the size). It is
// bounded (least recently used evicted first), safe for concurrent use, and
// a nil *Sizes knows nothing and records nothing.
type Sizes struct {
	c *lru.Cache[store.ID, int64]
}

// NewSizes returns an empty Sizes holding at most n ids (n ≤ 0:
// DefaultSizes).
func NewSizes(n int) *Sizes {
	if n <= 0 {
		n = DefaultSizes
	}
	c, _ := lru.New[store.ID, int64](n) // only a size ≤ 0 errors
	return &Sizes{c: c}
}

// Add records size as id's proven size. Callers add only what a verified
// last group proved (a Reader that released the object's last byte) or
// what the id itself proves (size 0 for the empty object).
func (s *Sizes) Add(id store.ID, size int64) {
	if s != nil {
		s.c.Add(id, size)
	}
}

// Check compares the size t states with what is known of t.ID: recorded by
// Add, or 0 for the empty object's id (which proves it). proven is true
// when t.Size is that size. When another size is known, t's outboard is not
// the object's: err is a *MismatchError naming t's last group, which can
// never verify. (false, nil): nothing is known; only reading t's last group
// proves t.Size.
func (s *Sizes) Check(t Tree) (proven bool, err error) {
	known, ok := int64(0), t.ID == emptyID
	if !ok && s != nil {
		known, ok = s.c.Get(t.ID)
	}
	switch {
	case !ok:
		return false, nil
	case known != t.Size:
		return false, &MismatchError{Group: int64(max(t.Count()-1, 0))}
	}
	return true, nil
}

// ReachesLast reports whether a read of t's object that ends at byte end
// (inclusive) reads the last group, and so proves t.Size when it completes.
// An answer that states t.Size (a 206's Content-Range total, a 416's
// "bytes */N") and ends before the last group needs t.Size proven first
// (Sizes.Check, or a read of the last group: vfetch's ProveSize).
func (t Tree) ReachesLast(end int64) bool {
	return t.Size > 0 && end >= int64(t.Count()-1)*bao.GroupSize
}
