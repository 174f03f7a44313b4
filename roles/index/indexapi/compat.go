package indexapi

// SitePointer is the original's site manifest record, the answer of PUT
// (202) and GET (200) /v1/index/sites/{name}/manifest. Version is always
// 1 (the original's schema version, not the name's version, which is in
// the ETag); ManifestCID is the name's target; the owner fields are
// always null; UpdatedAtMs is the name version's updated_at.
type SitePointer struct {
	Version              int     `json:"version"`
	Name                 string  `json:"name"`
	ManifestCID          string  `json:"manifest_cid"`
	OwnerPassportSubject *string `json:"owner_passport_subject"`
	OwnerWalletAccount   *string `json:"owner_wallet_account"`
	UpdatedAtMs          int64   `json:"updated_at_ms"`
}
