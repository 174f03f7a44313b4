package vfetch

import (
	"context"
	"io"
	"net/http"

	"github.com/ronhq/ron/httpx/ranges"
	"github.com/ronhq/ron/store/verified"
)

// ProveSize proves t.Size, the size t's outboard states, before an answer
// states it without reading the last group (see StatesUnproven): it fetches
// the object's last group from base — the Range of that group, or the whole
// object when it has one group — and verifies it against t.ID
// (verified.Reader: the group's length and chaining value depend on the
// size, so a false size is a *verified.MismatchError, or ErrShort, ErrLong
// or ErrProtocol when the source frames it otherwise). It needs no request
// when Sizes knows the id (a contradicting size is a mismatch at once), nor
// for the empty object, whose size ParseTree proved; a proof is recorded in
// Sizes (by Body.Next). The request is one of at most 64 KiB, bounded like
// every other (Timeout to its headers, then for the group).
func (r *Requester) ProveSize(ctx context.Context, base string, t verified.Tree) error {
	if proven, err := r.Sizes.Check(t); proven || err != nil || t.Count() == 0 {
		return err
	}
	last := t.Count() - 1
	b, err := r.Open(ctx, base, t, last, last)
	if err != nil {
		return err
	}
	defer b.Close()
	for err == nil {
		_, err = b.Next() // the last group's release records the size
	}
	if err == io.EOF {
		return nil
	}
	return err
}

// StatesUnproven reports whether the answer plan describes, about the
// object whose outboard gave t, states t.Size before reading t's last
// group: a 416 ("bytes */N"), or a 206 none of whose ranges reaches the
// last group (their Content-Range totals). Such an answer needs ProveSize
// first. A whole answer, or one with a range in the last group, reads that
// group before it ends, so a false size cuts it short instead.
func StatesUnproven(plan ranges.Plan, t verified.Tree) bool {
	switch plan.Status {
	case http.StatusRequestedRangeNotSatisfiable:
		return true
	case http.StatusPartialContent:
		for _, r := range plan.Ranges {
			if t.ReachesLast(r.End()) {
				return false
			}
		}
		return true
	}
	return false
}
