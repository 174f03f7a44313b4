package verified_test

import (
	"bytes"
	"errors"
	"testing"

	"github.com/ronhq/ron/store/storetest"
	"github.com/ronhq/ron/store/verified"
)

// The official BLAKE3 vectors (testdata/blake3): TreeOf's root is each
// input's official id, and the Reader accepts each input whole through its
// parsed outboard and refuses it with any one byte changed.
func TestOfficialVectors(t *testing.T) {
	for _, v := range storetest.OfficialVectors(t) {
		data := storetest.Pattern(v.InputLen)
		built := verified.TreeOf(data)
		if built.ID != v.ID {
			t.Fatalf("len %d: TreeOf id %s, want %s", v.InputLen, built.ID, v.ID)
		}
		tr, err := verified.ParseTree(built.Outboard, v.ID)
		if err != nil {
			t.Fatalf("len %d: %v", v.InputLen, err)
		}
		got, err := drain(verified.NewReader(bytes.NewReader(data), tr, 0, tr.Count()-1), "next")
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("len %d: %d bytes, %v", v.InputLen, len(got), err)
		}
		if v.InputLen == 0 {
			continue
		}
		for _, off := range []int{0, v.InputLen / 2, v.InputLen - 1} {
			_, err := drain(verified.NewReader(bytes.NewReader(flip(data, off)), tr, 0, tr.Count()-1), "next")
			if !errors.Is(err, verified.ErrMismatch) {
				t.Fatalf("len %d, flipped byte %d: %v", v.InputLen, off, err)
			}
		}
	}
}
