package indexdb

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/ronhq/ron/roles/index/indexapi"
	"github.com/ronhq/ron/store/kv/memkv"
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

// FuzzRestoreNames: a names snapshot from another server is outside input.
// Whatever it holds, RestoreNames never panics, and a snapshot it refuses
// leaves the names as they were.
func FuzzRestoreNames(f *testing.F) {
	f.Add(`{"applied":3}` + "\n" + `{"b":"names","k":"YS5leGFtcGxl","v":"e30="}`)
	f.Add(`{"applied":1}`)
	f.Add(`{"b":"names"}`)
	f.Add("")
	f.Fuzz(func(t *testing.T, s string) {
		ctx := context.Background()
		kdb := memkv.New()
		defer kdb.Close()
		db, err := Open(ctx, kdb, newClock().Now)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.Set(ctx, "keep.example", id("k"), indexapi.Cond{}); err != nil {
			t.Fatal(err)
		}
		if db.RestoreNames(ctx, strings.NewReader(s)) == nil {
			return
		}
		if rec, err := db.Get(ctx, "keep.example"); err != nil || rec.Version != 1 {
			t.Fatalf("a refused snapshot changed the names: %+v, %v", rec, err)
		}
	})
}
