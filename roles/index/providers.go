package index

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/roles/index/indexapi"
	"github.com/ronhq/ron/roles/index/indexdb"
	"github.com/ronhq/ron/store"
)

// Limits of GET /providers/{b3}?limit= (docs/index.md §4).
const (
	defaultProviderLimit = 20
	maxProviderLimit     = 64
)

// announce is POST /providers: validate the whole batch, then apply it in
// one transaction (all or nothing).
func (h *Handlers) announce(c echo.Context) error {
	if err := h.authorize(c, indexapi.ScopeWrite); err != nil {
		return err
	}
	recs, err := h.readAnnounce(c)
	if err != nil {
		h.countWrite(writeProvider, err, 1)
		return err
	}
	res, err := h.doAnnounce(c.Request().Context(), recs)
	if err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, res)
}

// readJSONBody reads a JSON request body under the body limit.
func readJSONBody(c echo.Context) ([]byte, error) {
	if err := httpx.RequireJSON(c.Request()); err != nil {
		return nil, err
	}
	return httpx.ReadBody(c.Request())
}

// readAnnounce reads and validates a POST /providers body (also the body
// of POST /replica/providers): records without ttl_s get default_ttl.
func (h *Handlers) readAnnounce(c echo.Context) ([]indexapi.Announcement, error) {
	body, err := readJSONBody(c)
	if err != nil {
		return nil, err
	}
	ttl := h.settings().DefaultTTL
	if ttl <= 0 {
		ttl = indexdb.DefaultTTL
	}
	recs, err := indexdb.DecodeAnnounce(body, ttl)
	if err != nil {
		return nil, announceError(err, true)
	}
	return recs, nil
}

// doAnnounce applies a batch (the code path of POST /providers and
// LocalClient.Announce; in cluster mode through the records' owners,
// clusterAnnounce) and counts it: accepted records as kind provider,
// withdrawals as kind withdraw, a failed batch once as kind provider.
func (h *Handlers) doAnnounce(ctx context.Context, recs []indexapi.Announcement) (indexapi.AnnounceReply, error) {
	apply := h.applyBatch
	if h.cl != nil {
		apply = h.clusterAnnounce
	}
	res, err := apply(ctx, recs)
	if err != nil {
		h.countWrite(writeProvider, err, 1)
		return res, err
	}
	h.countWrite(writeProvider, nil, res.Accepted)
	h.countWrite(writeWithdraw, nil, res.Withdrawn)
	return res, nil
}

// applyBatch is doAnnounce without the metrics.
func (h *Handlers) applyBatch(ctx context.Context, recs []indexapi.Announcement) (indexapi.AnnounceReply, error) {
	if err := indexapi.CheckWholeSeconds(recs); err != nil {
		return indexapi.AnnounceReply{}, err
	}
	res, err := h.db.Announce(ctx, recs)
	if err != nil {
		return indexapi.AnnounceReply{}, announceError(err, false)
	}
	h.invalidateObjects(recs)
	return indexapi.AnnounceReply{Accepted: res.Accepted, Withdrawn: res.Withdrawn}, nil
}

// invalidateObjects drops the cached answers of the records' objects.
func (h *Handlers) invalidateObjects(recs []indexapi.Announcement) {
	if c := h.settings().Cache; c != nil {
		for _, a := range recs {
			c.InvalidateObject(a.ID.String())
		}
	}
}

// announceError maps a batch failure: an *indexapi.InvalidError (from
// DecodeAnnounce when decoding) is indexapi.BatchError, anything else
// dbError.
func announceError(err error, decoding bool) error {
	var ie *indexapi.InvalidError
	if !errors.As(err, &ie) {
		return dbError(err)
	}
	return indexapi.BatchError(ie, decoding)
}

// getProviders is GET /providers/{b3}?limit=&region=: the live local
// records, region matches first (default region: Zone), then freshest, then
// node id. None → 404 (cacheable for 2 s).
func (h *Handlers) getProviders(c echo.Context) error {
	id, err := store.ParseID(c.Param("b3"))
	if err != nil {
		return indexapi.BadRequest("object id must be b3: followed by 64 lowercase hex digits")
	}
	q := c.QueryParams()
	limit := defaultProviderLimit
	if s := q.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || s[0] == '+' {
			return errBadLimit()
		}
		limit = n
	}
	region := h.settings().Zone
	if q.Has("region") {
		region = q.Get("region")
	}
	out, err := h.lookupProviders(c.Request().Context(), id, region, limit, requestOpts(c))
	if err != nil {
		if httpx.AsError(err).Status == http.StatusNotFound {
			return writeErrorCached(c, err, ccProvidersEmpty)
		}
		return err
	}
	c.Response().Header().Set("Cache-Control", ccProviders)
	return writeJSON(c, http.StatusOK, out)
}

// lookupProviders is the code path of GET /providers/{b3} and
// LocalClient.Providers: the live local records, else (unless o.localOnly)
// the cached or peers' answer within one lookup budget (docs/index.md §4, docs/index.md §6). None
// anywhere → 404.
func (h *Handlers) lookupProviders(ctx context.Context, id store.ID, region string, limit int, o resolveOpts) (indexapi.ProviderList, error) {
	if limit == 0 {
		limit = defaultProviderLimit
	}
	if limit < 1 || limit > maxProviderLimit {
		return indexapi.ProviderList{}, errBadLimit()
	}
	o.set = h.settings()
	ctx, cancel := o.withBudget(ctx)
	defer cancel()
	ps, _, _, err := h.resolveProviders(ctx, id, region, limit, o)
	if err != nil {
		return indexapi.ProviderList{}, err
	}
	return indexapi.ProviderList{B3: id.String(), Providers: ps}, nil
}

// errBadLimit is the 400 of a limit outside 1–64.
func errBadLimit() *httpx.Error {
	return indexapi.BadRequest("limit must be an integer from 1 to %d", maxProviderLimit)
}

// doProviders lists the live local providers of id, at most limit (1–64);
// none → 404 not_found.
func (h *Handlers) doProviders(ctx context.Context, id store.ID, region string, limit int) (indexapi.ProviderList, error) {
	ps, err := h.db.Providers(ctx, id, region, limit)
	if err != nil {
		return indexapi.ProviderList{}, dbError(err)
	}
	if len(ps) == 0 {
		return indexapi.ProviderList{}, httpx.NewError(http.StatusNotFound, httpx.CodeNotFound, "no providers")
	}
	now := h.now()
	out := indexapi.ProviderList{B3: id.String(), Providers: make([]indexapi.ProviderInfo, 0, len(ps))}
	for _, p := range ps {
		out.Providers = append(out.Providers, indexapi.ProviderInfo{
			Node: p.Node, Addr: p.Addr, Region: p.Region, Type: p.Type,
			LastSeenS:  max(int64(now.Sub(p.LastSeen)/time.Second), 0),
			ExpiresInS: ceilSeconds(p.Expires.Sub(now)),
		})
	}
	return out, nil
}

// ceilSeconds rounds d up to whole seconds (0 for d ≤ 0), so a live record
// never reports expires_in_s 0.
func ceilSeconds(d time.Duration) int64 {
	if d <= 0 {
		return 0
	}
	return int64((d + time.Second - 1) / time.Second)
}
