package pmtiles_test

import (
	"errors"
	"math"
	"testing"

	"github.com/ronhq/ron/roles/edge/pmtiles"
	"github.com/ronhq/ron/roles/edge/tiletype"
)

// The header fields the upstream tests assert for test_fixture_1
// (SOURCES.md §3).
func TestParseHeaderFixture(t *testing.T) {
	h, err := pmtiles.ParseHeader(fixture(t, "test_fixture_1.pmtiles"))
	if err != nil {
		t.Fatal(err)
	}
	want := pmtiles.Header{
		Version: 3, RootOffset: 127, RootLength: 25, MetadataOffset: 152, MetadataLength: 247,
		TileDataOffset: 399, TileDataLength: 69, AddressedTiles: 1, TileEntries: 1, TileContents: 1,
		InternalCompression: pmtiles.CompressionGzip, TileCompression: pmtiles.CompressionGzip,
		TileType: pmtiles.TileTypeMVT, MaxLonE7: 9999999, MaxLatE7: 10000000,
	}
	if h != want {
		t.Fatalf("header\n got %+v\nwant %+v", h, want)
	}
	if err := h.CheckBounds(468); err != nil || !h.RootInFirst16K() {
		t.Fatalf("bounds: %v, root in 16K %v", err, h.RootInFirst16K())
	}
	if minLon, minLat, maxLon, maxLat := h.Bounds(); minLon != 0 || minLat != 0 || maxLon != 0.9999999 || maxLat != 1 {
		t.Fatalf("bounds %v %v %v %v", minLon, minLat, maxLon, maxLat)
	}
}

func validHeader() pmtiles.Header {
	return pmtiles.Header{
		Version: 3, RootOffset: 127, RootLength: 10, MetadataOffset: 137, MetadataLength: 5,
		LeafOffset: 142, LeafLength: 0, TileDataOffset: 142, TileDataLength: 100,
		AddressedTiles: 7, TileEntries: 6, TileContents: 5, Clustered: true,
		InternalCompression: pmtiles.CompressionBrotli, TileCompression: pmtiles.CompressionNone,
		TileType: pmtiles.TileTypeWebP, MinZoom: 2, MaxZoom: 14,
		MinLonE7: -1234567890, MinLatE7: -850000000, MaxLonE7: 1234567890, MaxLatE7: 850000000,
		CenterZoom: 9, CenterLonE7: -5, CenterLatE7: 77,
	}
}

func TestHeaderRoundTrip(t *testing.T) {
	h := validHeader()
	b, _ := h.MarshalBinary()
	if len(b) != pmtiles.HeaderSize {
		t.Fatalf("%d bytes", len(b))
	}
	got, err := pmtiles.ParseHeader(b)
	if err != nil || got != h {
		t.Fatalf("round trip: %v\n got %+v\nwant %+v", err, got, h)
	}
	if lon, lat, z := got.Center(); lon != -5e-7 || lat != 7.7e-6 || z != 9 {
		t.Fatalf("center %v %v %v", lon, lat, z)
	}
}

// Every header rule of docs/edge.md §4.2, one row each.
func TestParseHeaderErrors(t *testing.T) {
	enc := func(f func(*pmtiles.Header)) []byte {
		h := validHeader()
		f(&h)
		b, _ := h.MarshalBinary()
		return b
	}
	raw := func(f func([]byte)) []byte {
		b := enc(func(*pmtiles.Header) {})
		f(b)
		return b
	}
	for _, c := range []struct {
		name string
		b    []byte
		want error
	}{
		{"empty", nil, pmtiles.ErrShort},
		{"126 bytes", enc(func(*pmtiles.Header) {})[:126], pmtiles.ErrShort},
		{"bad magic", raw(func(b []byte) { b[0] = 'p' }), pmtiles.ErrBadMagic},
		{"v2 magic", raw(func(b []byte) { copy(b, "PM\x02") }), pmtiles.ErrBadMagic},
		{"version 4", enc(func(h *pmtiles.Header) { h.Version = 4 }), pmtiles.ErrFutureVersion},
		{"version 255", enc(func(h *pmtiles.Header) { h.Version = 255 }), pmtiles.ErrFutureVersion},
		{"version 2", enc(func(h *pmtiles.Header) { h.Version = 2 }), pmtiles.ErrOldVersion},
		{"version 0", raw(func(b []byte) { b[7] = 0 }), pmtiles.ErrOldVersion},
		{"min zoom > max zoom", enc(func(h *pmtiles.Header) { h.MinZoom, h.MaxZoom = 5, 4 }), pmtiles.ErrZoom},
		{"max zoom 32", enc(func(h *pmtiles.Header) { h.MaxZoom = 32 }), pmtiles.ErrZoom},
		{"internal compression 0", enc(func(h *pmtiles.Header) { h.InternalCompression = 0 }), pmtiles.ErrCompressionCode},
		{"internal compression 5", enc(func(h *pmtiles.Header) { h.InternalCompression = 5 }), pmtiles.ErrCompressionCode},
		{"tile compression 5", enc(func(h *pmtiles.Header) { h.TileCompression = 5 }), pmtiles.ErrCompressionCode},
		{"tile compression 255", enc(func(h *pmtiles.Header) { h.TileCompression = 255 }), pmtiles.ErrCompressionCode},
		{"root overflows", enc(func(h *pmtiles.Header) { h.RootOffset, h.RootLength = math.MaxUint64, 2 }), pmtiles.ErrSection},
		{"tile data past int64", enc(func(h *pmtiles.Header) { h.TileDataOffset = math.MaxInt64 }), pmtiles.ErrSection},
		{"leaf overflows", enc(func(h *pmtiles.Header) { h.LeafLength = math.MaxUint64 }), pmtiles.ErrSection},
	} {
		_, err := pmtiles.ParseHeader(c.b)
		if !errors.Is(err, c.want) || !errors.Is(err, pmtiles.ErrInvalid) {
			t.Errorf("%s: got %v, want %v", c.name, err, c.want)
		}
	}
	for _, ok := range []func(*pmtiles.Header){
		func(h *pmtiles.Header) { h.TileCompression = 0 },
		func(h *pmtiles.Header) { h.InternalCompression, h.TileCompression = 4, 4 },
		func(h *pmtiles.Header) { h.MinZoom, h.MaxZoom = 31, 31 },
		func(h *pmtiles.Header) { h.TileType = 200 },
	} {
		if _, err := pmtiles.ParseHeader(enc(ok)); err != nil {
			t.Errorf("valid header refused: %v", err)
		}
	}
}

// Sections against the file size: within (zero-length sections included,
// at offset 0 or at the end), past EOF, and a file too short for a header.
func TestHeaderCheckBounds(t *testing.T) {
	h := validHeader() // ends at 242
	for _, c := range []struct {
		name string
		f    func(*pmtiles.Header)
		size int64
		want error
	}{
		{"exact", func(*pmtiles.Header) {}, 242, nil},
		{"one byte short", func(*pmtiles.Header) {}, 241, pmtiles.ErrSection},
		{"zero-length at 0", func(h *pmtiles.Header) { h.MetadataOffset, h.MetadataLength = 0, 0 }, 242, nil},
		{"zero-length at end", func(h *pmtiles.Header) { h.LeafOffset = 242 }, 242, nil},
		{"zero-length past end", func(h *pmtiles.Header) { h.LeafOffset = 243 }, 242, pmtiles.ErrSection},
		{"root past EOF", func(h *pmtiles.Header) { h.RootLength = 1000 }, 242, pmtiles.ErrSection},
		{"overflow", func(h *pmtiles.Header) { h.TileDataOffset = math.MaxUint64 }, 242, pmtiles.ErrSection},
		{"short file", func(*pmtiles.Header) {}, 100, pmtiles.ErrShort},
	} {
		hh := h
		c.f(&hh)
		if err := hh.CheckBounds(c.size); !errors.Is(err, c.want) || (c.want == nil) != (err == nil) {
			t.Errorf("%s: got %v, want %v", c.name, err, c.want)
		}
	}
	h.RootOffset, h.RootLength = 16000, 385
	if h.RootInFirst16K() {
		t.Fatal("root ending at 16385 reported inside the first 16 KiB")
	}
	h.RootLength = 384
	if !h.RootInFirst16K() {
		t.Fatal("root ending at 16384 reported outside")
	}
}

func TestEnumStrings(t *testing.T) {
	for c, want := range map[pmtiles.Compression][2]string{
		0: {"unknown", ""}, 1: {"none", ""}, 2: {"gzip", "gzip"}, 3: {"brotli", "br"}, 4: {"zstd", "zstd"}, 9: {"code 9", ""},
	} {
		if c.String() != want[0] || c.ContentEncoding() != want[1] {
			t.Errorf("%d: %q %q", c, c.String(), c.ContentEncoding())
		}
	}
	for tt, want := range map[pmtiles.TileType]string{0: "unknown", 1: "mvt", 2: "png", 3: "jpeg", 4: "webp", 5: "avif", 6: "mlt", 7: "unknown"} {
		if tt.String() != want {
			t.Errorf("%d: %q", tt, tt.String())
		}
	}
}

// The header enums map onto the shared tiletype values.
func TestTileTypeAndCoding(t *testing.T) {
	for tt := range pmtiles.TileType(255) {
		want := tiletype.Type(tt)
		if tt > pmtiles.TileTypeMLT {
			want = tiletype.TypeUnknown
		}
		if tt.Type() != want {
			t.Errorf("TileType %d → %v", tt, tt.Type())
		}
	}
	for c, want := range map[pmtiles.Compression]tiletype.Coding{0: tiletype.Unknown, 1: tiletype.None, 2: tiletype.Gzip,
		3: tiletype.Brotli, 4: tiletype.Zstd, 5: tiletype.Unknown, 255: tiletype.Unknown} {
		if c.Coding() != want || c.ContentEncoding() != want.ContentEncoding() {
			t.Errorf("Compression %d → %v", c, c.Coding())
		}
	}
}
