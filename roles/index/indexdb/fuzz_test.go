package indexdb

import (
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"
)

// FuzzParseNameVersion: ParseNameVersion accepts exactly "name@version"
// with a valid name and a canonical positive decimal, and the pair it
// returns prints back to the input. (FuzzParseName covers ParseName.)
func FuzzParseNameVersion(f *testing.F) {
	for _, s := range []string{"blog.example@7", "a@0", "a@01", "a@-1", "a@", "a@1@2", "A@1", "a@18446744073709551615",
		"a@18446744073709551616", "a@+1", "@1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		name, v, err := ParseNameVersion(s)
		if err != nil {
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("%q: error %v does not wrap ErrInvalid", s, err)
			}
			return
		}
		if v == 0 || !refValidName(name) {
			t.Fatalf("%q: accepted name %q version %d", s, name, v)
		}
		if back := name + "@" + strconv.FormatUint(v, 10); back != s {
			t.Fatalf("%q: round trip %q", s, back)
		}
	})
}

// FuzzAssetPointerJSON: decoding a stored compat asset pointer never
// panics, and whatever decodes encodes back to a form that decodes to the
// same pointer.
func FuzzAssetPointerJSON(f *testing.F) {
	good, _ := json.Marshal(AssetPointer{Asset: id("a"), Kind: "image", Manifest: id("m"), OwnerWalletAccount: "w", UpdatedAtMs: 1})
	f.Add(string(good))
	f.Add(strings.Replace(string(good), `"version":1`, `"version":1.0`, 1))
	f.Add(`{"version":1}`)
	f.Add(`null`)
	f.Fuzz(func(t *testing.T, s string) {
		var p AssetPointer
		if json.Unmarshal([]byte(s), &p) != nil {
			return
		}
		b, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		var back AssetPointer
		if err := json.Unmarshal(b, &back); err != nil || back != p {
			t.Fatalf("%q: re-decoded %+v, %v; want %+v", b, back, err, p)
		}
	})
}
