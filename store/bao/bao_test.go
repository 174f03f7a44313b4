package bao

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/zeebo/blake3"

	"github.com/ronhq/ron/internal/fixtures"
)

var update = flag.Bool("update", false, "rewrite testdata/bao/group6_known_answers.json")

// baoInput is the input of the Bao vectors: a 4-byte little-endian counter
// from 1, cut to n bytes (testdata/SOURCES.md §2).
func baoInput(n int) []byte {
	in := make([]byte, 0, n+4)
	for i := uint32(1); len(in) < n; i++ {
		in = binary.LittleEndian.AppendUint32(in, i)
	}
	return in[:n]
}

func sum(b []byte) string {
	h := blake3.Sum256(b)
	return hex.EncodeToString(h[:])
}

// officialVectors is the part of a Bao vector file used here: Bao's own
// (testdata/bao/test_vectors.json, group 0) or abao's, from the same
// generator with 16 KiB groups (abao_group4_vectors.json, group 4).
type officialVectors struct {
	Hash []struct {
		InputLen int64  `json:"input_len"`
		BaoHash  string `json:"bao_hash"`
	} `json:"hash"`
	Outboard []struct {
		InputLen      int64  `json:"input_len"`
		OutputLen     int    `json:"output_len"`
		BaoHash       string `json:"bao_hash"`
		EncodedBlake3 string `json:"encoded_blake3"`
		OutboardCorr  []int  `json:"outboard_corruptions"`
		InputCorr     []int  `json:"input_corruptions"`
	} `json:"outboard"`
	Slice []struct {
		InputLen int64  `json:"input_len"`
		BaoHash  string `json:"bao_hash"`
		Slices   []struct {
			Start        int64  `json:"start"`
			Len          int64  `json:"len"`
			OutputLen    int    `json:"output_len"`
			OutputBlake3 string `json:"output_blake3"`
			Corruptions  []int  `json:"corruptions"`
		} `json:"slices"`
	} `json:"slice"`
}

// vectorSet is one vector file with the tree it was generated for.
type vectorSet struct {
	file string
	tr   tree
}

// vectorSets are the published vectors: Bao's standard tree (group 0) and
// abao's 16 KiB groups (group 4).
var vectorSets = []vectorSet{{"test_vectors.json", tree{log: 0}}, {"abao_group4_vectors.json", tree{log: 4}}}

func loadOfficial(t *testing.T, file string) officialVectors {
	var v officialVectors
	if err := json.Unmarshal(fixtures.Read(t, "bao", file), &v); err != nil {
		t.Fatal(err)
	}
	if len(v.Hash) < 13 || len(v.Outboard) < 13 || len(v.Slice) < 13 {
		t.Fatalf("the vectors of %s are incomplete", file)
	}
	return v
}

// forEachSet runs test once per vector set.
func forEachSet(t *testing.T, test func(t *testing.T, v officialVectors, std tree)) {
	for _, set := range vectorSets {
		t.Run(fmt.Sprintf("group %d", set.tr.log), func(t *testing.T) { test(t, loadOfficial(t, set.file), set.tr) })
	}
}

// TestOfficialRoots: the root of every vector input at the set's group
// size is the published one (for group 4, the chunk-group roots
// lukechampine.com/blake3 tests against), which is plain BLAKE3.
func TestOfficialRoots(t *testing.T) {
	forEachSet(t, func(t *testing.T, v officialVectors, std tree) {
		for _, h := range v.Hash {
			in := baoInput(int(h.InputLen))
			_, root, err := std.encode(bytes.NewReader(in), h.InputLen)
			if err != nil || hex.EncodeToString(root[:]) != h.BaoHash || sum(in) != h.BaoHash {
				t.Fatalf("input %d: root %x (%v), want %s", h.InputLen, root, err, h.BaoHash)
			}
		}
	})
}

// TestOfficialOutboards: the wiring reproduces every published outboard
// encoding (groups 0 and 4) and its root, verifies the input with it, and
// fails for every listed corruption of the outboard or of the input, with
// only a correct prefix of the input written.
func TestOfficialOutboards(t *testing.T) {
	forEachSet(t, testOfficialOutboards)
}

func testOfficialOutboards(t *testing.T, vs officialVectors, std tree) {
	for _, v := range vs.Outboard {
		in := baoInput(int(v.InputLen))
		ob, root, err := std.encode(bytes.NewReader(in), v.InputLen)
		if err != nil {
			t.Fatal(err)
		}
		if len(ob) != v.OutputLen || sum(ob) != v.EncodedBlake3 || hex.EncodeToString(root[:]) != v.BaoHash {
			t.Fatalf("input %d: outboard %d bytes %s, root %x", v.InputLen, len(ob), sum(ob), root)
		}
		if _, err := std.parseOutboard(ob, v.InputLen); err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		if err := std.verify(&out, bytes.NewReader(in), ob, root); err != nil || !bytes.Equal(out.Bytes(), in) {
			t.Fatalf("input %d: verify %v", v.InputLen, err)
		}
		for _, off := range v.OutboardCorr {
			bad := bytes.Clone(ob)
			bad[off] ^= 1
			assertRejected(t, func(w io.Writer) error { return std.verify(w, bytes.NewReader(in), bad, root) }, in)
		}
		for _, off := range v.InputCorr {
			bad := bytes.Clone(in)
			bad[off] ^= 1
			assertRejected(t, func(w io.Writer) error { return std.verify(w, bytes.NewReader(bad), ob, root) }, in)
		}
	}
}

// assertRejected runs read and checks that it failed and that what it
// wrote is a prefix of want: no wrong byte reached the destination.
func assertRejected(t *testing.T, read func(io.Writer) error, want []byte) {
	t.Helper()
	var out bytes.Buffer
	if err := read(&out); err == nil {
		t.Fatal("a corrupted input verified")
	}
	if !bytes.HasPrefix(want, out.Bytes()) {
		t.Fatalf("%d bytes written, not a prefix of the object", out.Len())
	}
}

// TestOfficialSlices: every published slice inside its object (groups 0
// and 4) is extracted byte for byte, verifies to exactly the range, and
// fails for every listed corruption. Bao's empty slices and slices past the
// end are refused here: ron never asks for them (docs/storage.md §4.1).
func TestOfficialSlices(t *testing.T) {
	forEachSet(t, testOfficialSlices)
}

func testOfficialSlices(t *testing.T, vs officialVectors, std tree) {
	inside := 0
	for _, v := range vs.Slice {
		in := baoInput(int(v.InputLen))
		ob, root, err := std.encode(bytes.NewReader(in), v.InputLen)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range v.Slices {
			from, to, err := std.span(s.Start, s.Len, v.InputLen)
			if s.Len == 0 || s.Start+s.Len > v.InputLen {
				if !errors.Is(err, ErrBadRange) {
					t.Fatalf("input %d slice %d+%d: %v, want ErrBadRange", v.InputLen, s.Start, s.Len, err)
				}
				continue
			}
			inside++
			var slice bytes.Buffer
			if err := std.extractSlice(&slice, bytes.NewReader(in[from:to]), ob, s.Start, s.Len); err != nil {
				t.Fatal(err)
			}
			if slice.Len() != s.OutputLen || sum(slice.Bytes()) != s.OutputBlake3 {
				t.Fatalf("input %d slice %d+%d: %d bytes %s", v.InputLen, s.Start, s.Len, slice.Len(), sum(slice.Bytes()))
			}
			want := in[s.Start : s.Start+s.Len]
			var out bytes.Buffer
			if err := std.verifySlice(&out, bytes.NewReader(slice.Bytes()), root, s.Start, s.Len); err != nil || !bytes.Equal(out.Bytes(), want) {
				t.Fatalf("input %d slice %d+%d: verify %v", v.InputLen, s.Start, s.Len, err)
			}
			for _, off := range s.Corruptions {
				bad := bytes.Clone(slice.Bytes())
				bad[off] ^= 1
				assertRejected(t, func(w io.Writer) error {
					return std.verifySlice(w, bytes.NewReader(bad), root, s.Start, s.Len)
				}, want)
			}
		}
	}
	if inside < 50 {
		t.Fatalf("only %d published slices inside their object were checked", inside)
	}
}

// knownAnswer is one object of testdata/bao/group6_known_answers.json:
// ron's 64 KiB-group outboard of baoInput(Size) and some of its slices.
type knownAnswer struct {
	Size          int64        `json:"size"`
	Root          string       `json:"root"`
	OutboardLen   int64        `json:"outboard_len"`
	OutboardBlake string       `json:"outboard_blake3"`
	Slices        []knownSlice `json:"slices"`
}

type knownSlice struct {
	Start      int64  `json:"start"`
	Len        int64  `json:"len"`
	SliceLen   int    `json:"slice_len"`
	SliceBlake string `json:"slice_blake3"`
}

// knownSizes are on and around the group boundaries and the tree's depth
// changes; knownRanges start and end on and off group boundaries.
var (
	knownSizes  = []int64{0, 1, 1023, 1024, 65535, 65536, 65537, 131072, 131073, 196609, 1 << 20, 1<<20 + 1, 5<<20 + 12345}
	knownRanges = [][2]int64{{0, 1}, {0, GroupSize}, {1, GroupSize}, {GroupSize - 1, 2}, {GroupSize, GroupSize}, {3*GroupSize + 7, 2*GroupSize + 100}}
)

// compute returns the known answer of an object of size bytes.
func compute(t *testing.T, size int64) knownAnswer {
	in := baoInput(int(size))
	ob, root, err := Encode(bytes.NewReader(in), size)
	if err != nil {
		t.Fatal(err)
	}
	ka := knownAnswer{Size: size, Root: hex.EncodeToString(root[:]), OutboardLen: int64(len(ob)), OutboardBlake: sum(ob)}
	for _, r := range append(knownRanges, [2]int64{size - 1, 1}) {
		from, to, err := Span(r[0], r[1], size)
		if err != nil {
			continue
		}
		var slice bytes.Buffer
		if err := ExtractSlice(&slice, bytes.NewReader(in[from:to]), ob, r[0], r[1]); err != nil {
			t.Fatal(err)
		}
		ka.Slices = append(ka.Slices, knownSlice{Start: r[0], Len: r[1], SliceLen: slice.Len(), SliceBlake: sum(slice.Bytes())})
	}
	return ka
}

// TestGroup6KnownAnswers: ron's group size reproduces the recorded
// outboards and slices, and every root equals the plain BLAKE3 hash of the
// object (computed by another implementation, zeebo/blake3), as it must
// for every group size. -update rewrites the file (review the diff: a
// change means the format changed).
func TestGroup6KnownAnswers(t *testing.T) {
	var got []knownAnswer
	for _, size := range knownSizes {
		ka := compute(t, size)
		if want := sum(baoInput(int(size))); ka.Root != want {
			t.Fatalf("size %d: root %s, BLAKE3 %s", size, ka.Root, want)
		}
		if ka.OutboardLen != 8+64*max(0, (size+GroupSize-1)/GroupSize-1) {
			t.Fatalf("size %d: outboard %d bytes", size, ka.OutboardLen)
		}
		got = append(got, ka)
	}
	path := filepath.Join(fixtures.Dir(t), "bao", "group6_known_answers.json")
	if *update {
		b, err := json.MarshalIndent(got, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var want []knownAnswer
	if err := json.Unmarshal(fixtures.Read(t, "bao", "group6_known_answers.json"), &want); err != nil {
		t.Fatal(err)
	}
	gb, _ := json.Marshal(got)
	wb, _ := json.Marshal(want)
	if !bytes.Equal(gb, wb) {
		t.Fatalf("known answers differ:\n got %s\nwant %s", gb, wb)
	}
}
