package index

import (
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/httpx/ranges"
	"github.com/ronhq/ron/roles/index/indexdb"
	"github.com/ronhq/ron/store"
)

// timeLayout renders updated_at: RFC 3339 UTC, millisecond precision.
const timeLayout = "2006-01-02T15:04:05.000Z07:00"

// recordOut is a live name record on the wire (spec/index.md §3).
type recordOut struct {
	Name      string `json:"name"`
	B3        string `json:"b3"`
	Version   uint64 `json:"version"`
	UpdatedAt string `json:"updated_at"`
}

// deletedOut answers DELETE /names/{name}.
type deletedOut struct {
	Name      string `json:"name"`
	Version   uint64 `json:"version"`
	Deleted   bool   `json:"deleted"`
	UpdatedAt string `json:"updated_at"`
}

// versionOut is one entry of GET /names/{name}/versions; B3 is null on
// tombstones.
type versionOut struct {
	Version   uint64  `json:"version"`
	B3        *string `json:"b3"`
	Deleted   bool    `json:"deleted"`
	UpdatedAt string  `json:"updated_at"`
}

// historyOut answers GET /names/{name}/versions.
type historyOut struct {
	Name     string       `json:"name"`
	Versions []versionOut `json:"versions"`
}

// putBody is the PUT /names/{name} body.
type putBody struct {
	B3 *string `json:"b3"`
}

func stamp(t time.Time) string { return t.UTC().Format(timeLayout) }

func toRecordOut(r indexdb.Record) recordOut {
	return recordOut{Name: r.Name, B3: r.Target.String(), Version: r.Version, UpdatedAt: stamp(r.UpdatedAt)}
}

// etag is the entity tag of a name version: "<version>".
func etag(v uint64) string { return `"` + strconv.FormatUint(v, 10) + `"` }

// nameParam returns the path-unescaped {name} parameter.
func nameParam(c echo.Context) (string, error) {
	s, err := url.PathUnescape(c.Param("name"))
	if err != nil {
		return "", badRequest("name is not valid path text")
	}
	return s, nil
}

// parseName returns the validated {name} parameter (400 on bad syntax).
func parseName(c echo.Context) (string, error) {
	s, err := nameParam(c)
	if err != nil {
		return "", err
	}
	if _, err := indexdb.ParseName(s); err != nil {
		return "", dbError(err)
	}
	return s, nil
}

// writeCond turns If-Match / If-None-Match into an indexdb condition
// (spec/index.md §3): If-Match "<v>" → IfMatch(v), If-Match * → IfLive,
// If-None-Match * → IfAbsent (PUT only). Repeated headers, both headers
// together, unquoted or non-numeric tags, weak tags, lists and any other
// If-None-Match value are 400 bad_request. An empty header counts as absent.
func writeCond(r *http.Request, allowNoneMatch bool) (indexdb.Cond, error) {
	im, imOK, err := singleHeader(r, "If-Match")
	if err != nil {
		return indexdb.Cond{}, err
	}
	inm, inmOK, err := singleHeader(r, "If-None-Match")
	if err != nil {
		return indexdb.Cond{}, err
	}
	switch {
	case imOK && inmOK:
		return indexdb.Cond{}, badRequest("If-Match and If-None-Match cannot be combined")
	case inmOK && !allowNoneMatch:
		return indexdb.Cond{}, badRequest("If-None-Match is not allowed here")
	case inmOK:
		if inm != "*" {
			return indexdb.Cond{}, badRequest("If-None-Match on a write must be *")
		}
		return indexdb.IfAbsent(), nil
	case imOK:
		if im == "*" {
			return indexdb.IfLive(), nil
		}
		if len(im) < 3 || im[0] != '"' || im[len(im)-1] != '"' {
			return indexdb.Cond{}, badRequest(`If-Match must be * or "<version>"`)
		}
		v, err := indexdb.ParseVersion(im[1 : len(im)-1])
		if err != nil {
			return indexdb.Cond{}, badRequest(`If-Match must be * or "<version>"`)
		}
		return indexdb.IfMatch(v), nil
	}
	return indexdb.Cond{}, nil
}

// singleHeader returns the trimmed value of a header that may appear at
// most once; ok is false when it is absent or empty.
func singleHeader(r *http.Request, name string) (v string, ok bool, err error) {
	vals := r.Header.Values(name)
	if len(vals) > 1 {
		return "", false, badRequest("%s given more than once", name)
	}
	if len(vals) == 0 {
		return "", false, nil
	}
	v = strings.TrimSpace(vals[0])
	return v, v != "", nil
}

// putName is PUT /names/{name}: set the pointer, optionally conditional.
func (h *Handlers) putName(c echo.Context) error {
	if err := h.authorize(c, ScopeWrite); err != nil {
		return err
	}
	name, err := parseName(c)
	if err != nil {
		return err
	}
	r := c.Request()
	if err := requireJSON(r); err != nil {
		return err
	}
	cond, err := writeCond(r, true)
	if err != nil {
		return err
	}
	body, err := httpx.ReadBody(r)
	if err != nil {
		return err
	}
	var in putBody
	if err := httpx.DecodeStrictJSON(body, &in); err != nil {
		return err
	}
	if in.B3 == nil {
		return badRequest("b3 is required")
	}
	target, err := store.ParseID(*in.B3)
	if err != nil {
		return badRequest("b3 must be b3: followed by 64 lowercase hex digits")
	}
	rec, err := h.db.Set(r.Context(), name, target, cond)
	if err != nil {
		return dbError(err)
	}
	c.Response().Header().Set("ETag", etag(rec.Version))
	return writeJSON(c, http.StatusOK, toRecordOut(rec))
}

// getName is GET /names/{name} and GET /names/{name}@{version}.
func (h *Handlers) getName(c echo.Context) error {
	key, err := nameParam(c)
	if err != nil {
		return err
	}
	if strings.Contains(key, "@") {
		return h.getNameVersion(c, key)
	}
	ctx := c.Request().Context()
	rec, err := h.db.Get(ctx, key)
	if errors.Is(err, indexdb.ErrDeleted) {
		// A local tombstone is an authoritative miss; say which version.
		return httpx.NewError(http.StatusNotFound, httpx.CodeNotFound, "name deleted").
			WithDetails(map[string]any{"reason": "deleted", "version": rec.Version})
	}
	if err != nil {
		return dbError(err)
	}
	return h.replyRecord(c, rec, ccNoCache)
}

// getNameVersion answers GET /names/{name}@{version}.
func (h *Handlers) getNameVersion(c echo.Context, key string) error {
	name, v, err := indexdb.ParseNameVersion(key)
	if err != nil {
		return dbError(err)
	}
	rec, err := h.db.GetVersion(c.Request().Context(), name, v)
	if err != nil {
		return dbError(err)
	}
	return h.replyRecord(c, rec, ccNameVersion)
}

// replyRecord writes a live record with its ETag and Cache-Control,
// honouring If-None-Match (304) and If-Match (412).
func (h *Handlers) replyRecord(c echo.Context, rec indexdb.Record, cacheControl string) error {
	tag := etag(rec.Version)
	hd := c.Response().Header()
	switch ranges.CheckPreconditions(c.Request(), tag) {
	case http.StatusNotModified:
		hd.Set("ETag", tag)
		hd.Set("Cache-Control", cacheControl)
		return c.NoContent(http.StatusNotModified)
	case http.StatusPreconditionFailed:
		return httpx.NewError(http.StatusPreconditionFailed, httpx.CodePreconditionFailed, "precondition failed").
			WithDetails(map[string]any{"current_version": rec.Version})
	}
	hd.Set("ETag", tag)
	hd.Set("Cache-Control", cacheControl)
	return writeJSON(c, http.StatusOK, toRecordOut(rec))
}

// nameHistory is GET /names/{name}/versions: kept versions, newest first.
func (h *Handlers) nameHistory(c echo.Context) error {
	name, err := parseName(c)
	if err != nil {
		return err
	}
	recs, err := h.db.History(c.Request().Context(), name)
	if err != nil {
		return dbError(err)
	}
	out := historyOut{Name: name, Versions: make([]versionOut, 0, len(recs))}
	for _, r := range recs {
		e := versionOut{Version: r.Version, Deleted: r.Deleted, UpdatedAt: stamp(r.UpdatedAt)}
		if !r.Deleted {
			s := r.Target.String()
			e.B3 = &s
		}
		out.Versions = append(out.Versions, e)
	}
	c.Response().Header().Set("Cache-Control", ccNoCache)
	return writeJSON(c, http.StatusOK, out)
}

// deleteName is DELETE /names/{name}: write a tombstone version.
func (h *Handlers) deleteName(c echo.Context) error {
	if err := h.authorize(c, ScopeWrite); err != nil {
		return err
	}
	name, err := parseName(c)
	if err != nil {
		return err
	}
	cond, err := writeCond(c.Request(), false)
	if err != nil {
		return err
	}
	rec, err := h.db.Delete(c.Request().Context(), name, cond)
	if err != nil {
		return dbError(err)
	}
	return writeJSON(c, http.StatusOK, deletedOut{Name: rec.Name, Version: rec.Version, Deleted: true, UpdatedAt: stamp(rec.UpdatedAt)})
}
