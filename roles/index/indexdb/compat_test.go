package indexdb

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/ronhq/ron/internal/testclock"
	"github.com/ronhq/ron/roles/index/indexapi"
	"github.com/ronhq/ron/store/kv"
)

func TestAssetPointerRoundTrip(t *testing.T) {
	forEach(t, func(t *testing.T, db *DB, c *testclock.Clock) {
		asset, manifest := id("asset"), id("manifest")
		if _, err := db.GetAsset(ctx, asset); !errors.Is(err, ErrNotFound) {
			t.Fatalf("absent: %v", err)
		}
		got, err := db.PutAsset(ctx, AssetPointer{Asset: asset, Kind: "  Image ", Manifest: manifest,
			OwnerPassportSubject: " passport:main:alice ", OwnerWalletAccount: "   "})
		if err != nil {
			t.Fatal(err)
		}
		want := AssetPointer{Asset: asset, Kind: "image", Manifest: manifest,
			OwnerPassportSubject: "passport:main:alice", UpdatedAtMs: c.Now().UnixMilli()}
		if got != want {
			t.Fatalf("stored %+v, want %+v", got, want)
		}
		if back, err := db.GetAsset(ctx, asset); err != nil || back != want {
			t.Fatalf("get %+v %v", back, err)
		}
		// A second PUT replaces; a given updated_at_ms is kept as is.
		c.Advance(time.Second)
		next := AssetPointer{Asset: asset, Kind: "video", Manifest: asset, UpdatedAtMs: 1_776_000_000_000}
		if _, err := db.PutAsset(ctx, next); err != nil {
			t.Fatal(err)
		}
		if back, err := db.GetAsset(ctx, asset); err != nil || back != next {
			t.Fatalf("replaced %+v %v", back, err)
		}
		// Stored under "b3:<hex>" in compat_assets.
		err = db.kv.View(ctx, func(tx kv.Tx) error {
			if tx.Bucket(bucketCompatAssets).Get([]byte(asset.String())) == nil {
				return errors.New("key missing")
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	})
}

func TestAssetPointerInvalid(t *testing.T) {
	forEach(t, func(t *testing.T, db *DB, _ *testclock.Clock) {
		ok := AssetPointer{Asset: id("a"), Kind: "image", Manifest: id("m")}
		cases := []struct {
			name  string
			edit  func(*AssetPointer)
			field string
		}{
			{"empty kind", func(p *AssetPointer) { p.Kind = "" }, "asset_kind"},
			{"unknown kind", func(p *AssetPointer) { p.Kind = "photo" }, "asset_kind"},
			{"control in kind", func(p *AssetPointer) { p.Kind = "image\n" }, "asset_kind"},
			{"control in passport", func(p *AssetPointer) { p.OwnerPassportSubject = "a\x00b" }, "owner_passport_subject"},
			{"long wallet", func(p *AssetPointer) { p.OwnerWalletAccount = strings.Repeat("w", 513) }, "owner_wallet_account"},
			{"negative time", func(p *AssetPointer) { p.UpdatedAtMs = -1 }, "updated_at_ms"},
		}
		for _, tc := range cases {
			p := ok
			tc.edit(&p)
			_, err := db.PutAsset(ctx, p)
			var ie *indexapi.InvalidError
			if !errors.As(err, &ie) || !errors.Is(err, indexapi.ErrInvalid) || ie.Field != tc.field || ie.Index != -1 {
				t.Errorf("%s: %v", tc.name, err)
			}
		}
		if _, err := db.GetAsset(ctx, ok.Asset); !errors.Is(err, ErrNotFound) {
			t.Fatalf("invalid puts stored something: %v", err)
		}
	})
}

func TestAssetPointerJSON(t *testing.T) {
	p := AssetPointer{Asset: id("a"), Kind: "image", Manifest: id("m"), OwnerWalletAccount: "acct", UpdatedAtMs: 7}
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"version":1,"asset_cid":"` + id("a").String() + `","asset_kind":"image","manifest_cid":"` +
		id("m").String() + `","owner_passport_subject":null,"owner_wallet_account":"acct","updated_at_ms":7}`
	if string(b) != want {
		t.Fatalf("json %s", b)
	}
	var back AssetPointer
	if err := json.Unmarshal(b, &back); err != nil || back != p {
		t.Fatalf("back %+v %v", back, err)
	}
	for _, bad := range []string{
		strings.Replace(want, `"version":1`, `"version":2`, 1),
		strings.Replace(want, `"updated_at_ms":7`, `"updated_at_ms":7,"x":1`, 1),
		strings.Replace(want, id("a").String(), id("a").Hex(), 1),
		strings.Replace(want, id("m").String(), "b3:00", 1),
		`[]`,
	} {
		if err := json.Unmarshal([]byte(bad), &back); err == nil {
			t.Errorf("accepted %s", bad)
		}
	}
}

func TestParseCompatID(t *testing.T) {
	hex := id("x").Hex()
	for _, s := range []string{"b3:" + hex, hex} {
		if got, err := ParseCompatID(s); err != nil || got != id("x") {
			t.Errorf("%q: %v %v", s, got, err)
		}
	}
	for _, s := range []string{"", "b3:", hex[:63], hex + "0", strings.ToUpper(hex), "B3:" + hex, " " + hex,
		"b3:" + strings.Repeat("g", 64), "b3:" + hex[:62], "sha256:" + hex} {
		if _, err := ParseCompatID(s); !errors.Is(err, indexapi.ErrInvalid) {
			t.Errorf("%q: %v", s, err)
		}
	}
}

func TestParseAssetKind(t *testing.T) {
	for in, want := range map[string]string{"image": "image", " Music ": "music", "MANIFEST": "manifest", "app": "app"} {
		if got, err := ParseAssetKind(in); err != nil || got != want {
			t.Errorf("%q: %q %v", in, got, err)
		}
	}
	for _, s := range []string{"", " ", "images", "im age", "image\t", "bücher"} {
		if _, err := ParseAssetKind(s); !errors.Is(err, indexapi.ErrInvalid) {
			t.Errorf("%q: %v", s, err)
		}
	}
}

func TestNormalizeOwnerRef(t *testing.T) {
	for in, want := range map[string]string{"": "", "  ": "", " a ": "a", strings.Repeat("x", 512): strings.Repeat("x", 512)} {
		if got, err := NormalizeOwnerRef("f", in); err != nil || got != want {
			t.Errorf("%q: %q %v", in, got, err)
		}
	}
	for _, s := range []string{"a\nb", "\x7f", strings.Repeat("x", 513)} {
		_, err := NormalizeOwnerRef("f", s)
		var ie *indexapi.InvalidError
		if !errors.As(err, &ie) || ie.Field != "f" {
			t.Errorf("%q: %v", s, err)
		}
	}
}

// TestOpenAddsCompatBucket: a schema-1 database written before compat_assets
// existed gains the bucket on Open.
func TestOpenAddsCompatBucket(t *testing.T) {
	for _, e := range engines {
		t.Run(e.name, func(t *testing.T) {
			kdb := e.open(t)
			err := kdb.Update(ctx, func(tx kv.Tx) error {
				for _, b := range []string{bucketMeta, bucketNames, bucketNameVersions, bucketProviders, bucketExpiry} {
					if _, err := tx.CreateBucket(b); err != nil {
						return err
					}
				}
				return tx.Bucket(bucketMeta).Put([]byte(schemaKey), []byte(schemaVersion))
			})
			if err != nil {
				t.Fatal(err)
			}
			db, err := Open(ctx, kdb, newClock().Now)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := db.PutAsset(ctx, AssetPointer{Asset: id("a"), Kind: "page", Manifest: id("m")}); err != nil {
				t.Fatal(err)
			}
		})
	}
}
