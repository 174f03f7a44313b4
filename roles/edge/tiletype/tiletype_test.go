package tiletype_test

import (
	"bytes"
	"compress/gzip"
	"errors"
	"slices"
	"testing"

	"github.com/andybalholm/brotli"
	"github.com/klauspost/compress/zstd"
	"go.uber.org/goleak"

	"github.com/ronhq/ron/roles/edge/tiletype"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// The docs/edge.md §6.2 table, row by row, plus out-of-range values.
func TestTypeTable(t *testing.T) {
	for _, c := range []struct {
		typ       tiletype.Type
		name, ct  string
		exts      []string
		tilejson  string
		accept    []string
		refuse    []string
		pmtilesID uint8
	}{
		{tiletype.TypeUnknown, "unknown", "application/octet-stream", nil, "bin", []string{"bin", "png", "x"}, nil, 0},
		{tiletype.TypeMVT, "mvt", "application/vnd.mapbox-vector-tile", []string{"mvt", "pbf"}, "mvt", []string{"mvt", "pbf"}, []string{"png", "MVT", ""}, 1},
		{tiletype.TypePNG, "png", "image/png", []string{"png"}, "png", []string{"png"}, []string{"jpg", "PNG"}, 2},
		{tiletype.TypeJPEG, "jpeg", "image/jpeg", []string{"jpg", "jpeg"}, "jpg", []string{"jpg", "jpeg"}, []string{"png"}, 3},
		{tiletype.TypeWebP, "webp", "image/webp", []string{"webp"}, "webp", []string{"webp"}, []string{"png"}, 4},
		{tiletype.TypeAVIF, "avif", "image/avif", []string{"avif"}, "avif", []string{"avif"}, []string{"webp"}, 5},
		{tiletype.TypeMLT, "mlt", "application/vnd.maplibre-vector-tile", []string{"mlt"}, "mlt", []string{"mlt"}, []string{"mvt"}, 6},
		{tiletype.TypeJSON, "json", "application/json", []string{"json"}, "json", []string{"json"}, []string{"geojson"}, 7},
		{tiletype.Type(200), "unknown", "application/octet-stream", nil, "bin", []string{"anything"}, nil, 200},
	} {
		if c.typ.String() != c.name || c.typ.ContentType() != c.ct || !slices.Equal(c.typ.Extensions(), c.exts) ||
			c.typ.TileJSONExt() != c.tilejson || uint8(c.typ) != c.pmtilesID {
			t.Errorf("%d: %q %q %v %q", c.typ, c.typ.String(), c.typ.ContentType(), c.typ.Extensions(), c.typ.TileJSONExt())
		}
		for _, e := range c.accept {
			if !c.typ.AcceptsExt(e) {
				t.Errorf("%s refuses %q", c.typ, e)
			}
		}
		for _, e := range c.refuse {
			if c.typ.AcceptsExt(e) {
				t.Errorf("%s accepts %q", c.typ, e)
			}
		}
	}
}

func TestFromMBTilesFormat(t *testing.T) {
	for _, c := range []struct {
		in   string
		want tiletype.Type
		ok   bool
	}{
		{"", tiletype.TypeUnknown, false}, {"  ", tiletype.TypeUnknown, false},
		{"pbf", tiletype.TypeMVT, true}, {" MVT ", tiletype.TypeMVT, true}, {"png", tiletype.TypePNG, true},
		{"jpg", tiletype.TypeJPEG, true}, {"JPEG", tiletype.TypeJPEG, true}, {"webp", tiletype.TypeWebP, true},
		{"avif", tiletype.TypeAVIF, true}, {"mlt", tiletype.TypeMLT, true}, {"json", tiletype.TypeJSON, true},
		{"geojson", tiletype.TypeUnknown, true}, {"image/png", tiletype.TypeUnknown, true},
	} {
		if got, ok := tiletype.FromMBTilesFormat(c.in); got != c.want || ok != c.ok {
			t.Errorf("%q: %v %v", c.in, got, ok)
		}
	}
}

func TestSniff(t *testing.T) {
	for _, c := range []struct {
		head []byte
		want tiletype.Type
		cod  tiletype.Coding
	}{
		{[]byte{0x89, 'P', 'N', 'G', 0x0d}, tiletype.TypePNG, tiletype.None},
		{[]byte{0xff, 0xd8, 0xff, 0xe0}, tiletype.TypeJPEG, tiletype.None},
		{[]byte("RIFF\x00\x00\x00\x00WEBPVP8 "), tiletype.TypeWebP, tiletype.None},
		{[]byte("RIFF\x00\x00\x00\x00WAVE"), tiletype.TypeUnknown, tiletype.None},
		{[]byte("RIFF"), tiletype.TypeUnknown, tiletype.None},
		{[]byte{0x1f, 0x8b, 8}, tiletype.TypeMVT, tiletype.Gzip},
		{[]byte{0x1f}, tiletype.TypeUnknown, tiletype.None},
		{[]byte{0x1a, 0x02}, tiletype.TypeUnknown, tiletype.None},
		{nil, tiletype.TypeUnknown, tiletype.None},
	} {
		if got := tiletype.Sniff(c.head); got != c.want {
			t.Errorf("Sniff(% x) = %v", c.head, got)
		}
		if got := tiletype.SniffCoding(c.head); got != c.cod {
			t.Errorf("SniffCoding(% x) = %v", c.head, got)
		}
	}
}

func TestCodingNames(t *testing.T) {
	for _, c := range []struct {
		c              tiletype.Coding
		name, ce, etag string
	}{
		{tiletype.None, "none", "", ""}, {tiletype.Gzip, "gzip", "gzip", "-gz"},
		{tiletype.Brotli, "brotli", "br", "-br"}, {tiletype.Zstd, "zstd", "zstd", "-zst"},
		{tiletype.Unknown, "unknown", "", ""}, {tiletype.Coding(9), "unknown", "", ""},
	} {
		if c.c.String() != c.name || c.c.ContentEncoding() != c.ce || c.c.ETagSuffix() != c.etag {
			t.Errorf("%d: %q %q %q", c.c, c.c.String(), c.c.ContentEncoding(), c.c.ETagSuffix())
		}
	}
}

// encode compresses b with c for the tests.
func encode(t *testing.T, c tiletype.Coding, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	switch c {
	case tiletype.Gzip:
		w := gzip.NewWriter(&buf)
		_, _ = w.Write(b)
		_ = w.Close()
	case tiletype.Brotli:
		w := brotli.NewWriter(&buf)
		_, _ = w.Write(b)
		_ = w.Close()
	case tiletype.Zstd:
		w, err := zstd.NewWriter(&buf, zstd.WithEncoderConcurrency(1))
		if err != nil {
			t.Fatal(err)
		}
		_, _ = w.Write(b)
		_ = w.Close()
	default:
		return b
	}
	return buf.Bytes()
}

// Every coding round-trips; output over the cap is ErrDecodedCap (exactly
// at the cap is fine); garbage and truncation are ErrUndecodable.
func TestDecode(t *testing.T) {
	plain := bytes.Repeat([]byte("tile bytes 0123456789 "), 200)
	for _, c := range []tiletype.Coding{tiletype.None, tiletype.Gzip, tiletype.Brotli, tiletype.Zstd, tiletype.Unknown} {
		enc := encode(t, c, plain)
		got, err := c.Decode(enc, int64(len(plain)))
		if err != nil || !bytes.Equal(got, plain) {
			t.Fatalf("%s: %v", c, err)
		}
		if _, err := c.Decode(enc, int64(len(plain))-1); !errors.Is(err, tiletype.ErrDecodedCap) {
			t.Errorf("%s over cap: %v", c, err)
		}
		if c == tiletype.None || c == tiletype.Unknown {
			continue
		}
		for name, bad := range map[string][]byte{"garbage": []byte("definitely not compressed"), "truncated": enc[:len(enc)/2]} {
			if _, err := c.Decode(bad, 1<<20); !errors.Is(err, tiletype.ErrUndecodable) {
				t.Errorf("%s %s: %v", c, name, err)
			}
		}
	}
}

// A bomb (many MiB of zeros in a few KiB) stops at the cap without
// decoding the rest.
func TestDecodeBomb(t *testing.T) {
	zeros := make([]byte, 4<<20)
	for _, c := range []tiletype.Coding{tiletype.Gzip, tiletype.Brotli, tiletype.Zstd} {
		bomb := encode(t, c, zeros)
		if len(bomb) > 1<<20 {
			t.Fatalf("%s bomb is %d bytes", c, len(bomb))
		}
		if _, err := c.Decode(bomb, 512<<10); !errors.Is(err, tiletype.ErrDecodedCap) {
			t.Errorf("%s: %v", c, err)
		}
	}
}

func FuzzDecode(f *testing.F) {
	f.Add([]byte{0x1f, 0x8b, 8, 0}, uint8(1))
	f.Add([]byte{0x28, 0xb5, 0x2f, 0xfd}, uint8(3))
	f.Fuzz(func(t *testing.T, b []byte, c uint8) {
		out, err := tiletype.Coding(c%5).Decode(b, 1<<16)
		if err == nil && len(out) > 1<<16 {
			t.Fatalf("%d bytes over the cap", len(out))
		}
	})
}
