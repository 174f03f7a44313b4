package packs

import (
	"context"
	"sync"
	"testing"

	"github.com/ronhq/ron/roles/edge/pmtiles"
	"github.com/ronhq/ron/roles/edge/pmtiles/pmtilestest"
)

// Readers acquiring, reading and releasing while polls swap the pack never
// see a closed file or a torn pack; every swapped-out pack is closed once
// its readers are done, and Close leaves nothing open.
func TestReadsDuringSwaps(t *testing.T) {
	dir := t.TempDir()
	path := writeFile(t, dir, "world.pmtiles", archive(t, pyramid(3, 0), pmtilestest.Options{LeafSize: 8}))
	s := mountSet(t, Options{Dir: dir})
	ctx := context.Background()
	var seenMu sync.Mutex
	seen := map[*Pack]bool{}
	var wg sync.WaitGroup
	for r := range 8 {
		wg.Add(1)
		go func() { // reader
			defer wg.Done()
			for i := range 300 {
				p, release, ok := s.Acquire("world")
				if !ok {
					t.Error("world not mounted")
					return
				}
				tl, err := p.Tile(ctx, 3, uint32(r), uint32(i%8))
				if err != nil || !tl.Found {
					t.Errorf("tile: %+v %v", tl, err)
				}
				seenMu.Lock()
				seen[p] = true
				seenMu.Unlock()
				release()
			}
		}()
	}
	for v := range 6 {
		replaceFile(t, path, archive(t, pyramid(3, byte(v+1)), pmtilestest.Options{LeafSize: 8}))
		_ = s.poll(ctx, false)
		_ = s.poll(ctx, false)
	}
	wg.Wait()
	cur, release, _ := s.Acquire("world")
	release()
	for p := range seen {
		if p != cur && !p.closed() {
			t.Errorf("swapped-out pack %s still open", p.ID())
		}
	}
	s.Close()
	if !cur.closed() {
		t.Fatal("Close left the current pack open")
	}
	if _, _, ok := s.Acquire("world"); ok {
		t.Fatal("Acquire after Close")
	}
}

// A pack held across Close stays readable until released.
func TestCloseWithReaders(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "a.pmtiles", archive(t, pyramid(1, 'a'), pmtilestest.Options{}))
	s := mountSet(t, Options{Dir: dir})
	p, release, _ := s.Acquire("a")
	s.Close()
	if tl, err := p.Tile(context.Background(), 1, 0, 0); err != nil || !tl.Found {
		t.Fatalf("read after Close: %v", err)
	}
	release()
	if !p.closed() || s.Status().Mounted == nil || len(s.Status().Mounted) != 0 {
		t.Fatal("not closed")
	}
	if err := s.Mount(context.Background()); err != nil || len(names(s)) != 0 {
		t.Fatal("a closed Set mounted again")
	}
}

// Leaf lookups go through the one shared directory cache and are counted.
func TestDirCacheMetric(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "a.pmtiles", archive(t, pyramid(3, 'a'), pmtilestest.Options{LeafSize: 4}))
	writeFile(t, dir, "b.pmtiles", archive(t, pyramid(3, 'b'), pmtilestest.Options{LeafSize: 4}))
	s := mountSet(t, Options{Dir: dir, DirCacheBytes: 1 << 20})
	for range 2 {
		for _, n := range []string{"a", "b"} {
			tileBytes(t, s, n, 3, 5, 5)
		}
	}
	hit := metric(s, `ron_edge_dir_cache_lookups_total{role="edge",result="hit"}`)
	miss := metric(s, `ron_edge_dir_cache_lookups_total{role="edge",result="miss"}`)
	if miss != 2 || hit != 2 || s.DirCache().Stats().Directories != 2 {
		t.Fatalf("hit %v miss %v, %+v", hit, miss, s.DirCache().Stats())
	}
	s.Apply(Options{Dir: dir, DirCacheBytes: pmtiles.EntryBytes})
	if s.DirCache().Stats().Directories != 0 {
		t.Fatal("shrinking the budget kept directories")
	}
}

// A file replaced while it was being opened (ErrChanged) changes nothing:
// the old version stays and the next polls look at the file again.
func TestChangedWhileOpening(t *testing.T) {
	dir := t.TempDir()
	path := writeFile(t, dir, "a.pmtiles", archive(t, pyramid(1, 'a'), pmtilestest.Options{}))
	s := mountSet(t, Options{Dir: dir})
	old, release, _ := s.Acquire("a")
	defer release()
	s.mu.Lock()
	before := *s.entries["a"]
	s.mu.Unlock()
	s.apply([]*job{{cand: candidate{name: "a", path: path, kind: KindPMTiles}, err: ErrChanged, opened: true}}, nil, s.options())
	s.mu.Lock()
	after := *s.entries["a"]
	s.mu.Unlock()
	if cur, rel, _ := s.Acquire("a"); cur != old || after != before || s.LastError() != "" {
		t.Fatalf("changed state: %+v → %+v", before, after)
	} else {
		rel()
	}
}
