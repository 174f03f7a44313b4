package tiles

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"testing/synctest"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/rs/zerolog"

	"github.com/ronhq/ron/roles/edge/packs"
	"github.com/ronhq/ron/roles/edge/pmtiles"
	"github.com/ronhq/ron/roles/edge/pmtiles/pmtilestest"
	"github.com/ronhq/ron/roles/edge/tiletype"
)

// tileOf is a cachedTile of n body bytes for key (pack "p", id).
func tileOf(id uint64, n int) *cachedTile {
	return &cachedTile{key: tileKey{pack: "p", id: id}, data: make([]byte, n), found: true}
}

// TestTileCacheBudget: entries stay within each shard's budget, a tile
// over the size cap is never cached, and a put of a cached key keeps the
// first entry.
func TestTileCacheBudget(t *testing.T) {
	tc := newTileCache(tileShards * 4096)
	for id := range uint64(1000) {
		tc.put(tileOf(id, 1000))
	}
	entries, bytes := tc.stats()
	if bytes > tileShards*4096 || entries == 0 || entries > tileShards*4 {
		t.Fatalf("%d entries, %d bytes", entries, bytes)
	}
	tc.put(tileOf(5000, maxCachedTile+1))
	if _, ok := tc.get(tileKey{pack: "p", id: 5000}); ok {
		t.Fatal("a tile over the cap was cached")
	}
	first := tileOf(7000, 10)
	tc.put(first)
	tc.put(tileOf(7000, 10))
	if got, ok := tc.get(first.key); !ok || got != first {
		t.Fatal("a second put replaced the first")
	}
	if _, ok := tc.get(tileKey{pack: "other", id: 7000}); ok {
		t.Fatal("a tile of another pack version answered")
	}
}

// TestTileCacheClock: a tile hit since the hand last passed survives the
// next eviction; one not hit goes first.
func TestTileCacheClock(t *testing.T) {
	sh := &tileShard{max: 3 * (100 + entryOverhead), byKey: map[tileKey]*cachedTile{}}
	a, b, c := tileOf(1, 100), tileOf(2, 100), tileOf(3, 100)
	for _, ct := range []*cachedTile{a, b, c} {
		sh.put(ct)
	}
	sh.put(tileOf(4, 100)) // a full turn clears every bit, then the hand takes a
	if _, ok := sh.get(a.key); ok {
		t.Fatal("the oldest unused entry survived")
	}
	sh.get(b.key) // b used again
	sh.put(tileOf(5, 100))
	if _, ok := sh.get(b.key); !ok {
		t.Fatal("a used entry was evicted before an unused one")
	}
	if _, ok := sh.get(c.key); ok {
		t.Fatal("the unused entry survived")
	}
}

// TestTileHitsFromCache: a warm tile is answered from the cache (same
// bytes, no pack read); a replaced pack's tiles are never answered from
// the old version's entries.
func TestTileHitsFromCache(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		build := func(body string) []byte {
			a, err := pmtilestest.Build([]pmtilestest.Tile{{Data: []byte(body)}},
				pmtilestest.Options{TileType: pmtiles.TileType(2), TileCompression: pmtiles.CompressionNone})
			if err != nil {
				t.Fatal(err)
			}
			return a
		}
		ev := newEnv(t, Settings{}, func(dir string) { writeFile(t, dir, "p.pmtiles", build("\x89PNG old")) })
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() {
			defer close(done)
			_ = ev.set.Run(ctx)
		}()
		defer func() { cancel(); <-done }()

		for range 2 {
			if w := ev.get("/tiles/p/0/0/0.png"); w.Body.String() != "\x89PNG old" {
				t.Fatalf("before: %q", w.Body.String())
			}
		}
		if n, _ := ev.tiles.cache.stats(); n != 1 {
			t.Fatalf("%d cached tiles", n)
		}
		writeFile(t, ev.dir, ".p.tmp", build("\x89PNG new"))
		if err := os.Rename(filepath.Join(ev.dir, ".p.tmp"), filepath.Join(ev.dir, "p.pmtiles")); err != nil {
			t.Fatal(err)
		}
		time.Sleep(10 * time.Second) // several polls: the new file mounts
		synctest.Wait()
		if w := ev.get("/tiles/p/0/0/0.png"); w.Body.String() != "\x89PNG new" {
			t.Fatalf("after the replace: %q", w.Body.String())
		}
	})
}

// TestTileAbsentCached: an absent tile is cached too and still answers
// 204 with the pack's validators.
func TestTileAbsentCached(t *testing.T) {
	mlt := newEnv(t, Settings{}, fixtures(t, "test_fixture_mlt.pmtiles"))
	for i := range 2 {
		w := mlt.get("/tiles/test_fixture_mlt/0/0/0.mlt")
		if w.Code != http.StatusNoContent || w.Header().Get("ETag") == "" || w.Body.Len() != 0 {
			t.Fatalf("request %d: %d %q", i, w.Code, w.Header().Get("ETag"))
		}
	}
	if n, _ := mlt.tiles.cache.stats(); n != 1 {
		t.Fatalf("%d cached entries", n)
	}
}

// TestDateLeftToServer: without an injected clock the Date header is left
// to net/http; Last-Modified is the file's mtime either way.
func TestDateLeftToServer(t *testing.T) {
	dir := t.TempDir()
	copyFixture(t, dir, "pmtiles", "stamen_toner_z3.pmtiles")
	set := packs.NewSet(packs.Options{Dir: dir, Log: zerolog.Nop()})
	if err := set.Mount(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer set.Close()
	tl := New(Options{Packs: set, Log: zerolog.Nop()})
	e := echo.New()
	e.GET("/tiles/*", tl.ServeTiles)
	w := httptest.NewRecorder()
	e.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/tiles/stamen_toner_z3/0/0/0.png", nil))
	p, release, _ := set.Acquire("stamen_toner_z3")
	defer release()
	if w.Code != 200 || w.Header().Get("Date") != "" ||
		w.Header().Get("Last-Modified") != p.ModTime().UTC().Format(http.TimeFormat) {
		t.Fatalf("%d Date %q Last-Modified %q", w.Code, w.Header().Get("Date"), w.Header().Get("Last-Modified"))
	}
}

// TestSharedHeaderValues: the values answers share are never changed by
// the fields added to an answer after them.
func TestSharedHeaderValues(t *testing.T) {
	h := http.Header{}
	setVary(h, tiletype.Gzip)
	h.Add("Vary", "Origin")
	h2 := http.Header{}
	setVary(h2, tiletype.Gzip)
	if got := h2.Values("Vary"); len(got) != 1 || got[0] != "Accept-Encoding" || len(valAcceptEncoding) != 1 {
		t.Fatalf("shared Vary became %q", got)
	}
	var hv headerVals
	d1 := hv.dateOf(time.Unix(1000, 0))
	if d2 := hv.dateOf(time.Unix(1000, 900)); &d1[0] != &d2[0] {
		t.Fatal("Date formatted twice within one second")
	}
	if d3 := hv.dateOf(time.Unix(1001, 0)); bytes.Equal([]byte(d3[0]), []byte(d1[0])) {
		t.Fatal("a new second kept the old Date")
	}
}
