package pmtiles_test

import (
	"bytes"
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/ronhq/ron/roles/edge/pmtiles"
	"github.com/ronhq/ron/roles/edge/pmtiles/pmtilestest"
)

// gatedReader counts reads of the leaf section and, while gate is open
// (not closed), blocks them until it is closed.
type gatedReader struct {
	b         *bytes.Reader
	leafFrom  int64
	leafTo    int64
	gate      chan struct{}
	leafReads atomic.Int64
}

func newGated(b []byte) *gatedReader {
	h, _ := pmtiles.ParseHeader(b)
	return &gatedReader{b: bytes.NewReader(b), leafFrom: int64(h.LeafOffset), leafTo: int64(h.LeafOffset + h.LeafLength),
		gate: make(chan struct{})}
}

func (g *gatedReader) ReadAt(p []byte, off int64) (int, error) {
	if off >= g.leafFrom && off < g.leafTo {
		g.leafReads.Add(1)
		<-g.gate
	}
	return g.b.ReadAt(p, off)
}

// 50 concurrent cold lookups of one leaf decode it once; the others wait
// for that load (no goroutine is started for them) and count as hits.
func TestDirCacheCoalesces(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := mustBuild(t, pyramid(3), pmtilestest.Options{LeafSize: 100})
		g := newGated(b)
		var lookups atomic.Int64
		cache := pmtiles.NewDirCache(pmtiles.DirCacheOptions{OnLookup: func(bool) { lookups.Add(1) }})
		r, err := pmtiles.Open(context.Background(), g, int64(len(b)), pmtiles.Options{Cache: cache, PackID: "p"})
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		for i := range 50 {
			wg.Go(func() {
				x := uint32(i % 8)
				ref, ok, err := r.Tile(context.Background(), 3, x, 1)
				if err != nil || !ok || ref.Length != int64(len(tileData(3, x, 1))) {
					t.Errorf("3/%d/1: %+v %v %v", x, ref, ok, err)
				}
			})
		}
		synctest.Wait()
		if n := g.leafReads.Load(); n != 1 {
			t.Fatalf("%d leaf reads while the first is in flight", n)
		}
		close(g.gate)
		wg.Wait()
		s := cache.Stats()
		if g.leafReads.Load() != 1 || s.Misses != 1 || s.Hits != 49 || s.Directories != 1 || lookups.Load() != 50 {
			t.Fatalf("reads %d, stats %+v, lookups %d", g.leafReads.Load(), s, lookups.Load())
		}
	})
}

// A waiter whose context ends stops waiting at once; the load goes on and
// is cached for the next lookup.
func TestDirCacheWaiterCancel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := mustBuild(t, pyramid(2), pmtilestest.Options{LeafSize: 100})
		g := newGated(b)
		cache := pmtiles.NewDirCache(pmtiles.DirCacheOptions{})
		r, err := pmtiles.Open(context.Background(), g, int64(len(b)), pmtiles.Options{Cache: cache})
		if err != nil {
			t.Fatal(err)
		}
		leader := make(chan error, 1)
		go func() { _, _, err := r.Tile(context.Background(), 2, 1, 1); leader <- err }()
		synctest.Wait()
		ctx, cancel := context.WithCancel(context.Background())
		waiter := make(chan error, 1)
		go func() { _, _, err := r.Tile(ctx, 2, 1, 1); waiter <- err }()
		synctest.Wait()
		cancel()
		if err := <-waiter; !errors.Is(err, context.Canceled) {
			t.Fatalf("waiter: %v", err)
		}
		close(g.gate)
		if err := <-leader; err != nil {
			t.Fatal(err)
		}
		if _, ok, err := r.Tile(context.Background(), 2, 0, 0); !ok || err != nil || g.leafReads.Load() != 1 {
			t.Fatalf("after: %v %v, %d reads", ok, err, g.leafReads.Load())
		}
	})
}

// A failed load fails its waiters with the same error and is not cached:
// the next lookup loads again.
func TestDirCacheFailureNotCached(t *testing.T) {
	bad := []byte{0}
	b := rawArchive([]pmtiles.Entry{leafEntry(0, 0, 1)}, bad, []byte("tiles"), "{}")
	cache := pmtiles.NewDirCache(pmtiles.DirCacheOptions{})
	r := mustOpen(t, b, pmtiles.Options{Cache: cache})
	for range 2 {
		if _, _, err := r.Tile(context.Background(), 0, 0, 0); !errors.Is(err, pmtiles.ErrCorrupt) {
			t.Fatal(err)
		}
	}
	if s := cache.Stats(); s.Misses != 2 || s.Directories != 0 {
		t.Fatalf("stats %+v", s)
	}
}

// Two archives with leaves at the same offsets share one cache without
// mixing their directories; the budget counts 24 B per entry, evicts the
// least recently used, shrinks at once, and Purge drops one pack.
func TestDirCacheSharedBudget(t *testing.T) {
	tilesA := pyramid(3)
	tilesB := pyramid(3)
	for i := range tilesB {
		tilesB[i].Data = append([]byte("B"), tilesB[i].Data...)
	}
	const leafSize = 10
	cache := pmtiles.NewDirCache(pmtiles.DirCacheOptions{MaxBytes: 3 * leafSize * pmtiles.EntryBytes})
	a := mustOpen(t, mustBuild(t, tilesA, pmtilestest.Options{LeafSize: leafSize}), pmtiles.Options{Cache: cache, PackID: "a"})
	bb := mustOpen(t, mustBuild(t, tilesB, pmtilestest.Options{LeafSize: leafSize}), pmtiles.Options{Cache: cache, PackID: "b"})
	checkAllTiles(t, a, tilesA)
	checkAllTiles(t, bb, tilesB)
	s := cache.Stats()
	if s.Directories < 2 || s.Bytes > 3*leafSize*pmtiles.EntryBytes || s.Evictions == 0 {
		t.Fatalf("stats %+v", s)
	}
	before := s.Misses
	checkAllTiles(t, bb, tilesB[len(tilesB)-5:]) // the last leaf of b is warm
	if s := cache.Stats(); s.Misses != before {
		t.Fatalf("warm lookups missed: %+v", s)
	}
	cache.SetMaxBytes(leafSize * pmtiles.EntryBytes)
	if s := cache.Stats(); s.Directories != 1 || s.Bytes > leafSize*pmtiles.EntryBytes || s.Bytes == 0 {
		t.Fatalf("after shrink %+v", s)
	}
	cache.Purge("b")
	if s := cache.Stats(); s.Directories != 0 || s.Bytes != 0 {
		t.Fatalf("after purge %+v", s)
	}
	cache.SetMaxBytes(0) // default budget
	checkAllTiles(t, a, tilesA)
	if s := cache.Stats(); s.Directories != (len(tilesA)+leafSize-1)/leafSize {
		t.Fatalf("default budget %+v", s)
	}
}

// A directory larger than the whole budget is served but not kept.
func TestDirCacheOversized(t *testing.T) {
	cache := pmtiles.NewDirCache(pmtiles.DirCacheOptions{MaxBytes: 5 * pmtiles.EntryBytes})
	tiles := pyramid(2)
	r := mustOpen(t, mustBuild(t, tiles, pmtilestest.Options{LeafSize: 7}), pmtiles.Options{Cache: cache}) // 3 leaves of 7
	checkAllTiles(t, r, tiles)
	if s := cache.Stats(); s.Directories != 0 || s.Bytes != 0 {
		t.Fatalf("stats %+v", s)
	}
}
