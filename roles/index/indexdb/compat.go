package indexdb

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"unicode"

	"github.com/ronhq/ron/roles/index/indexapi"
	"github.com/ronhq/ron/store"
	"github.com/ronhq/ron/store/kv"
)

// bucketCompatAssets holds the original index's asset pointers (docs/index.md
// §9, §10): key "b3:<hex>" of the asset, value the pointer's JSON.
const bucketCompatAssets = "compat_assets"

// Limits and constants of the compatibility records (docs/index.md §10).
const (
	// CompatPointerVersion is the schema version the original writes in
	// every pointer ("version": 1).
	CompatPointerVersion = 1
	// MaxOwnerRefLen bounds an owner reference in bytes after trimming.
	MaxOwnerRefLen = 512
)

// assetKinds is the original's asset kind vocabulary.
var assetKinds = map[string]bool{
	"image": true, "video": true, "stream": true, "music": true, "song": true, "podcast": true,
	"article": true, "post": true, "comment": true, "page": true, "site": true, "app": true, "manifest": true,
}

// AssetPointer is the original index's asset manifest pointer (docs/index.md
// §10): which manifest describes an asset, with optional owner references.
// Empty owner strings mean none. Its JSON form is the original's record
// shape: {"version":1,"asset_cid","asset_kind","manifest_cid",
// "owner_passport_subject","owner_wallet_account","updated_at_ms"}, owners
// null when none.
type AssetPointer struct {
	Asset                store.ID
	Kind                 string
	Manifest             store.ID
	OwnerPassportSubject string
	OwnerWalletAccount   string
	// UpdatedAtMs is milliseconds since the Unix epoch; 0 on PutAsset means
	// "now" by the DB's clock.
	UpdatedAtMs int64
}

// assetPointerJSON is the wire and stored form of an AssetPointer.
type assetPointerJSON struct {
	Version              int     `json:"version"`
	AssetCID             string  `json:"asset_cid"`
	AssetKind            string  `json:"asset_kind"`
	ManifestCID          string  `json:"manifest_cid"`
	OwnerPassportSubject *string `json:"owner_passport_subject"`
	OwnerWalletAccount   *string `json:"owner_wallet_account"`
	UpdatedAtMs          int64   `json:"updated_at_ms"`
}

// MarshalJSON encodes the original's record shape.
func (p AssetPointer) MarshalJSON() ([]byte, error) {
	return json.Marshal(assetPointerJSON{
		Version: CompatPointerVersion, AssetCID: p.Asset.String(), AssetKind: p.Kind,
		ManifestCID: p.Manifest.String(), OwnerPassportSubject: optRef(p.OwnerPassportSubject),
		OwnerWalletAccount: optRef(p.OwnerWalletAccount), UpdatedAtMs: p.UpdatedAtMs,
	})
}

// UnmarshalJSON decodes the record shape strictly (unknown fields, a
// version other than 1 and non-canonical ids are errors).
func (p *AssetPointer) UnmarshalJSON(b []byte) error {
	var w assetPointerJSON
	if err := decodeStrict(b, &w); err != nil {
		return err
	}
	if w.Version != CompatPointerVersion {
		return fmt.Errorf("indexdb: asset pointer version %d", w.Version)
	}
	asset, err := store.ParseID(w.AssetCID)
	if err != nil {
		return err
	}
	manifest, err := store.ParseID(w.ManifestCID)
	if err != nil {
		return err
	}
	*p = AssetPointer{Asset: asset, Kind: w.AssetKind, Manifest: manifest,
		OwnerPassportSubject: deref(w.OwnerPassportSubject), OwnerWalletAccount: deref(w.OwnerWalletAccount),
		UpdatedAtMs: w.UpdatedAtMs}
	return nil
}

// optRef is nil for an empty reference.
func optRef(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// ParseCompatID parses an id as the original accepts it: "b3:" followed by
// 64 lowercase hex digits, or the 64 hex digits alone. Errors wrap
// indexapi.ErrInvalid.
func ParseCompatID(s string) (store.ID, error) {
	if len(s) == 64 {
		s = "b3:" + s
	}
	id, err := store.ParseID(s)
	if err != nil {
		return store.ID{}, indexapi.Invalidf("id must be 64 lowercase hex digits, optionally prefixed with b3:")
	}
	return id, nil
}

// ParseAssetKind normalizes an asset kind as the original does (trimmed,
// lowercased) and checks it against the original's vocabulary: image,
// video, stream, music, song, podcast, article, post, comment, page, site,
// app, manifest. Errors wrap indexapi.ErrInvalid.
func ParseAssetKind(s string) (string, error) {
	k, msg := assetKind(s)
	if msg != "" {
		return "", indexapi.Invalidf("%s", msg)
	}
	return k, nil
}

// assetKind is ParseAssetKind with the failure as a message ("" = valid).
func assetKind(s string) (kind, msg string) {
	if strings.ContainsFunc(s, unicode.IsControl) {
		return "", "asset kind contains control characters"
	}
	k := strings.ToLower(strings.TrimSpace(s))
	if !assetKinds[k] {
		return "", fmt.Sprintf("unsupported asset kind %q", s)
	}
	return k, ""
}

// NormalizeOwnerRef normalizes an owner reference as the original does:
// surrounding white space is trimmed and an empty result means none (""); a
// reference with control characters or longer than MaxOwnerRefLen bytes is
// an error wrapping indexapi.ErrInvalid that names field.
func NormalizeOwnerRef(field, s string) (string, error) {
	if strings.ContainsFunc(s, unicode.IsControl) {
		return "", &indexapi.InvalidError{Index: -1, Field: field, Msg: field + " contains control characters"}
	}
	t := strings.TrimSpace(s)
	if len(t) > MaxOwnerRefLen {
		return "", &indexapi.InvalidError{Index: -1, Field: field, Msg: fmt.Sprintf("%s longer than %d bytes", field, MaxOwnerRefLen)}
	}
	return t, nil
}

// normalizeAsset checks and canonicalizes p for storage.
func (db *DB) normalizeAsset(p AssetPointer) (AssetPointer, error) {
	kind, msg := assetKind(p.Kind)
	if msg != "" {
		return AssetPointer{}, &indexapi.InvalidError{Index: -1, Field: "asset_kind", Msg: msg}
	}
	p.Kind = kind
	var err error
	if p.OwnerPassportSubject, err = NormalizeOwnerRef("owner_passport_subject", p.OwnerPassportSubject); err != nil {
		return AssetPointer{}, err
	}
	if p.OwnerWalletAccount, err = NormalizeOwnerRef("owner_wallet_account", p.OwnerWalletAccount); err != nil {
		return AssetPointer{}, err
	}
	switch {
	case p.UpdatedAtMs < 0:
		return AssetPointer{}, &indexapi.InvalidError{Index: -1, Field: "updated_at_ms", Msg: "updated_at_ms is negative"}
	case p.UpdatedAtMs == 0:
		p.UpdatedAtMs = db.nowMs().UnixMilli()
	}
	return p, nil
}

// PutAsset stores the asset pointer p under p.Asset in compat_assets,
// replacing any previous one, in one transaction, and returns the stored
// pointer: Kind normalized by ParseAssetKind, owner references by
// NormalizeOwnerRef, UpdatedAtMs 0 replaced by the clock's now. Errors:
// *indexapi.InvalidError (indexapi.ErrInvalid) naming the field (asset_kind,
// owner_passport_subject, owner_wallet_account, updated_at_ms).
func (db *DB) PutAsset(ctx context.Context, p AssetPointer) (AssetPointer, error) {
	p, err := db.normalizeAsset(p)
	if err != nil {
		return AssetPointer{}, err
	}
	raw, err := json.Marshal(p)
	if err != nil {
		return AssetPointer{}, err
	}
	err = db.kv.Update(ctx, func(tx kv.Tx) error {
		return tx.Bucket(bucketCompatAssets).Put([]byte(p.Asset.String()), raw)
	})
	if err != nil {
		return AssetPointer{}, err
	}
	return p, nil
}

// GetAsset returns the asset pointer stored for asset. Errors: ErrNotFound
// when there is none.
func (db *DB) GetAsset(ctx context.Context, asset store.ID) (AssetPointer, error) {
	var p AssetPointer
	err := db.kv.View(ctx, func(tx kv.Tx) error {
		raw := tx.Bucket(bucketCompatAssets).Get([]byte(asset.String()))
		if raw == nil {
			return ErrNotFound
		}
		if err := json.Unmarshal(raw, &p); err != nil {
			return fmt.Errorf("indexdb: decode asset pointer %s: %w", asset.Prefix(), err)
		}
		return nil
	})
	if err != nil {
		return AssetPointer{}, err
	}
	return p, nil
}
