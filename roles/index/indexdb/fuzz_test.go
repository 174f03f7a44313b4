package indexdb

import (
	"encoding/json"
	"strings"
	"testing"
)

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
