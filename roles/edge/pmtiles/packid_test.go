package pmtiles_test

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"testing"

	"github.com/ronhq/ron/roles/edge/pmtiles"
	"github.com/zeebo/blake3"
)

// PackID is the first 16 bytes of BLAKE3(kind ‖ size u64 LE ‖ mtime i64 LE
// ‖ head), built here independently; every input changes it; the head is
// cut at 16 KiB.
func TestPackID(t *testing.T) {
	head := bytes.Repeat([]byte("PMTiles\x03"), 3000) // 24 000 bytes
	size, mtime := int64(716052), int64(-1_700_000_000_123_456_789)
	msg := []byte{pmtiles.KindPMTiles}
	msg = binary.LittleEndian.AppendUint64(msg, uint64(size))
	msg = binary.LittleEndian.AppendUint64(msg, uint64(mtime))
	msg = append(msg, head[:pmtiles.PackHeadBytes]...)
	sum := blake3.Sum256(msg)
	want := hex.EncodeToString(sum[:16])
	got := pmtiles.PackID(pmtiles.KindPMTiles, size, mtime, head)
	if got != want || len(got) != 32 {
		t.Fatalf("got %s, want %s", got, want)
	}
	if pmtiles.PackID(pmtiles.KindPMTiles, size, mtime, head[:pmtiles.PackHeadBytes]) != got {
		t.Fatal("head beyond 16 KiB changed the id")
	}
	seen := map[string]bool{got: true}
	for _, other := range []string{
		pmtiles.PackID(pmtiles.KindMBTiles, size, mtime, head),
		pmtiles.PackID(pmtiles.KindPMTiles, size+1, mtime, head),
		pmtiles.PackID(pmtiles.KindPMTiles, size, mtime+1, head),
		pmtiles.PackID(pmtiles.KindPMTiles, size, mtime, head[:100]),
		pmtiles.PackID(pmtiles.KindPMTiles, size, mtime, nil),
	} {
		if seen[other] {
			t.Fatalf("collision: %s", other)
		}
		seen[other] = true
	}
}
