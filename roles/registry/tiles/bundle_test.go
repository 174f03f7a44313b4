package tiles

import (
	"bytes"
	"encoding/binary"
	"slices"
	"testing"
)

func TestEntryBundle(t *testing.T) {
	leaves := [][]byte{{}, []byte("a"), bytes.Repeat([]byte{7}, MaxLeafSize), []byte("xyz")}
	b := EntryBundle(leaves)
	want := []byte{0, 0, 0, 1, 'a', 0xff, 0xff}
	if !bytes.Equal(b[:len(want)], want) || len(b) != 2*4+1+MaxLeafSize+3 {
		t.Fatalf("bundle prefix %x, len %d", b[:len(want)], len(b))
	}
	got, err := ParseEntryBundle(b)
	if err != nil || !slices.EqualFunc(got, leaves, bytes.Equal) {
		t.Fatalf("round trip: %d leaves, %v", len(got), err)
	}
	if len(EntryBundle(nil)) != 0 {
		t.Fatal("empty bundle not empty")
	}
	defer func() {
		if recover() == nil {
			t.Fatal("oversized leaf did not panic")
		}
	}()
	EntryBundle([][]byte{make([]byte, MaxLeafSize+1)})
}

func TestParseEntryBundleBad(t *testing.T) {
	full := EntryBundle(testLeaves(0, TileWidth))
	for name, b := range map[string][]byte{
		"odd length byte":  {0},
		"truncated leaf":   {0, 3, 'a', 'b'},
		"length only":      {0, 1},
		"too many entries": append(full, 0, 0),
	} {
		if _, err := ParseEntryBundle(b); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	if l, err := ParseEntryBundle(full); err != nil || len(l) != TileWidth {
		t.Fatalf("full bundle: %d, %v", len(l), err)
	}
	if binary.BigEndian.Uint16(full) != uint16(len(testLeaf(0))) {
		t.Fatal("length prefix")
	}
}
