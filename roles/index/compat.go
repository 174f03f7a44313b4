package index

import (
	"errors"
	"math"
	"net/http"
	"net/url"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/roles/index/indexapi"
	"github.com/ronhq/ron/roles/index/indexdb"
	"github.com/ronhq/ron/store"
)

// This file holds the compatibility routes of docs/index.md §10, answered
// only while compat_routes = true (the role gates them; the key is live). They speak the original index's record
// shapes; differences from the original: PUTs need index:write, names
// follow docs/index.md §3 exactly (no trimming or case folding), site owner references
// are validated but not kept (a site is a name pointer), and a site's
// updated_at_ms is the pointer's own time.

// sitePutBody is the PUT /v1/index/sites/{name}/manifest body.
type sitePutBody struct {
	ManifestCID          *string `json:"manifest_cid"`
	OwnerPassportSubject *string `json:"owner_passport_subject"`
	OwnerWalletAccount   *string `json:"owner_wallet_account"`
	UpdatedAtMs          *uint64 `json:"updated_at_ms"`
}

// assetPutBody is the PUT /v1/index/assets/{asset_cid}/manifest body.
type assetPutBody struct {
	AssetKind            *string `json:"asset_kind"`
	ManifestCID          *string `json:"manifest_cid"`
	OwnerPassportSubject *string `json:"owner_passport_subject"`
	OwnerWalletAccount   *string `json:"owner_wallet_account"`
	UpdatedAtMs          *uint64 `json:"updated_at_ms"`
}

// MountCompat registers the docs/index.md §10 compatibility routes on e:
// PUT|GET /v1/index/sites/{name}/manifest (name pointers),
// PUT|GET /v1/index/assets/{asset_cid}/manifest (compat_assets) and
// GET /resolve/name:{key}, answered exactly as GET /resolve/{key}. As in
// Mount, every route first checks its capability (PUTs indexapi.ScopeWrite, GETs
// indexapi.ScopeRead when reads are private), then runs mw, then the handler. Mount
// must be called too; the role always mounts them behind a gate that
// answers 404 while compat_routes is false.
func (h *Handlers) MountCompat(e *echo.Echo, mw ...echo.MiddlewareFunc) {
	write := append([]echo.MiddlewareFunc{h.requireScope(indexapi.ScopeWrite)}, mw...)
	read := append([]echo.MiddlewareFunc{h.readScope}, mw...)
	e.PUT("/v1/index/sites/:name/manifest", h.putSite, write...)
	e.GET("/v1/index/sites/:name/manifest", h.getSite, read...)
	e.PUT("/v1/index/assets/:asset_cid/manifest", h.putAsset, write...)
	e.GET("/v1/index/assets/:asset_cid/manifest", h.getAsset, read...)
	// The escaped colon is a literal "name:" prefix; the rest is the
	// {key} parameter getResolve reads.
	e.GET(`/resolve/name\::key`, h.resolveNamePrefixed, read...)
}

// resolveNamePrefixed is GET /resolve/name:{key}: GET /resolve/{key} for a
// name or name@version key; an object id after "name:" is 400.
func (h *Handlers) resolveNamePrefixed(c echo.Context) error {
	if key, err := url.PathUnescape(c.Param("key")); err == nil && strings.HasPrefix(key, "b3:") {
		return indexapi.BadRequest("a name: key must be a name or name@version")
	}
	return h.getResolve(c)
}

// sitePointerOf renders a live name record in the original's site shape.
func sitePointerOf(rec indexdb.Record) indexapi.SitePointer {
	return indexapi.SitePointer{Version: indexdb.CompatPointerVersion, Name: rec.Name,
		ManifestCID: rec.Target.String(), UpdatedAtMs: rec.UpdatedAt.UnixMilli()}
}

// putSite is PUT /v1/index/sites/{name}/manifest: an unconditional (or
// If-Match / If-None-Match conditional) name pointer write answered 202,
// counted as a name write.
func (h *Handlers) putSite(c echo.Context) error {
	rec, err := h.setFromRequest(c, siteRequest)
	if err != nil {
		return err
	}
	return writeJSON(c, http.StatusAccepted, sitePointerOf(rec))
}

// siteRequest reads and checks a site PUT: name, Content-Type,
// preconditions, body.
func siteRequest(c echo.Context) (string, store.ID, indexapi.Cond, error) {
	name, err := parseName(c)
	if err != nil {
		return "", store.ID{}, indexapi.Cond{}, err
	}
	r := c.Request()
	cond, err := jsonWriteCond(r)
	if err != nil {
		return "", store.ID{}, indexapi.Cond{}, err
	}
	var in sitePutBody
	if err := httpx.ReadStrictJSON(r, &in); err != nil {
		return "", store.ID{}, indexapi.Cond{}, err
	}
	target, err := checkSiteBody(in)
	if err != nil {
		return "", store.ID{}, indexapi.Cond{}, err
	}
	return name, target, cond, nil
}

// checkSiteBody validates a site body and returns its target; the owner
// references and updated_at_ms are checked as the original checks them.
func checkSiteBody(in sitePutBody) (store.ID, error) {
	target, err := manifestCID(in.ManifestCID)
	if err != nil {
		return store.ID{}, err
	}
	if _, _, err := ownerRefs(in.OwnerPassportSubject, in.OwnerWalletAccount); err != nil {
		return store.ID{}, err
	}
	if _, err := updatedAtMs(in.UpdatedAtMs); err != nil {
		return store.ID{}, err
	}
	return target, nil
}

// manifestCID parses the required manifest_cid (b3:<hex> or bare hex).
func manifestCID(s *string) (store.ID, error) {
	if s == nil {
		return store.ID{}, fieldError("manifest_cid", "manifest_cid is required")
	}
	id, err := indexdb.ParseCompatID(*s)
	if err != nil {
		return store.ID{}, fieldError("manifest_cid", "manifest_cid must be 64 lowercase hex digits, optionally prefixed with b3:")
	}
	return id, nil
}

// ownerRefs normalizes the optional owner references.
func ownerRefs(passport, wallet *string) (p, w string, err error) {
	if passport != nil {
		if p, err = indexdb.NormalizeOwnerRef("owner_passport_subject", *passport); err != nil {
			return "", "", compatError(err)
		}
	}
	if wallet != nil {
		if w, err = indexdb.NormalizeOwnerRef("owner_wallet_account", *wallet); err != nil {
			return "", "", compatError(err)
		}
	}
	return p, w, nil
}

// updatedAtMs checks the optional updated_at_ms: absent is 0 (now); 0 and
// values beyond int64 are 400.
func updatedAtMs(v *uint64) (int64, error) {
	switch {
	case v == nil:
		return 0, nil
	case *v == 0:
		return 0, fieldError("updated_at_ms", "updated_at_ms must be greater than zero")
	case *v > math.MaxInt64:
		return 0, fieldError("updated_at_ms", "updated_at_ms out of range")
	}
	return int64(*v), nil
}

// fieldError is a 400 bad_request naming the offending body field.
func fieldError(field, msg string) error {
	return indexapi.BadRequest("%s", msg).WithDetails(map[string]any{"field": field})
}

// compatError maps an indexdb validation error onto 400 bad_request with
// details.field; other errors go through dbError.
func compatError(err error) error {
	var ie *indexapi.InvalidError
	if errors.As(err, &ie) {
		return fieldError(ie.Field, ie.Msg)
	}
	return dbError(err)
}

// getSite is GET /v1/index/sites/{name}/manifest: the live pointer in the
// original's shape; absent or deleted → 404.
func (h *Handlers) getSite(c echo.Context) error {
	name, err := parseName(c)
	if err != nil {
		return err
	}
	rec, err := h.doGet(c.Request().Context(), name)
	if err != nil {
		return err
	}
	hd := c.Response().Header()
	hd.Set("ETag", etag(rec.Version))
	hd.Set("Cache-Control", ccNoCache)
	return writeJSON(c, http.StatusOK, sitePointerOf(rec))
}

// assetParam parses the {asset_cid} parameter (b3:<hex> or bare hex).
func assetParam(c echo.Context) (store.ID, error) {
	s, err := url.PathUnescape(c.Param("asset_cid"))
	if err != nil {
		return store.ID{}, indexapi.BadRequest("asset_cid is not valid path text")
	}
	id, err := indexdb.ParseCompatID(s)
	if err != nil {
		return store.ID{}, indexapi.BadRequest("asset_cid must be 64 lowercase hex digits, optionally prefixed with b3:")
	}
	return id, nil
}

// putAsset is PUT /v1/index/assets/{asset_cid}/manifest: store the asset
// pointer (one transaction) and answer it 202.
func (h *Handlers) putAsset(c echo.Context) error {
	if err := h.authorize(c, indexapi.ScopeWrite); err != nil {
		return err
	}
	asset, err := assetParam(c)
	if err != nil {
		return err
	}
	r := c.Request()
	if err := httpx.RequireJSON(r); err != nil {
		return err
	}
	var in assetPutBody
	if err := httpx.ReadStrictJSON(r, &in); err != nil {
		return err
	}
	p, err := assetPointerOf(asset, in)
	if err != nil {
		return err
	}
	if p, err = h.db.PutAsset(r.Context(), p); err != nil {
		return compatError(err)
	}
	return writeJSON(c, http.StatusAccepted, p)
}

// assetPointerOf checks an asset body and builds the pointer to store.
func assetPointerOf(asset store.ID, in assetPutBody) (indexdb.AssetPointer, error) {
	if in.AssetKind == nil {
		return indexdb.AssetPointer{}, fieldError("asset_kind", "asset_kind is required")
	}
	manifest, err := manifestCID(in.ManifestCID)
	if err != nil {
		return indexdb.AssetPointer{}, err
	}
	passport, wallet, err := ownerRefs(in.OwnerPassportSubject, in.OwnerWalletAccount)
	if err != nil {
		return indexdb.AssetPointer{}, err
	}
	ms, err := updatedAtMs(in.UpdatedAtMs)
	if err != nil {
		return indexdb.AssetPointer{}, err
	}
	return indexdb.AssetPointer{Asset: asset, Kind: *in.AssetKind, Manifest: manifest,
		OwnerPassportSubject: passport, OwnerWalletAccount: wallet, UpdatedAtMs: ms}, nil
}

// getAsset is GET /v1/index/assets/{asset_cid}/manifest: the stored
// pointer, or 404.
func (h *Handlers) getAsset(c echo.Context) error {
	asset, err := assetParam(c)
	if err != nil {
		return err
	}
	p, err := h.db.GetAsset(c.Request().Context(), asset)
	if err != nil {
		return dbError(err)
	}
	c.Response().Header().Set("Cache-Control", ccNoCache)
	return writeJSON(c, http.StatusOK, p)
}
