package pmtiles_test

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"io"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/ronhq/ron/roles/edge/pmtiles"
	"github.com/ronhq/ron/roles/edge/pmtiles/pmtilestest"
)

// varints concatenates unsigned varints.
func varints(vs ...uint64) []byte {
	var b []byte
	for _, v := range vs {
		b = binary.AppendUvarint(b, v)
	}
	return b
}

func cat(parts ...[]byte) []byte { return bytes.Join(parts, nil) }

// Every directory corruption rule of docs/edge.md §5, one row each.
func TestParseDirectoryErrors(t *testing.T) {
	eleven := []byte{0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01}
	tenthTwo := []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02}
	for _, c := range []struct {
		name string
		b    []byte
		want error
	}{
		{"empty input", nil, pmtiles.ErrVarint},
		{"11-byte varint count", eleven, pmtiles.ErrVarint},
		{"11-byte varint tile id", cat(varints(1), eleven, varints(1, 1, 1)), pmtiles.ErrVarint},
		{"10th byte above 1", cat(varints(1), tenthTwo, varints(1, 1, 1)), pmtiles.ErrVarint},
		{"truncated varint", cat(varints(1, 0, 1, 1), []byte{0x80}), pmtiles.ErrVarint},
		{"truncated last offset", cat(varints(2, 0, 1, 1, 1, 5, 5, 1), []byte{0x80}), pmtiles.ErrVarint},
		{"count over the cap", cat(varints(pmtiles.MaxDirEntries+1), make([]byte, 8_000_008)), pmtiles.ErrCorrupt},
		{"count over the bytes", varints(1000, 1, 1, 1, 1), pmtiles.ErrCorrupt},
		{"offset 0 on the first entry", varints(1, 0, 1, 10, 0), pmtiles.ErrCorrupt},
		{"trailing bytes", varints(1, 0, 1, 10, 1, 0), pmtiles.ErrCorrupt},
		{"length 0", varints(1, 0, 1, 0, 1), pmtiles.ErrCorrupt},
		{"length above 2^32-1", varints(1, 0, 1, 1<<32, 1), pmtiles.ErrCorrupt},
		{"run length above 2^32-1", varints(1, 0, 1<<32, 1, 1), pmtiles.ErrCorrupt},
		{"tile id overflows", varints(2, math.MaxUint64, 1, 1, 1, 1, 1, 1, 0), pmtiles.ErrCorrupt},
		{"run overflows", varints(1, math.MaxUint64-1, 5, 1, 1), pmtiles.ErrCorrupt},
		{"contiguous offset overflows", varints(2, 0, 1, 1, 1, math.MaxUint32, 1, math.MaxUint64, 0), pmtiles.ErrCorrupt},
	} {
		es, err := pmtiles.ParseDirectory(c.b)
		if !errors.Is(err, c.want) || !errors.Is(err, pmtiles.ErrCorrupt) {
			t.Errorf("%s: got %v (%d entries), want %v", c.name, err, len(es), c.want)
		}
	}
}

// The largest 10-byte varint (2^64 − 1) is valid; the empty directory is
// valid; contiguous offsets resolve to previous offset + length.
func TestParseDirectoryValid(t *testing.T) {
	es, err := pmtiles.ParseDirectory(varints(0))
	if err != nil || len(es) != 0 {
		t.Fatalf("empty: %v, %v", es, err)
	}
	es, err = pmtiles.ParseDirectory(varints(3, 5, 1, math.MaxUint64-10, 2, 0, 1, 10, 20, 30, 101, 0, 1))
	want := []pmtiles.Entry{
		{TileID: 5, Offset: 100, Length: 10, RunLength: 2},
		{TileID: 6, Offset: 110, Length: 20, RunLength: 0},
		{TileID: math.MaxUint64 - 4, Offset: 0, Length: 30, RunLength: 1},
	}
	if err != nil || !reflect.DeepEqual(es, want) {
		t.Fatalf("got %+v, %v", es, err)
	}
}

// Random directories survive EncodeDirectory → ParseDirectory.
func TestDirectoryRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for range 200 {
		es := randomEntries(rng, rng.IntN(300))
		got, err := pmtiles.ParseDirectory(pmtilestest.EncodeDirectory(es))
		if err != nil || !reflect.DeepEqual(got, es) && len(es) > 0 {
			t.Fatalf("round trip of %d entries: %v", len(es), err)
		}
	}
}

func randomEntries(rng *rand.Rand, n int) []pmtiles.Entry {
	es := make([]pmtiles.Entry, n)
	var id, off uint64
	for i := range es {
		id += rng.Uint64N(1000)
		e := pmtiles.Entry{TileID: id, Length: 1 + rng.Uint32N(5000), RunLength: rng.Uint32N(4)}
		if rng.IntN(3) == 0 {
			off = rng.Uint64N(1 << 40)
		}
		e.Offset = off
		off += uint64(e.Length)
		es[i] = e
	}
	return es
}

// Internal decompression: none, gzip, brotli and zstd decode; code 0 and
// codes above 4 have no decoder but one can be supplied; broken streams and
// output over the cap are corruption.
func TestDecodeDirectoryCompression(t *testing.T) {
	es := randomEntries(rand.New(rand.NewPCG(5, 6)), 50)
	raw := pmtilestest.EncodeDirectory(es)
	for _, c := range []pmtiles.Compression{pmtiles.CompressionNone, pmtiles.CompressionGzip, pmtiles.CompressionBrotli, pmtiles.CompressionZstd} {
		b, err := pmtilestest.Compress(c, raw)
		if err != nil {
			t.Fatal(err)
		}
		got, err := pmtiles.DecodeDirectory(b, c, nil)
		if err != nil || !reflect.DeepEqual(got, es) {
			t.Fatalf("%s: %v", c, err)
		}
		if c != pmtiles.CompressionNone {
			if _, err := pmtiles.DecodeDirectory(b[:len(b)/2], c, nil); !errors.Is(err, pmtiles.ErrCorrupt) {
				t.Errorf("%s truncated: %v", c, err)
			}
		}
	}
	for _, c := range []pmtiles.Compression{pmtiles.CompressionUnknown, 9} {
		if _, err := pmtiles.DecodeDirectory(raw, c, nil); !errors.Is(err, pmtiles.ErrUnsupportedCompression) {
			t.Errorf("%s: %v", c, err)
		}
	}
	// A stand-in decoder for code 9 (gzip underneath) proves the extension point.
	fake := pmtiles.Codecs{9: func(r io.Reader) (io.ReadCloser, error) { return gzip.NewReader(r) }}
	gz, _ := pmtilestest.Compress(pmtiles.CompressionGzip, raw)
	if got, err := pmtiles.DecodeDirectory(gz, 9, fake); err != nil || !reflect.DeepEqual(got, es) {
		t.Fatalf("custom codec: %v", err)
	}
	if _, err := pmtiles.DecodeDirectory([]byte("not gzip"), pmtiles.CompressionGzip, nil); !errors.Is(err, pmtiles.ErrCorrupt) {
		t.Errorf("garbage gzip: %v", err)
	}
}

// A directory decompressing past 32 MiB is refused (a gzip bomb of 33
// concatenated 1 MiB members), as is raw input over the cap.
func TestDecodeDirectoryCap(t *testing.T) {
	member, err := pmtilestest.Compress(pmtiles.CompressionGzip, make([]byte, 1<<20))
	if err != nil {
		t.Fatal(err)
	}
	bomb := bytes.Repeat(member, pmtiles.MaxDirBytes>>20+1)
	big := make([]byte, pmtiles.MaxDirBytes+1)
	if _, err := pmtiles.DecodeDirectory(bomb, pmtiles.CompressionGzip, nil); !errors.Is(err, pmtiles.ErrCorrupt) {
		t.Fatalf("bomb: %v", err)
	}
	if _, err := pmtiles.DecodeDirectory(big, pmtiles.CompressionNone, nil); !errors.Is(err, pmtiles.ErrCorrupt) {
		t.Fatalf("raw over the cap: %v", err)
	}
}

func TestFindEntry(t *testing.T) {
	es := []pmtiles.Entry{{TileID: 5, RunLength: 1}, {TileID: 9, RunLength: 2}, {TileID: 9, RunLength: 0}, {TileID: 20}}
	for id, want := range map[uint64]int{0: -1, 4: -1, 5: 0, 8: 0, 9: 2, 19: 2, 20: 3, math.MaxUint64: 3} {
		e, ok := pmtiles.FindEntry(es, id)
		if (want < 0) == ok || ok && e != es[want] {
			t.Errorf("id %d: %+v %v, want index %d", id, e, ok, want)
		}
	}
	if _, ok := pmtiles.FindEntry(nil, 0); ok {
		t.Error("found in an empty directory")
	}
}

func newRand() *rand.Rand { return rand.New(rand.NewPCG(7, 8)) }
