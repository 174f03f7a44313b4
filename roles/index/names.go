package index

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/httpx/ranges"
	"github.com/ronhq/ron/roles/index/indexapi"
	"github.com/ronhq/ron/roles/index/indexdb"
	"github.com/ronhq/ron/roles/index/replication"
	"github.com/ronhq/ron/store"
)

// timeLayout renders updated_at: RFC 3339 UTC, millisecond precision.
const timeLayout = "2006-01-02T15:04:05.000Z07:00"

// putBody is the PUT /names/{name} body.
type putBody struct {
	B3 *string `json:"b3"`
}

func stamp(t time.Time) string { return t.UTC().Format(timeLayout) }

func toRecordOut(r indexdb.Record) indexapi.NameRecord {
	return indexapi.NameRecord{Name: r.Name, B3: r.Target.String(), Version: r.Version, UpdatedAt: stamp(r.UpdatedAt)}
}

// etag is the entity tag of a name version: "<version>".
func etag(v uint64) string { return `"` + strconv.FormatUint(v, 10) + `"` }

// nameParam returns the path-unescaped {name} parameter.
func nameParam(c echo.Context) (string, error) {
	s, err := url.PathUnescape(c.Param("name"))
	if err != nil {
		return "", indexapi.BadRequest("name is not valid path text")
	}
	return s, nil
}

// parseName returns the validated {name} parameter (400 on bad syntax).
func parseName(c echo.Context) (string, error) {
	s, err := nameParam(c)
	if err != nil {
		return "", err
	}
	if _, err := indexapi.ParseName(s); err != nil {
		return "", dbError(err)
	}
	return s, nil
}

// errBadIfMatch is the 400 of an If-Match that is neither * nor a version.
func errBadIfMatch() *httpx.Error { return indexapi.BadRequest(`If-Match must be * or "<version>"`) }

// checkCond checks c for a write: If-None-Match only where allowNoneMatch,
// and a version must be ≥ 1.
func checkCond(c indexapi.Cond, allowNoneMatch bool) error {
	switch {
	case c.Kind() == indexapi.CondVersion && c.Version() == 0:
		return errBadIfMatch()
	case c.Kind() == indexapi.CondAbsent && !allowNoneMatch:
		return indexapi.BadRequest("If-None-Match is not allowed here")
	}
	return nil
}

// writeCond turns If-Match / If-None-Match into a Cond (docs/index.md §3):
// If-Match "<v>" → IfMatch(v), If-Match * → IfLive, If-None-Match * →
// IfAbsent (PUT only). Repeated headers, both headers together, unquoted or
// non-numeric tags, weak tags, lists and any other If-None-Match value are
// 400 bad_request. An empty header counts as absent.
func writeCond(r *http.Request, allowNoneMatch bool) (indexapi.Cond, error) {
	im, imOK, err := singleHeader(r, "If-Match")
	if err != nil {
		return indexapi.Cond{}, err
	}
	inm, inmOK, err := singleHeader(r, "If-None-Match")
	if err != nil {
		return indexapi.Cond{}, err
	}
	switch {
	case imOK && inmOK:
		return indexapi.Cond{}, indexapi.BadRequest("If-Match and If-None-Match cannot be combined")
	case inmOK && !allowNoneMatch:
		return indexapi.Cond{}, indexapi.BadRequest("If-None-Match is not allowed here")
	case inmOK:
		if inm != "*" {
			return indexapi.Cond{}, indexapi.BadRequest("If-None-Match on a write must be *")
		}
		return indexapi.IfAbsent(), nil
	case imOK:
		if im == "*" {
			return indexapi.IfLive(), nil
		}
		if len(im) < 3 || im[0] != '"' || im[len(im)-1] != '"' {
			return indexapi.Cond{}, errBadIfMatch()
		}
		v, err := indexapi.ParseVersion(im[1 : len(im)-1])
		if err != nil {
			return indexapi.Cond{}, errBadIfMatch()
		}
		return indexapi.IfMatch(v), nil
	}
	return indexapi.Cond{}, nil
}

// singleHeader returns the trimmed value of a header that may appear at
// most once; ok is false when it is absent or empty.
func singleHeader(r *http.Request, name string) (v string, ok bool, err error) {
	vals := r.Header.Values(name)
	if len(vals) > 1 {
		return "", false, indexapi.BadRequest("%s given more than once", name)
	}
	if len(vals) == 0 {
		return "", false, nil
	}
	v = strings.TrimSpace(vals[0])
	return v, v != "", nil
}

// The do* methods below are the one code path behind both the HTTP
// handlers and LocalClient: validation, the database call and the mapping
// of its errors onto the envelope.

// doSet sets name to target under cond, counting the write. In cluster
// mode the write goes through the control-plane log (clusterWrite).
func (h *Handlers) doSet(ctx context.Context, name string, target store.ID, cond indexapi.Cond) (indexdb.Record, error) {
	if h.cl != nil {
		return h.clusterWrite(ctx, replication.NameWrite{Name: name, Target: target, Cond: cond}, false, "").Result()
	}
	rec, err := h.setName(ctx, name, target, cond)
	h.countWrite(writeName, err, 1)
	return rec, err
}

// setName is doSet without the metric.
func (h *Handlers) setName(ctx context.Context, name string, target store.ID, cond indexapi.Cond) (indexdb.Record, error) {
	if err := indexapi.CheckName(name); err != nil {
		return indexdb.Record{}, err
	}
	if err := checkCond(cond, true); err != nil {
		return indexdb.Record{}, err
	}
	rec, err := h.db.Set(ctx, name, target, cond)
	if err != nil {
		return indexdb.Record{}, dbError(err)
	}
	h.invalidateName(name)
	return rec, nil
}

// doGet returns the live record of name; a tombstone is 404 with
// details.reason "deleted" and details.version.
func (h *Handlers) doGet(ctx context.Context, name string) (indexdb.Record, error) {
	rec, err := h.db.Get(ctx, name)
	if errors.Is(err, indexdb.ErrDeleted) {
		// A local tombstone is an authoritative miss; say which version.
		return indexdb.Record{}, httpx.NewError(http.StatusNotFound, httpx.CodeNotFound, "name deleted").
			WithDetails(map[string]any{"reason": "deleted", "version": rec.Version})
	}
	if err != nil {
		return indexdb.Record{}, dbError(err)
	}
	return rec, nil
}

// doGetVersion returns the record of key "name@version".
func (h *Handlers) doGetVersion(ctx context.Context, key string) (indexdb.Record, error) {
	name, v, err := indexapi.ParseNameVersion(key)
	if err != nil {
		return indexdb.Record{}, dbError(err)
	}
	rec, err := h.db.GetVersion(ctx, name, v)
	if err != nil {
		return indexdb.Record{}, dbError(err)
	}
	return rec, nil
}

// doHistory returns the kept versions of name, newest first.
func (h *Handlers) doHistory(ctx context.Context, name string) (indexapi.NameHistory, error) {
	return h.historyOf(ctx, name)
}

// historyOf is doHistory, read from this node's store (in cluster mode
// every index node applies the whole name log).
func (h *Handlers) historyOf(ctx context.Context, name string) (indexapi.NameHistory, error) {
	if err := indexapi.CheckName(name); err != nil {
		return indexapi.NameHistory{}, err
	}
	recs, err := h.db.History(ctx, name)
	if err != nil {
		return indexapi.NameHistory{}, dbError(err)
	}
	out := indexapi.NameHistory{Name: name, Versions: make([]indexapi.NameVersion, 0, len(recs))}
	for _, r := range recs {
		e := indexapi.NameVersion{Version: r.Version, Deleted: r.Deleted, UpdatedAt: stamp(r.UpdatedAt)}
		if !r.Deleted {
			s := r.Target.String()
			e.B3 = &s
		}
		out.Versions = append(out.Versions, e)
	}
	return out, nil
}

// doDelete writes a tombstone version of name under cond, counting the
// write. In cluster mode the write goes through the control-plane log.
func (h *Handlers) doDelete(ctx context.Context, name string, cond indexapi.Cond) (indexapi.NameDeletion, error) {
	if h.cl != nil {
		rec, err := h.clusterWrite(ctx, replication.NameWrite{Name: name, Delete: true, Cond: cond}, false, "").Result()
		if err != nil {
			return indexapi.NameDeletion{}, err
		}
		return deletionOf(rec), nil
	}
	out, err := h.deleteNamed(ctx, name, cond)
	h.countWrite(writeName, err, 1)
	return out, err
}

// deleteNamed is doDelete without the metric.
func (h *Handlers) deleteNamed(ctx context.Context, name string, cond indexapi.Cond) (indexapi.NameDeletion, error) {
	if err := indexapi.CheckName(name); err != nil {
		return indexapi.NameDeletion{}, err
	}
	if err := checkCond(cond, false); err != nil {
		return indexapi.NameDeletion{}, err
	}
	rec, err := h.db.Delete(ctx, name, cond)
	if err != nil {
		return indexapi.NameDeletion{}, dbError(err)
	}
	h.invalidateName(name)
	return deletionOf(rec), nil
}

// invalidateName drops the cached answers of name.
func (h *Handlers) invalidateName(name string) {
	if c := h.settings().Cache; c != nil {
		c.InvalidateName(name)
	}
}

// deletionOf is the DELETE answer of a tombstone record.
func deletionOf(rec indexdb.Record) indexapi.NameDeletion {
	return indexapi.NameDeletion{Name: rec.Name, Version: rec.Version, Deleted: true, UpdatedAt: stamp(rec.UpdatedAt)}
}

// putName is PUT /names/{name}: set the pointer, optionally conditional.
func (h *Handlers) putName(c echo.Context) error {
	if h.cl != nil {
		return h.clusterPutName(c)
	}
	rec, err := h.setFromRequest(c, putRequest)
	if err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, toRecordOut(rec))
}

// setFromRequest is the shared write path of PUT /names/{name} and the
// compat site PUT: authorize, read the request with parse (a bad request
// counts as an invalid name write), set the pointer and put its version in
// the ETag.
func (h *Handlers) setFromRequest(c echo.Context, parse func(echo.Context) (string, store.ID, indexapi.Cond, error)) (indexdb.Record, error) {
	if err := h.authorize(c, indexapi.ScopeWrite); err != nil {
		return indexdb.Record{}, err
	}
	name, target, cond, err := parse(c)
	if err != nil {
		h.countWrite(writeName, err, 1)
		return indexdb.Record{}, err
	}
	rec, err := h.doSet(c.Request().Context(), name, target, cond)
	if err != nil {
		return indexdb.Record{}, err
	}
	c.Response().Header().Set("ETag", etag(rec.Version))
	return rec, nil
}

// jsonWriteCond checks the Content-Type of a JSON write, then its
// preconditions.
func jsonWriteCond(r *http.Request) (indexapi.Cond, error) {
	if err := httpx.RequireJSON(r); err != nil {
		return indexapi.Cond{}, err
	}
	return writeCond(r, true)
}

// putRequest reads and checks a PUT /names/{name} request.
func putRequest(c echo.Context) (string, store.ID, indexapi.Cond, error) {
	name, err := parseName(c)
	if err != nil {
		return "", store.ID{}, indexapi.Cond{}, err
	}
	r := c.Request()
	cond, err := jsonWriteCond(r)
	if err != nil {
		return "", store.ID{}, indexapi.Cond{}, err
	}
	var in putBody
	if err := httpx.ReadStrictJSON(r, &in); err != nil {
		return "", store.ID{}, indexapi.Cond{}, err
	}
	if in.B3 == nil {
		return "", store.ID{}, indexapi.Cond{}, indexapi.BadRequest("b3 is required")
	}
	target, err := store.ParseID(*in.B3)
	if err != nil {
		return "", store.ID{}, indexapi.Cond{}, indexapi.BadRequest("b3 must be b3: followed by 64 lowercase hex digits")
	}
	return name, target, cond, nil
}

// lookupName is the code path of GET /names/{key} and LocalClient's name
// reads: key is a name or "name@version", found locally, else (unless
// o.localOnly) in the cache or at the peers within one lookup budget (docs/index.md §3,
// docs/index.md §6). A local tombstone or pruned version is an authoritative 404.
func (h *Handlers) lookupName(ctx context.Context, key string, o resolveOpts) (indexapi.NameRecord, error) {
	o.set = h.settings()
	ctx, cancel := o.withBudget(ctx)
	defer cancel()
	rec, _, err := h.resolveName(ctx, key, o)
	return rec, err
}

// getName is GET /names/{name} and GET /names/{name}@{version}.
func (h *Handlers) getName(c echo.Context) error {
	key, err := nameParam(c)
	if err != nil {
		return err
	}
	if relayed, err := h.nameRead(c); relayed || err != nil {
		return err
	}
	rec, err := h.lookupName(c.Request().Context(), key, requestOpts(c))
	if err != nil {
		return err
	}
	if strings.Contains(key, "@") {
		return h.replyRecord(c, rec, ccNameVersion)
	}
	return h.replyRecord(c, rec, ccNoCache)
}

// replyRecord writes a live record with its ETag and Cache-Control,
// honouring If-None-Match (304) and If-Match (412).
func (h *Handlers) replyRecord(c echo.Context, rec indexapi.NameRecord, cacheControl string) error {
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
	return writeJSON(c, http.StatusOK, rec)
}

// nameHistory is GET /names/{name}/versions: kept versions, newest first.
func (h *Handlers) nameHistory(c echo.Context) error {
	name, err := nameParam(c)
	if err != nil {
		return err
	}
	if relayed, err := h.nameRead(c); relayed || err != nil {
		return err
	}
	out, err := h.historyOf(c.Request().Context(), name)
	if err != nil {
		return err
	}
	c.Response().Header().Set("Cache-Control", ccNoCache)
	return writeJSON(c, http.StatusOK, out)
}

// deleteRequest authorizes a DELETE /names/{name} and reads its name and
// preconditions.
func (h *Handlers) deleteRequest(c echo.Context) (string, indexapi.Cond, error) {
	if err := h.authorize(c, indexapi.ScopeWrite); err != nil {
		return "", indexapi.Cond{}, err
	}
	name, err := parseName(c)
	if err != nil {
		return "", indexapi.Cond{}, err
	}
	cond, err := writeCond(c.Request(), false)
	return name, cond, err
}

// deleteName is DELETE /names/{name}: write a tombstone version.
func (h *Handlers) deleteName(c echo.Context) error {
	if h.cl != nil {
		return h.clusterDeleteName(c)
	}
	name, cond, err := h.deleteRequest(c)
	if err != nil {
		return err
	}
	out, err := h.doDelete(c.Request().Context(), name, cond)
	if err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, out)
}
