package vfetch

import (
	"errors"
	"net/http"
	"testing"

	"github.com/ronhq/ron/httpx/ranges"
	"github.com/ronhq/ron/store/verified"
	"github.com/ronhq/ron/store/verified/vfetch/vfetchtest"
)

// ProveSize reads the last group once (the whole object when it has one
// group, nothing for the empty object), records the size, and answers from
// Sizes afterwards; Outboard then refuses an outboard stating another size
// before any body request.
func TestProveSize(t *testing.T) {
	for _, tc := range []struct {
		name string
		size int
		rng  string // the proof's Range; "-": no request
	}{
		{"four groups", 3*cs + 10, "bytes=196608-196617"},
		{"one group", 100, ""},
		{"empty", 0, "-"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data, id := pattern(tc.size)
			n := &fakeNet{answer: source(data, "")}
			r := n.requester()
			r.Sizes = verified.NewSizes(0)
			tr, err := r.Outboard(t.Context(), "http://s.test", id)
			if err != nil {
				t.Fatal(err)
			}
			for range 2 {
				if err := r.ProveSize(t.Context(), "http://s.test", tr); err != nil {
					t.Fatal(err)
				}
			}
			reqs := n.requests()[1:]
			switch {
			case tc.rng == "-" && len(reqs) != 0:
				t.Fatalf("%d requests for the empty object", len(reqs))
			case tc.rng != "-" && (len(reqs) != 1 || reqs[0].Header.Get("Range") != tc.rng):
				t.Fatalf("%d requests, Range %q", len(reqs), reqs[0].Header.Get("Range"))
			}
			if proven, err := r.Sizes.Check(tr); !proven || err != nil {
				t.Fatalf("not recorded: %v", err)
			}
		})
	}
}

// Every size liar fails the proof as a mismatch; once the true size is
// proven, its outboard is refused before any body request.
func TestProveSizeLiars(t *testing.T) {
	data, id := pattern(5*cs + 1234)
	honest := &fakeNet{answer: source(data, "")}
	sizes := verified.NewSizes(0)
	for _, l := range vfetchtest.SizeLiars(data) {
		t.Run(l.Name, func(t *testing.T) {
			n := &fakeNet{answer: serve(l.Object, "")}
			r := n.requester()
			r.Sizes = verified.NewSizes(0)
			tr, err := r.Outboard(t.Context(), "http://s.test", id)
			if err != nil || tr.Size != int64(len(l.Data)) {
				t.Fatalf("the liar's outboard: %v, size %d", err, tr.Size)
			}
			if err := r.ProveSize(t.Context(), "http://s.test", tr); !errors.Is(err, verified.ErrMismatch) {
				t.Fatalf("proof: %v", err)
			}
			if proven, _ := r.Sizes.Check(tr); proven {
				t.Fatal("a failed proof was recorded")
			}
			r.Sizes = sizes
			good := honest.requester()
			good.Sizes = sizes
			if tr, err := good.Outboard(t.Context(), "http://s.test", id); err != nil || good.ProveSize(t.Context(), "http://s.test", tr) != nil {
				t.Fatalf("honest: %v", err)
			}
			before := len(n.requests())
			if _, err := r.Outboard(t.Context(), "http://s.test", id); !errors.Is(err, verified.ErrMismatch) || len(n.requests()) != before+1 {
				t.Fatalf("the liar's outboard after the proof: %v, %d requests", err, len(n.requests())-before)
			}
		})
	}
}

// A Body that released the object's last group records the size; one
// that stopped before it does not.
func TestBodyRecordsSize(t *testing.T) {
	data, id := pattern(2*cs + 5)
	n := &fakeNet{answer: source(data, "")}
	for _, row := range []struct {
		first, last int
		proven      bool
	}{{0, 1, false}, {2, 2, true}, {0, 2, true}} {
		r := n.requester()
		r.Sizes = verified.NewSizes(0)
		tr, err := r.Outboard(t.Context(), "http://s.test", id)
		if err != nil {
			t.Fatal(err)
		}
		b, err := r.Open(t.Context(), "http://s.test", tr, row.first, row.last)
		if err != nil {
			t.Fatal(err)
		}
		for range row.last - row.first + 1 {
			if _, err := b.Next(); err != nil {
				t.Fatal(err)
			}
		}
		b.Close()
		if proven, _ := r.Sizes.Check(tr); proven != row.proven {
			t.Fatalf("groups %d..%d: proven %v", row.first, row.last, proven)
		}
	}
}

// StatesUnproven: a 416, and a 206 none of whose ranges reaches the last
// group; not a 200, 304 or 412, nor a 206 with a range in the last group.
func TestStatesUnproven(t *testing.T) {
	data, _ := pattern(3*cs + 10) // the last group starts at 196608
	tr := verified.TreeOf(data)
	rng := func(start, n int64) ranges.ByteRange { return ranges.ByteRange{Start: start, Length: n} }
	for _, tc := range []struct {
		plan ranges.Plan
		want bool
	}{
		{ranges.Plan{Status: http.StatusRequestedRangeNotSatisfiable}, true},
		{ranges.Plan{Status: http.StatusPartialContent, Ranges: []ranges.ByteRange{rng(0, 1)}}, true},
		{ranges.Plan{Status: http.StatusPartialContent, Ranges: []ranges.ByteRange{rng(cs, 2*cs)}}, true},
		{ranges.Plan{Status: http.StatusPartialContent, Ranges: []ranges.ByteRange{rng(cs, 2*cs+1)}}, false},
		{ranges.Plan{Status: http.StatusPartialContent, Ranges: []ranges.ByteRange{rng(0, 1), rng(3*cs+9, 1)}}, false},
		{ranges.Plan{Status: http.StatusPartialContent, Ranges: []ranges.ByteRange{rng(0, 1), rng(5, 1)}}, true},
		{ranges.Plan{Status: http.StatusOK}, false},
		{ranges.Plan{Status: http.StatusNotModified}, false},
		{ranges.Plan{Status: http.StatusPreconditionFailed}, false},
	} {
		if got := StatesUnproven(tc.plan, tr); got != tc.want {
			t.Errorf("%d %v: %v", tc.plan.Status, tc.plan.Ranges, got)
		}
	}
}

// The tests' oracle (vfetchtest.Range.StatesClaim) agrees with
// StatesUnproven on the plans of the size tests' ranges under every lie.
func TestStatesClaimOracle(t *testing.T) {
	data, id := pattern(5*cs + 1234)
	for _, l := range vfetchtest.SizeLiars(data) {
		claim, err := verified.ParseTree(l.Outboard, id)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range vfetchtest.SizeRanges(int64(len(data))) {
			req, _ := http.NewRequest(http.MethodGet, "http://x.test/", nil)
			req.Header.Set("Range", r.Header())
			plan := ranges.NewPlan(req, claim.Size, `"x"`, "", 1)
			if StatesUnproven(plan, claim) != r.StatesClaim(claim) {
				t.Fatalf("%s, %s: %d %v", l.Name, r.Header(), plan.Status, plan.Ranges)
			}
		}
	}
}
