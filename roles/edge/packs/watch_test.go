package packs

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ronhq/ron/roles/edge/pmtiles"
	"github.com/ronhq/ron/roles/edge/pmtiles/pmtilestest"
)

// watcher is a mounted Set whose Run loop is running in the bubble.
type watcher struct {
	*Set
	stop func()
}

// watch mounts opt and starts Run; the loop is blocked in its first sleep
// when watch returns. Call stop (deferred) before the bubble ends.
func watch(t *testing.T, opt Options) *watcher {
	t.Helper()
	s := mountSet(t, opt)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { // the watcher under test
		_ = s.Run(ctx)
		close(done)
	}()
	synctest.Wait()
	return &watcher{Set: s, stop: func() {
		cancel()
		<-done
		s.Close()
	}}
}

// poll lets one poll interval pass and waits for the poll to finish.
func (w *watcher) poll() {
	time.Sleep(w.options().Poll)
	synctest.Wait()
}

// id returns the mounted id of name, "" when it is not mounted.
func (w *watcher) id(name string) string {
	p, release, ok := w.Acquire(name)
	if !ok {
		return ""
	}
	defer release()
	return p.ID()
}

// A file renamed over a mounted pack is picked up once its stat is stable
// (two equal polls): new id and data; reads through the old pack complete
// and its file closes at the last release.
func TestWatchRenameOver(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		dir := t.TempDir()
		path := writeFile(t, dir, "world.pmtiles", archive(t, pyramid(2, 'a'), pmtilestest.Options{}))
		w := watch(t, Options{Dir: dir, Poll: time.Second})
		defer w.stop()
		old, release, ok := w.Acquire("world")
		if !ok {
			t.Fatal("not mounted")
		}
		replaceFile(t, path, archive(t, pyramid(2, 'b'), pmtilestest.Options{}))
		w.poll()
		if w.id("world") != old.ID() {
			t.Fatal("acted on the first sighting of a change")
		}
		w.poll()
		if id := w.id("world"); id == "" || id == old.ID() {
			t.Fatalf("id %q after two equal stats (old %q)", id, old.ID())
		}
		if b := tileBytes(t, w.Set, "world", 2, 1, 3); b[3] != 'b' {
			t.Fatalf("new pack serves %q", b)
		}
		tl, err := old.Tile(context.Background(), 2, 1, 3)
		if err != nil || !tl.Found || tl.Data[3] != 'a' || old.closed() {
			t.Fatalf("old pack: %+v %v closed=%v", tl, err, old.closed())
		}
		release()
		release()
		if !old.closed() || old.refs.Load() != 0 {
			t.Fatalf("old pack refs %d after release", old.refs.Load())
		}
		if metric(w.Set, `ron_edge_pack_mounts_total{role="edge",pack="world",result="ok"}`) != 2 {
			t.Fatal("metrics")
		}
	})
}

// A file that changes on every poll is never acted on; a new file is
// mounted after two equal stats.
func TestWatchNeedsTwoEqualStats(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		dir := t.TempDir()
		a := archive(t, pyramid(1, 'a'), pmtilestest.Options{})
		w := watch(t, Options{Dir: dir, Poll: 2 * time.Second})
		defer w.stop()
		path := writeFile(t, dir, "grow.pmtiles", a[:100])
		mtime := time.Unix(1_700_000_000, 0)
		for i := range 5 {
			w.poll()
			if len(names(w.Set)) != 0 || len(w.Missing()) != 0 {
				t.Fatalf("poll %d acted on an unstable file: %v %v", i, names(w.Set), w.Missing())
			}
			rewriteInPlace(t, path, a[:100+i*10], mtime.Add(time.Duration(i)*time.Second))
		}
		rewriteInPlace(t, path, a, mtime.Add(time.Minute))
		w.poll()
		if len(names(w.Set)) != 0 {
			t.Fatal("mounted at the first stable sighting")
		}
		w.poll()
		if got := names(w.Set); !slices.Equal(got, []string{"grow"}) {
			t.Fatalf("mounted %v", got)
		}
	})
}

// A file rewritten in place (same inode) that fails verification is
// unmounted and missing; fixed in place, it mounts again.
func TestWatchInPlaceCorrupt(t *testing.T) {
	for _, skip := range []bool{false, true} {
		synctest.Test(t, func(t *testing.T) {
			dir := t.TempDir()
			good := archive(t, pyramid(2, 'a'), pmtilestest.Options{})
			path := writeFile(t, dir, "world.pmtiles", good)
			opt := Options{Dir: dir, Poll: time.Second}
			if skip {
				opt.PackErrors = ErrorsSkip
			}
			w := watch(t, opt)
			defer w.stop()
			rewriteInPlace(t, path, []byte(strings.Repeat("garbage ", 40)), time.Unix(1_700_000_000, 0))
			w.poll()
			if w.id("world") == "" {
				t.Fatal("unmounted at the first sighting")
			}
			w.poll()
			st := w.Status()
			if w.id("world") != "" || !strings.Contains(st.LastError, "world") {
				t.Fatalf("still mounted after a corrupt in-place rewrite: %+v", st)
			}
			wantMissing := []string{"edge:pack:world"}
			result := "error"
			if skip {
				wantMissing, result = nil, "skipped"
				if st.Skipped["world"] == "" {
					t.Fatalf("skipped not shown: %+v", st)
				}
			}
			if got := w.Missing(); !slices.Equal(got, wantMissing) {
				t.Fatalf("missing %v", got)
			}
			if metric(w.Set, `ron_edge_pack_mounts_total{role="edge",pack="world",result="`+result+`"}`) != 1 {
				t.Fatal("failure not counted")
			}
			rewriteInPlace(t, path, good, time.Unix(1_700_000_100, 0))
			w.poll()
			w.poll()
			if w.id("world") == "" || len(w.Missing()) != 0 || w.LastError() != "" {
				t.Fatalf("not remounted: %+v", w.Status())
			}
		})
	}
}

// A replacement (new inode) that fails verification leaves the old version
// mounted: the failure shows in last_error and the error count, not in
// readiness, and is not retried until the file changes again.
func TestWatchReplacementFails(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		dir := t.TempDir()
		path := writeFile(t, dir, "world.pmtiles", archive(t, pyramid(2, 'a'), pmtilestest.Options{}))
		w := watch(t, Options{Dir: dir, Poll: time.Second})
		defer w.stop()
		id := w.id("world")
		replaceFile(t, path, pmtilestest.PatchHeader(archive(t, pyramid(2, 'b'), pmtilestest.Options{}),
			func(h *pmtiles.Header) { h.Version = 4 }))
		w.poll()
		w.poll()
		w.poll()
		if w.id("world") != id || len(w.Missing()) != 0 || !strings.Contains(w.LastError(), "future version") {
			t.Fatalf("id %q (want %q), missing %v, last error %q", w.id("world"), id, w.Missing(), w.LastError())
		}
		if metric(w.Set, `ron_edge_pack_mounts_total{role="edge",pack="world",result="error"}`) != 1 {
			t.Fatal("want exactly one error count")
		}
		if b := tileBytes(t, w.Set, "world", 1, 1, 0); b[3] != 'a' {
			t.Fatalf("serves %q", b)
		}
	})
}

// A deleted file is unmounted at the next poll and is not missing.
func TestWatchDelete(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		dir := t.TempDir()
		path := writeFile(t, dir, "world.pmtiles", archive(t, pyramid(1, 'a'), pmtilestest.Options{}))
		w := watch(t, Options{Dir: dir, Poll: time.Second})
		defer w.stop()
		p, release, _ := w.Acquire("world")
		if err := os.Remove(path); err != nil {
			t.Fatal(err)
		}
		w.poll()
		if len(names(w.Set)) != 0 || len(w.Missing()) != 0 || len(w.Status().Mounted) != 0 {
			t.Fatalf("after delete: %+v", w.Status())
		}
		if metric(w.Set, `ron_edge_packs_mounted{role="edge",kind="pmtiles"}`) != 0 || p.closed() {
			t.Fatal("gauge or early close")
		}
		release()
		if !p.closed() {
			t.Fatal("not closed after the last release")
		}
	})
}

// Corruption found while serving (a leaf directory past its section) makes
// the pack re-verified at the next poll, at the full level: it is then
// unmounted.
func TestWatchCorruptWhileServing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		dir := t.TempDir()
		b := corruptLeaf(t, archive(t, pyramid(3, 'l'), pmtilestest.Options{InternalCompression: pmtiles.CompressionNone, LeafSize: 4}))
		writeFile(t, dir, "leafy.pmtiles", b)
		w := watch(t, Options{Dir: dir, Poll: time.Second})
		defer w.stop()
		p, release, ok := w.Acquire("leafy")
		if !ok {
			t.Fatal("not mounted at basic level")
		}
		_, err := p.Tile(context.Background(), 0, 0, 0)
		release()
		if !errors.Is(err, ErrCorrupt) {
			t.Fatalf("Tile: %v", err)
		}
		w.poll()
		if w.id("leafy") != "" || !slices.Equal(w.Missing(), []string{"edge:pack:leafy"}) {
			t.Fatalf("after re-verification: %+v", w.Status())
		}
	})
}

// A corruption report on a pack that then passes full verification keeps
// the same pack object mounted and silences further reports from it.
func TestWatchReverifyPasses(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		dir := t.TempDir()
		writeFile(t, dir, "ok.pmtiles", archive(t, pyramid(2, 'a'), pmtilestest.Options{LeafSize: 4}))
		w := watch(t, Options{Dir: dir, Poll: time.Second})
		defer w.stop()
		p, release, _ := w.Acquire("ok")
		defer release()
		err := p.failed(pmtiles.ErrCorrupt)
		w.poll()
		q, rel, ok := w.Acquire("ok")
		if !errors.Is(err, ErrCorrupt) || !ok || q != p || !p.reverified.Load() {
			t.Fatalf("err %v, same object %v", err, q == p)
		}
		rel()
		_ = p.failed(pmtiles.ErrCorrupt)
		w.mu.Lock()
		suspect := w.entries["ok"].suspect
		w.mu.Unlock()
		if suspect || metric(w.Set, `ron_edge_pack_mounts_total{role="edge",pack="ok",result="ok"}`) != 1 {
			t.Fatal("re-verified pack reported again or swapped")
		}
	})
}

// Apply adds and removes sources live; the new file is acted on after two
// equal stats, the removed folder's packs at the next poll.
func TestWatchApply(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		dir, other := t.TempDir(), t.TempDir()
		writeFile(t, dir, "a.pmtiles", archive(t, pyramid(1, 'a'), pmtilestest.Options{}))
		extra := copyFixture(t, "mbtiles", "world_cities.mbtiles", other, "cities.mbtiles")
		w := watch(t, Options{Dir: dir, Poll: time.Second})
		defer w.stop()
		w.Apply(Options{Dir: dir, Files: []string{extra}, Poll: 3 * time.Second})
		time.Sleep(time.Second) // the old interval ends: the file's first sighting
		synctest.Wait()
		if got := names(w.Set); !slices.Equal(got, []string{"a"}) {
			t.Fatalf("after one poll: %v", got)
		}
		w.poll() // 3 s later: the second equal stat
		if got := names(w.Set); !slices.Equal(got, []string{"a", "cities"}) {
			t.Fatalf("after two: %v", got)
		}
		w.Apply(Options{Files: []string{extra}, Poll: time.Second})
		time.Sleep(3 * time.Second) // the sleep in progress keeps its 3 s
		synctest.Wait()
		if got := names(w.Set); !slices.Equal(got, []string{"cities"}) {
			t.Fatalf("folder removed: %v", got)
		}
		if metric(w.Set, `ron_edge_packs_mounted{role="edge",kind="mbtiles"}`) != 1 {
			t.Fatal("gauge")
		}
	})
}

// A folder that vanishes unmounts its packs, not the listed ones; other
// listing errors keep them.
func TestWatchFolderGone(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		root := t.TempDir()
		dir := filepath.Join(root, "packs")
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		writeFile(t, dir, "a.pmtiles", archive(t, pyramid(1, 'a'), pmtilestest.Options{}))
		listed := writeFile(t, root, "listed.pmtiles", archive(t, pyramid(1, 'l'), pmtilestest.Options{}))
		w := watch(t, Options{Dir: dir, Files: []string{listed}, Poll: time.Second})
		defer w.stop()
		if got := names(w.Set); !slices.Equal(got, []string{"a", "listed"}) {
			t.Fatalf("mounted %v", got)
		}
		if err := os.RemoveAll(dir); err != nil {
			t.Fatal(err)
		}
		w.poll()
		if got := names(w.Set); !slices.Equal(got, []string{"listed"}) {
			t.Fatalf("after the folder went: %v", got)
		}
	})
}

// The default folder (DirOptional) may not exist at Mount: the set starts
// with no packs, picks up the folder and its packs once it is made, and a
// configured folder that is missing still fails Mount.
func TestWatchOptionalFolderAppears(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "packs")
		if err := newTestSet(t, Options{Dir: dir}).Mount(context.Background()); err == nil {
			t.Fatal("a configured folder that is missing mounted")
		}
		w := watch(t, Options{Dir: dir, DirOptional: true, Poll: time.Second})
		defer w.stop()
		if got := names(w.Set); len(got) != 0 {
			t.Fatalf("mounted %v before the folder exists", got)
		}
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		writeFile(t, dir, "late.pmtiles", archive(t, pyramid(1, 'l'), pmtilestest.Options{}))
		w.poll()
		w.poll()
		if got := names(w.Set); !slices.Equal(got, []string{"late"}) {
			t.Fatalf("after the folder was made: %v", got)
		}
		if w.id("late") == "" {
			t.Fatal("late is listed but cannot be acquired")
		}
	})
}
