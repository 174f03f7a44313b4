package index

import (
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/roles/index/indexdb"
	"github.com/ronhq/ron/store"
)

// Limits of GET /providers/{b3}?limit= (spec/index.md §4).
const (
	defaultProviderLimit = 20
	maxProviderLimit     = 64
)

// announceOut answers POST /providers.
type announceOut struct {
	Accepted  int `json:"accepted"`
	Withdrawn int `json:"withdrawn"`
}

// providerOut is one provider on the wire.
type providerOut struct {
	Node       string `json:"node"`
	Addr       string `json:"addr"`
	Region     string `json:"region"`
	Type       string `json:"type"`
	LastSeenS  int64  `json:"last_seen_s"`
	ExpiresInS int64  `json:"expires_in_s"`
}

// providersOut answers GET /providers/{b3}.
type providersOut struct {
	B3        string        `json:"b3"`
	Providers []providerOut `json:"providers"`
}

// announce is POST /providers: validate the whole batch, then apply it in
// one transaction (all or nothing).
func (h *Handlers) announce(c echo.Context) error {
	if err := h.authorize(c, ScopeWrite); err != nil {
		return err
	}
	r := c.Request()
	if err := requireJSON(r); err != nil {
		return err
	}
	body, err := httpx.ReadBody(r)
	if err != nil {
		return err
	}
	ttl := h.DefaultTTL
	if ttl <= 0 {
		ttl = indexdb.DefaultTTL
	}
	recs, err := indexdb.DecodeAnnounce(body, ttl)
	if err != nil {
		return announceError(err, true)
	}
	res, err := h.db.Announce(r.Context(), recs)
	if err != nil {
		return announceError(err, false)
	}
	return writeJSON(c, http.StatusOK, announceOut{Accepted: res.Accepted, Withdrawn: res.Withdrawn})
}

// announceError maps a batch failure: an undecodable body (the envelope
// itself, from DecodeAnnounce) is 400 malformed; a bad record or batch size
// is 400 bad_request with details.index (the record's position; absent for
// the batch as a whole) and details.field.
func announceError(err error, decoding bool) error {
	var ie *indexdb.InvalidError
	if !errors.As(err, &ie) {
		return dbError(err)
	}
	details := map[string]any{}
	if ie.Field != "" {
		details["field"] = ie.Field
	}
	if ie.Index >= 0 {
		details["index"] = ie.Index
	}
	code := httpx.CodeBadRequest
	if decoding && ie.Index < 0 {
		code = httpx.CodeMalformed
	}
	return httpx.NewError(http.StatusBadRequest, code, "%s", trimPrefix(ie.Error())).WithDetails(details)
}

// getProviders is GET /providers/{b3}?limit=&region=: the live local
// records, region matches first (default region: Zone), then freshest, then
// node id. None → 404 (cacheable for 2 s).
func (h *Handlers) getProviders(c echo.Context) error {
	id, err := store.ParseID(c.Param("b3"))
	if err != nil {
		return badRequest("object id must be b3: followed by 64 lowercase hex digits")
	}
	q := c.QueryParams()
	limit := defaultProviderLimit
	if s := q.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > maxProviderLimit || s[0] == '+' {
			return badRequest("limit must be an integer from 1 to %d", maxProviderLimit)
		}
		limit = n
	}
	region := h.Zone
	if q.Has("region") {
		region = q.Get("region")
	}
	ps, err := h.db.Providers(c.Request().Context(), id, region, limit)
	if err != nil {
		return dbError(err)
	}
	if len(ps) == 0 {
		return writeErrorCached(c, httpx.NewError(http.StatusNotFound, httpx.CodeNotFound, "no providers"), ccProvidersEmpty)
	}
	now := h.now()
	out := providersOut{B3: id.String(), Providers: make([]providerOut, 0, len(ps))}
	for _, p := range ps {
		out.Providers = append(out.Providers, providerOut{
			Node: p.Node, Addr: p.Addr, Region: p.Region, Type: p.Type,
			LastSeenS:  max(int64(now.Sub(p.LastSeen)/time.Second), 0),
			ExpiresInS: ceilSeconds(p.Expires.Sub(now)),
		})
	}
	c.Response().Header().Set("Cache-Control", ccProviders)
	return writeJSON(c, http.StatusOK, out)
}

// ceilSeconds rounds d up to whole seconds (0 for d ≤ 0), so a live record
// never reports expires_in_s 0.
func ceilSeconds(d time.Duration) int64 {
	if d <= 0 {
		return 0
	}
	return int64((d + time.Second - 1) / time.Second)
}
