package httpapi

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"testing"

	"github.com/ronhq/ron/httpx/content"
	"github.com/ronhq/ron/roles/registry/tiles"
)

// logSize is the number of leaves the tile tests build: one full tile and
// bundle, then a partial one of width 44.
const logSize = 300

func TestCheckpointAndKey(t *testing.T) {
	run(t, func(t *testing.T, e *env) {
		e.commitN(2)
		resp, body := e.request(http.MethodGet, "/registry/log/checkpoint", nil)
		sum := sha256.Sum256(body)
		tag := `"` + hex.EncodeToString(sum[:]) + `"`
		if resp.StatusCode != 200 || !bytes.Equal(body, e.tree.Checkpoint().Note) ||
			resp.Header.Get("Content-Type") != "text/plain; charset=utf-8" ||
			resp.Header.Get("Cache-Control") != "no-cache" || resp.Header.Get("ETag") != tag {
			t.Fatalf("checkpoint: %d %v", resp.StatusCode, resp.Header)
		}
		if cp, err := tiles.ParseCheckpoint(body, e.tree.Key().Verifier()); err != nil || cp.Size != 3 {
			t.Fatalf("checkpoint parses to %+v (%v)", cp, err)
		}
		if resp, _ := e.request(http.MethodGet, "/registry/log/checkpoint", nil, "If-None-Match", tag); resp.StatusCode != 304 {
			t.Fatalf("checkpoint conditional: %d", resp.StatusCode)
		}
		resp, body = e.request(http.MethodGet, "/registry/log/key", nil)
		if resp.StatusCode != 200 || string(body) != e.tree.Key().VerifierKey()+"\n" ||
			resp.Header.Get("Cache-Control") != "max-age=3600" || resp.Header.Get("Content-Type") != "text/plain; charset=utf-8" {
			t.Fatalf("key: %d %v %q", resp.StatusCode, resp.Header, body)
		}
	})
}

// leaves returns the artifacts of versions from..to-1.
func (e *env) leaves(from, to uint64) [][]byte {
	var out [][]byte
	for v := from; v < to; v++ {
		rec, err := e.log.Read(v)
		if err != nil {
			e.t.Fatal(err)
		}
		out = append(out, rec.Artifact)
	}
	return out
}

// leafHash is the RFC 6962 leaf hash.
func leafHash(leaf []byte) []byte {
	h := sha256.Sum256(append([]byte{0}, leaf...))
	return h[:]
}

// TestLogRoutes builds one log of logSize versions (hundreds of commits)
// and checks the tile, bundle, error and pruning rules over it in turn.
func TestLogRoutes(t *testing.T) {
	run(t, func(t *testing.T, e *env) {
		e.commitN(logSize - 1)
		checkTiles(t, e)
		checkEntriesGzip(t, e)
		checkTileErrors(t, e)
		checkPrunedLog(t, e)
	})
}

func checkTiles(t *testing.T, e *env) {
	if e.tree.Size() != logSize {
		t.Fatalf("tree size %d", e.tree.Size())
	}
	want := map[string][]byte{}
	for _, p := range []struct {
		path            string
		level           uint8
		index           uint64
		width, hashSize int
	}{{"0/000", 0, 0, 0, 256}, {"0/001.p/44", 0, 1, 44, 44}, {"1/000.p/1", 1, 0, 1, 1}, {"0/000.p/7", 0, 0, 7, 7}} {
		tile, err := e.tree.Tile(p.level, p.index, p.width)
		if err != nil || len(tile) != p.hashSize*32 {
			t.Fatalf("tree tile %s: %d bytes (%v)", p.path, len(tile), err)
		}
		want[p.path] = tile
	}
	for path, tile := range want {
		resp, body := e.request(http.MethodGet, "/registry/log/tile/"+path, nil)
		if resp.StatusCode != 200 || !bytes.Equal(body, tile) || resp.Header.Get("Content-Type") != "application/octet-stream" ||
			resp.Header.Get("Cache-Control") != content.Immutable {
			t.Fatalf("tile %s: %d %v", path, resp.StatusCode, resp.Header)
		}
	}
	leaves := e.leaves(0, logSize)
	for i, leaf := range leaves[:256] {
		if !bytes.Equal(leafHash(leaf), want["0/000"][i*32:(i+1)*32]) {
			t.Fatalf("leaf %d does not hash to its level-0 tile entry", i)
		}
	}
	for path, from := range map[string]int{"entries/000": 0, "entries/001.p/44": 256, "entries/000.p/9": 0} {
		resp, body := e.request(http.MethodGet, "/registry/log/tile/"+path, nil)
		got, err := tiles.ParseEntryBundle(body)
		if resp.StatusCode != 200 || err != nil || resp.Header.Get("Vary") != "Accept-Encoding" ||
			resp.Header.Get("Content-Encoding") != "" {
			t.Fatalf("bundle %s: %d %v (%v)", path, resp.StatusCode, resp.Header, err)
		}
		for i, leaf := range got {
			if !bytes.Equal(leaf, leaves[from+i]) {
				t.Fatalf("bundle %s entry %d differs from the log", path, i)
			}
		}
		if wantN := map[string]int{"entries/000": 256, "entries/001.p/44": 44, "entries/000.p/9": 9}[path]; len(got) != wantN {
			t.Fatalf("bundle %s has %d entries", path, len(got))
		}
	}
}

func checkEntriesGzip(t *testing.T, e *env) {
	_, raw := e.request(http.MethodGet, "/registry/log/tile/entries/000", nil)
	cases := []struct {
		accept string
		gzip   bool
	}{
		{"gzip", true}, {"identity, gzip;q=0.5", true}, {"*", true}, {"br, *;q=0.1", true},
		{"gzip;q=0", false}, {"identity", false}, {"*;q=0", false}, {"gzip;q=0, *", false}, {"x-gzip", true},
	}
	for _, path := range []string{"entries/000", "entries/001.p/44"} {
		for _, c := range cases {
			resp, body := e.request(http.MethodGet, "/registry/log/tile/"+path, nil, "Accept-Encoding", c.accept)
			if resp.StatusCode != 200 || resp.Header.Get("Vary") != "Accept-Encoding" ||
				(resp.Header.Get("Content-Encoding") == "gzip") != c.gzip {
				t.Fatalf("%s %q: %d %v", path, c.accept, resp.StatusCode, resp.Header)
			}
			if c.gzip {
				zr, err := gzip.NewReader(bytes.NewReader(body))
				if err != nil {
					t.Fatal(err)
				}
				if body, err = io.ReadAll(zr); err != nil {
					t.Fatal(err)
				}
			}
			if path == "entries/000" && !bytes.Equal(body, raw) {
				t.Fatalf("%q: bundle differs", c.accept)
			}
		}
	}
}

func checkTileErrors(t *testing.T, e *env) {
	bad := []string{"0/0", "00/000", "0/x000/001", "0/000.p/0", "0/000.p/256", "0/000.p/07", "64/000",
		"entries/000.p/007", "foo/000", "0/000/", "", "0/-01", "entries/x001", "0/x18446744073709551616/000"}
	for _, p := range bad {
		resp, body := e.request(http.MethodGet, "/registry/log/tile/"+p, nil)
		checkResp(t, p, resp, body, want{400, "bad_request", map[string]any{"reason": "tile_path"}, 0})
	}
	for _, p := range []string{"0/001", "0/001.p/45", "entries/001", "entries/001.p/45", "1/000", "1/000.p/2", "2/000.p/1", "0/002.p/1"} {
		resp, body := e.request(http.MethodGet, "/registry/log/tile/"+p, nil)
		checkResp(t, p, resp, body, want{404, "not_found", nil, 0})
	}
	e.minIdx.Store(256)
	for p, status := range map[string]int{"entries/000": 410, "0/000": 410, "entries/000.p/44": 410, "0/000.p/3": 410,
		"entries/001.p/44": 200, "0/001.p/44": 200, "1/000.p/1": 200} {
		resp, body := e.request(http.MethodGet, "/registry/log/tile/"+p, nil)
		if status == 410 {
			checkResp(t, p, resp, body, want{410, "gone", map[string]any{"reason": "pruned"}, 0})
		} else if resp.StatusCode != status {
			t.Fatalf("%s with min_index 256: %d", p, resp.StatusCode)
		}
	}
}

func checkPrunedLog(t *testing.T, e *env) {
	e.minIdx.Store(-1)
	if _, err := e.log.Prune(256); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"/registry/0", "/registry/255", "/registry/log/tile/entries/000"} {
		resp, body := e.request(http.MethodGet, p, nil)
		checkResp(t, p, resp, body, want{410, "gone", map[string]any{"reason": "pruned"}, 0})
	}
	if resp, _ := e.request(http.MethodGet, fmt.Sprint("/registry/", 256), nil); resp.StatusCode != 200 {
		t.Fatalf("min_index version: %d", resp.StatusCode)
	}
	s := e.stream("", "Last-Event-ID", "5").start() // pruned start
	s.event(256)
	s.close()
	// A min_index source lagging the log: reads still answer 410 and a
	// replay still jumps to the log's first version.
	e.minIdx.Store(0)
	resp, body := e.request(http.MethodGet, "/registry/5", nil)
	checkResp(t, "lagging min_index", resp, body, want{410, "gone", map[string]any{"reason": "pruned"}, 0})
	s = e.stream("", "Last-Event-ID", "5").start()
	s.event(256)
	s.event(257)
	s.close()
}

func TestEndLeaf(t *testing.T) {
	cases := []struct {
		p    tiles.TilePath
		want uint64
	}{
		{tiles.TilePath{Entries: true}, 256},
		{tiles.TilePath{Entries: true, Index: 1, Width: 3}, 512},
		{tiles.TilePath{Level: 1}, 65536},
		{tiles.TilePath{Level: 1, Width: 1}, 65536},
		{tiles.TilePath{Level: 6, Index: 1}, 1 << 57},
		{tiles.TilePath{Level: 7}, ^uint64(0)},
		{tiles.TilePath{Level: 63, Width: 1}, ^uint64(0)},
		{tiles.TilePath{Index: ^uint64(0)}, ^uint64(0)},
		{tiles.TilePath{Index: 1<<56 - 1}, ^uint64(0)},
		{tiles.TilePath{Index: 1<<56 - 2}, ^uint64(0) - 255},
	}
	for _, c := range cases {
		if got := endLeaf(c.p); got != c.want {
			t.Errorf("endLeaf(%+v) = %d, want %d", c.p, got, c.want)
		}
	}
}
