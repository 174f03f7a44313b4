package verified_test

import (
	"bytes"
	"errors"
	"testing"

	"github.com/ronhq/ron/store/storetest"
	"github.com/ronhq/ron/store/verified"
)

// The docs/storage.md §1 chunked vector through ParseList and the Reader.
func TestSpecVectorStream(t *testing.T) {
	id := storetest.MustID(t, vecID)
	l, err := verified.ParseList([]byte(vecList), id)
	if err != nil {
		t.Fatal(err)
	}
	data := storetest.Pattern(102400)
	var out bytes.Buffer
	if _, err := verified.NewReader(bytes.NewReader(data), l, 0, 1, true).WriteTo(&out); err != nil || !bytes.Equal(out.Bytes(), data) {
		t.Fatalf("whole: %d bytes, %v", out.Len(), err)
	}
	if got, err := drain(verified.NewReader(bytes.NewReader(data[cs:]), l, 1, 1, false), "next"); err != nil || len(got) != 36864 {
		t.Fatalf("chunk 1: %d bytes, %v", len(got), err)
	}
}

// The official BLAKE3 vectors (testdata/blake3): the Reader accepts
// each input whole against its official id and refuses it with any one
// byte changed.
func TestOfficialVectors(t *testing.T) {
	for _, v := range storetest.OfficialVectors(t) {
		data := storetest.Pattern(v.InputLen)
		l := verified.ListOf(data)
		if l.ID != v.ID {
			t.Fatalf("len %d: ListOf id %s, want %s", v.InputLen, l.ID, v.ID)
		}
		wire, err := verified.ParseList(l.AppendJSON(nil), v.ID)
		if err != nil {
			t.Fatalf("len %d: %v", v.InputLen, err)
		}
		got, err := drain(verified.NewReader(bytes.NewReader(data), wire, 0, wire.Count()-1, true), "next")
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("len %d: %d bytes, %v", v.InputLen, len(got), err)
		}
		if v.InputLen == 0 {
			continue
		}
		for _, off := range []int{0, v.InputLen / 2, v.InputLen - 1} {
			_, err := drain(verified.NewReader(bytes.NewReader(flip(data, off)), wire, 0, wire.Count()-1, true), "next")
			if !errors.Is(err, verified.ErrMismatch) {
				t.Fatalf("len %d, flipped byte %d: %v", v.InputLen, off, err)
			}
		}
	}
}
