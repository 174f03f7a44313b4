package verified_test

import (
	"errors"
	"testing"

	"github.com/ronhq/ron/store"
	"github.com/ronhq/ron/store/storetest"
	"github.com/ronhq/ron/store/verified"
)

// Sizes knows what was added (the empty object's size without it), refuses
// another size for a known id as the stated last group's mismatch, and
// forgets the least recently used id first.
func TestSizes(t *testing.T) {
	tr := verified.TreeOf(storetest.Pattern(3*cs + 10)) // 4 groups
	lie := tr
	lie.Size = 3*cs + 11
	empty := verified.TreeOf(nil)
	emptyLie := empty
	emptyLie.Size = 5
	s := verified.NewSizes(2)
	var none *verified.Sizes
	for _, tc := range []struct {
		name   string
		s      *verified.Sizes
		t      verified.Tree
		proven bool
		bad    int64 // the mismatching group; -1: no error
	}{
		{"unknown", s, tr, false, -1},
		{"nil knows nothing", none, tr, false, -1},
		{"the empty object", none, empty, true, -1},
		{"the empty object's id, another size", none, emptyLie, false, 0},
	} {
		proven, err := tc.s.Check(tc.t)
		var me *verified.MismatchError
		if proven != tc.proven || (tc.bad < 0) != (err == nil) || err != nil && (!errors.As(err, &me) || me.Group != tc.bad) {
			t.Fatalf("%s: %v, %v", tc.name, proven, err)
		}
	}
	s.Add(tr.ID, tr.Size)
	none.Add(tr.ID, tr.Size) // a no-op
	if proven, err := s.Check(tr); !proven || err != nil {
		t.Fatalf("added: %v, %v", proven, err)
	}
	var me *verified.MismatchError
	if proven, err := s.Check(lie); proven || !errors.As(err, &me) || me.Group != 3 {
		t.Fatalf("another size: %v, %v", proven, err)
	}
	s.Add(store.ID{1}, 1)
	s.Add(store.ID{2}, 2)
	if proven, err := s.Check(tr); proven || err != nil {
		t.Fatalf("evicted: %v, %v", proven, err)
	}
	if verified.NewSizes(0) == nil {
		t.Fatal("NewSizes(0)")
	}
}

// ReachesLast: only reads ending in the last group prove the size.
func TestReachesLast(t *testing.T) {
	tr := verified.TreeOf(storetest.Pattern(3*cs + 10)) // groups 0..3
	one := verified.TreeOf([]byte("x"))
	for _, tc := range []struct {
		t    verified.Tree
		end  int64
		want bool
	}{
		{tr, 0, false}, {tr, 3*cs - 1, false}, {tr, 3 * cs, true}, {tr, 3*cs + 9, true},
		{one, 0, true}, {verified.TreeOf(nil), 0, false},
	} {
		if got := tc.t.ReachesLast(tc.end); got != tc.want {
			t.Errorf("size %d, end %d: %v", tc.t.Size, tc.end, got)
		}
	}
}
