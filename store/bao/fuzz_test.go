package bao

import (
	"bytes"
	"testing"
)

// fuzzSize is the object the fuzz targets read: two whole groups and a
// partial one, so slices and streams cross group boundaries and parents.
const fuzzSize = 2*GroupSize + 10

// FuzzParseOutboard: any bytes and size either parse to an outboard of
// exactly the size's shape, or fail; nothing panics.
func FuzzParseOutboard(f *testing.F) {
	ob, _, err := Encode(bytes.NewReader(baoInput(fuzzSize)), fuzzSize)
	if err != nil {
		f.Fatal(err)
	}
	f.Add([]byte(ob), int64(fuzzSize))
	f.Add([]byte{0, 0, 0, 0, 0, 0, 0, 0}, int64(0))
	f.Add([]byte{1, 0, 0, 0, 0, 0, 0, 0}, int64(1))
	f.Add([]byte{}, int64(-1))
	f.Fuzz(func(t *testing.T, b []byte, size int64) {
		got, err := ParseOutboard(b, size)
		if err != nil {
			return
		}
		if got.Size() != size || int64(len(got)) != OutboardSize(size) {
			t.Fatalf("parsed %d bytes stating %d for size %d", len(got), got.Size(), size)
		}
	})
}

// FuzzVerifySlice: whatever slice and range a source sends for the fuzz
// object's id, the reader writes only the object's own bytes of that range,
// and all of them when it reports success.
func FuzzVerifySlice(f *testing.F) {
	in := baoInput(fuzzSize)
	ob, id, err := Encode(bytes.NewReader(in), fuzzSize)
	if err != nil {
		f.Fatal(err)
	}
	for _, r := range [][2]int64{{0, 1}, {GroupSize - 3, 7}, {0, fuzzSize}, {2 * GroupSize, 10}} {
		from, to, _ := Span(r[0], r[1], fuzzSize)
		var b bytes.Buffer
		if err := ExtractSlice(&b, bytes.NewReader(in[from:to]), ob, r[0], r[1]); err != nil {
			f.Fatal(err)
		}
		f.Add(b.Bytes(), r[0], r[1])
	}
	f.Fuzz(func(t *testing.T, slice []byte, start, length int64) {
		var out bytes.Buffer
		err := VerifySlice(&out, bytes.NewReader(slice), id, start, length)
		if start < 0 || length <= 0 || start > fuzzSize || length > fuzzSize-start {
			if err == nil || out.Len() > 0 {
				t.Fatalf("range %d+%d outside the object: %v, %d bytes", start, length, err, out.Len())
			}
			return
		}
		want := in[start : start+length]
		if !bytes.HasPrefix(want, out.Bytes()) {
			t.Fatalf("range %d+%d: wrote bytes that are not the object's", start, length)
		}
		if err == nil && !bytes.Equal(out.Bytes(), want) {
			t.Fatalf("range %d+%d: verified %d of %d bytes", start, length, out.Len(), len(want))
		}
	})
}

// FuzzVerify: whatever bytes and outboard a source sends for the fuzz
// object's id, Verify writes only a prefix of the object, and all of it
// when it reports success.
func FuzzVerify(f *testing.F) {
	in := baoInput(fuzzSize)
	ob, id, err := Encode(bytes.NewReader(in), fuzzSize)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(in, []byte(ob))
	f.Add(in[:GroupSize], []byte(ob))
	f.Add(in, []byte(ob[:8]))
	f.Fuzz(func(t *testing.T, data, outboard []byte) {
		parsed, err := ParseOutboard(outboard, fuzzSize)
		if err != nil {
			return
		}
		var out bytes.Buffer
		err = Verify(&out, bytes.NewReader(data), parsed, id)
		if !bytes.HasPrefix(in, out.Bytes()) {
			t.Fatal("wrote bytes that are not the object's")
		}
		if err == nil && !bytes.Equal(out.Bytes(), in) {
			t.Fatalf("verified %d of %d bytes", out.Len(), len(in))
		}
	})
}
