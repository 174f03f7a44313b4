package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ronhq/ron/internal/fixtures"
	"github.com/ronhq/ron/roles/edge/pmtiles"
	"github.com/ronhq/ron/roles/edge/pmtiles/pmtilestest"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// writeArchive builds an archive of every tile of zooms 0–maxZ with
// data(z, x, y) and writes it to a temp file.
func writeArchive(t *testing.T, maxZ uint32, data func(z, x, y uint32) []byte, opt pmtilestest.Options) string {
	t.Helper()
	var ts []pmtilestest.Tile
	for z := uint32(0); z <= maxZ; z++ {
		for x := uint32(0); x < 1<<z; x++ {
			for y := uint32(0); y < 1<<z; y++ {
				ts = append(ts, pmtilestest.Tile{Z: z, X: x, Y: y, Data: data(z, x, y)})
			}
		}
	}
	b, err := pmtilestest.Build(ts, opt)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "a.pmtiles")
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// named gives each tile bytes that name it; zoom 2 tiles all share one
// blob, so the archive has run-length entries.
func named(z, x, y uint32) []byte {
	if z == 2 {
		return []byte("shared")
	}
	return fmt.Appendf(nil, "tile %d/%d/%d", z, x, y)
}

// TestDumpLeafArchive: an archive with two levels of leaf directories and
// runs is dumped whole, one file per tile id in id order, each with its
// bytes, and the list has the URL paths.
func TestDumpLeafArchive(t *testing.T) {
	archive := writeArchive(t, 3, named, pmtilestest.Options{TileType: pmtiles.TileTypeWebP,
		TileCompression: pmtiles.CompressionNone, LeafSize: 4, LeafLevels: 2})
	dir, list := t.TempDir(), filepath.Join(t.TempDir(), "paths.txt")
	var out bytes.Buffer
	if err := run([]string{"-archive", archive, "-out", dir, "-prefix", "/tiles/w", "-list", list}, &out); err != nil {
		t.Fatal(err)
	}
	paths, err := os.ReadFile(list)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(paths), "\n"), "\n")
	if len(lines) != 85 {
		t.Fatalf("%d paths, want 85:\n%s", len(lines), paths)
	}
	for id, line := range lines {
		z, x, y, err := pmtiles.TileZXY(uint64(id))
		if err != nil {
			t.Fatal(err)
		}
		if want := fmt.Sprintf("/tiles/w/%d/%d/%d.webp", z, x, y); line != want {
			t.Fatalf("line %d: %q, want %q (tile id order)", id, line, want)
		}
		got, err := os.ReadFile(filepath.Join(dir, fmt.Sprint(z), fmt.Sprint(x), fmt.Sprintf("%d.webp", y)))
		if err != nil || !bytes.Equal(got, named(z, x, y)) {
			t.Errorf("tile %d/%d/%d: %q (%v), want %q", z, x, y, got, err, named(z, x, y))
		}
	}
	if !strings.Contains(out.String(), "85 tiles") {
		t.Errorf("summary %q", out.String())
	}
}

// TestDumpFixture: stamen_toner_z3 (PNG, uncompressed, 85 tiles in 84
// entries) dumps to 85 .png files.
func TestDumpFixture(t *testing.T) {
	dir := t.TempDir()
	tiles, err := Dump(filepath.Join(fixtures.Dir(t), "pmtiles", "stamen_toner_z3.pmtiles"), dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(tiles) != 85 || tiles[0] != "0/0/0.png" {
		t.Fatalf("%d tiles, first %q; want 85 from 0/0/0.png", len(tiles), tiles[0])
	}
	b, err := os.ReadFile(filepath.Join(dir, "3", "7", "7.png"))
	if err != nil || !bytes.HasPrefix(b, []byte("\x89PNG")) {
		t.Errorf("3/7/7.png: %d bytes, %v", len(b), err)
	}
}

func TestBadInput(t *testing.T) {
	gz := writeArchive(t, 1, named, pmtilestest.Options{TileType: pmtiles.TileTypeMVT,
		TileCompression: pmtiles.CompressionGzip, CompressTiles: true})
	notArchive := filepath.Join(t.TempDir(), "x.pmtiles")
	if err := os.WriteFile(notArchive, bytes.Repeat([]byte("not an archive "), 20), 0o600); err != nil {
		t.Fatal(err)
	}
	ok := writeArchive(t, 0, named, pmtilestest.Options{TileType: pmtiles.TileTypePNG})
	out := t.TempDir()
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no archive", []string{"-out", out}, "required"},
		{"no out", []string{"-archive", ok}, "required"},
		{"extra argument", []string{"-archive", ok, "-out", out, "x"}, "unexpected"},
		{"prefix without slash", []string{"-archive", ok, "-out", out, "-prefix", "tiles"}, "-prefix"},
		{"prefix with trailing slash", []string{"-archive", ok, "-out", out, "-prefix", "/tiles/"}, "-prefix"},
		{"missing archive", []string{"-archive", filepath.Join(out, "nope"), "-out", out}, "no such file"},
		{"not an archive", []string{"-archive", notArchive, "-out", out}, "magic"},
		{"compressed tiles", []string{"-archive", gz, "-out", out}, "compression"},
		{"unknown flag", []string{"-nope"}, "flag provided but not defined"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := run(tc.args, io.Discard)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("run(%q) = %v, want an error containing %q", tc.args, err, tc.want)
			}
		})
	}
}

func TestExtOf(t *testing.T) {
	for tt, want := range map[pmtiles.TileType]string{pmtiles.TileTypeUnknown: "bin", pmtiles.TileTypeMVT: "mvt",
		pmtiles.TileTypePNG: "png", pmtiles.TileTypeJPEG: "jpg", pmtiles.TileTypeWebP: "webp",
		pmtiles.TileTypeAVIF: "avif", pmtiles.TileTypeMLT: "mlt", 9: "bin"} {
		if got := ExtOf(tt); got != want {
			t.Errorf("ExtOf(%d) = %q, want %q", tt, got, want)
		}
	}
}
