package verify

import (
	"context"
	"math/rand/v2"
	"testing"

	"golang.org/x/mod/sumdb/tlog"
)

// TestTLogProofs: note.Open opens two checkpoints of a growing log, and
// tlog.TileHashReader over the HTTP adapter drives ProveRecord/CheckRecord
// on random versions and ProveTree/CheckTree across the two checkpoints
// (docs/registry.md §10 External).
func TestTLogProofs(t *testing.T) {
	leaves := cachedLeaves(t, 600)
	f := newFixture(t, leaves[:300])
	ctx := context.Background()
	fe := &fetcher{base: f.srv.URL, hc: f.srv.Client(), opt: Options{RequestTimeout: DefaultRequestTimeout}}
	cp1, err := ParseCheckpoint(f.tree.Checkpoint().Note, f.key.Verifier())
	if err != nil || cp1.Size != 300 {
		t.Fatalf("checkpoint 1: %+v %v", cp1, err)
	}
	f.extend(t, leaves[300:])
	cp2, err := ParseCheckpoint(f.tree.Checkpoint().Note, f.key.Verifier())
	if err != nil || cp2.Size != 600 {
		t.Fatalf("checkpoint 2: %+v %v", cp2, err)
	}
	thr := fe.hashReader(ctx, tlog.Tree{N: 600, Hash: cp2.Root})
	rng := rand.New(rand.NewPCG(1, 2))
	for range 40 {
		v := rng.Int64N(600)
		p, err := tlog.ProveRecord(600, v, thr)
		if err != nil {
			t.Fatalf("ProveRecord(%d): %v", v, err)
		}
		if err := tlog.CheckRecord(p, 600, cp2.Root, v, tlog.RecordHash(leaves[v])); err != nil {
			t.Fatalf("CheckRecord(%d): %v", v, err)
		}
		if err := tlog.CheckRecord(p, 600, cp2.Root, v, tlog.RecordHash(leaves[(v+1)%600])); err == nil {
			t.Fatalf("CheckRecord(%d) accepted another leaf", v)
		}
	}
	p, err := tlog.ProveTree(600, 300, thr)
	if err != nil {
		t.Fatal(err)
	}
	if err := tlog.CheckTree(p, 600, cp2.Root, 300, cp1.Root); err != nil {
		t.Fatalf("CheckTree: %v", err)
	}
	if err := tlog.CheckTree(p, 600, cp2.Root, 300, cp2.Root); err == nil {
		t.Fatal("CheckTree accepted a wrong old root")
	}
	// A swapped tile makes tlog's authenticating reader refuse.
	f.hooks.tile = func(level uint8, n uint64, b []byte) []byte {
		if level == 0 && n == 1 {
			return swap(b, 0, 1)
		}
		return b
	}
	thr = fe.hashReader(ctx, tlog.Tree{N: 600, Hash: cp2.Root})
	if _, err := tlog.ProveRecord(600, 300, thr); err == nil {
		t.Fatal("ProveRecord over a swapped tile succeeded")
	}
}
