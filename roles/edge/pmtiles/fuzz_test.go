package pmtiles_test

import (
	"bytes"
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/ronhq/ron/roles/edge/pmtiles"
	"github.com/ronhq/ron/roles/edge/pmtiles/pmtilestest"
)

// smallArchives are fuzz seeds: the small fixtures and writer archives with
// leaves under each internal compression.
func smallArchives(f *testing.F) [][]byte {
	out := [][]byte{}
	for _, name := range []string{"test_fixture_1.pmtiles", "test_fixture_2.pmtiles", "test_fixture_mlt.pmtiles", "invalid.pmtiles", "invalid_v4.pmtiles"} {
		out = append(out, fixture(f, name))
	}
	for _, ic := range []pmtiles.Compression{pmtiles.CompressionNone, pmtiles.CompressionGzip, pmtiles.CompressionBrotli, pmtiles.CompressionZstd} {
		out = append(out, mustBuild(f, runTiles()[:30], pmtilestest.Options{InternalCompression: ic, LeafSize: 4, LeafLevels: 2}))
	}
	out = append(out, mustBuild(f, pyramid(1), pmtilestest.Options{InternalCompression: pmtiles.CompressionNone}))
	return out
}

// FuzzParseHeader: never panics; a header that parses re-encodes to itself.
func FuzzParseHeader(f *testing.F) {
	for _, b := range smallArchives(f) {
		f.Add(b[:min(len(b), pmtiles.HeaderSize)])
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		h, err := pmtiles.ParseHeader(b)
		if err != nil {
			return
		}
		_ = h.CheckBounds(int64(len(b)))
		enc, _ := h.MarshalBinary()
		back, err := pmtiles.ParseHeader(enc)
		if err != nil || back != h {
			t.Fatalf("re-encoded header: %v\n%+v\n%+v", err, back, h)
		}
	})
}

// FuzzParseDirectory: never panics; a directory that parses re-encodes and
// parses to the same entries.
func FuzzParseDirectory(f *testing.F) {
	f.Add(varints(0))
	f.Add(varints(3, 5, 1, 100, 2, 0, 1, 10, 20, 30, 101, 0, 1))
	f.Add([]byte{1, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01, 1, 5, 1})
	f.Add(pmtilestest.EncodeDirectory(randomEntries(newRand(), 40)))
	f.Fuzz(func(t *testing.T, b []byte) {
		es, err := pmtiles.ParseDirectory(b)
		if err != nil {
			return
		}
		back, err := pmtiles.ParseDirectory(pmtilestest.EncodeDirectory(es))
		if err != nil || (len(es) > 0 && !reflect.DeepEqual(back, es)) {
			t.Fatalf("round trip: %v", err)
		}
	})
}

// FuzzDecodeDirectory: compressed directories under any code never panic.
func FuzzDecodeDirectory(f *testing.F) {
	raw := pmtilestest.EncodeDirectory(randomEntries(newRand(), 20))
	for c := pmtiles.CompressionNone; c <= pmtiles.CompressionZstd; c++ {
		b, _ := pmtilestest.Compress(c, raw)
		f.Add(b, uint8(c))
	}
	f.Fuzz(func(t *testing.T, b []byte, c uint8) {
		_, _ = pmtiles.DecodeDirectory(b, pmtiles.Compression(c%6), nil)
	})
}

// FuzzOpen: Open, lookups, reads and VerifyFull on arbitrary bytes never
// panic and end within a bounded time.
func FuzzOpen(f *testing.F) {
	for _, b := range smallArchives(f) {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		r, err := pmtiles.Open(ctx, bytes.NewReader(b), int64(len(b)), pmtiles.Options{})
		if err != nil {
			return
		}
		for id := uint64(0); id < 90; id++ {
			ref, ok, err := r.TileByID(ctx, id)
			if ok && err == nil {
				if _, err := r.ReadTile(ctx, ref); err != nil {
					t.Fatalf("tile %d: found at %+v but unreadable: %v", id, ref, err)
				}
			}
		}
		_ = r.VerifyFull(ctx)
	})
}
