package live

import (
	"context"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/roles/edge/edgecache"
	"github.com/ronhq/ron/roles/edge/httpcache"
)

// call is one GET or HEAD request being answered, on its handler goroutine.
type call struct {
	l          *Live
	c          echo.Context
	r          *http.Request
	ctx        context.Context
	sn         *snapshot
	t          *target
	pol        httpcache.Policy
	storeLimit int64
	received   time.Time
	peer       peer
	retried    bool   // the cache was looked up again once (outRetry)
	alones     int    // exchanges sent without coalescing (see maxAlone)
	fwd        string // the Cache-Status fwd reason once decided
}

func (l *Live) newCall(c echo.Context, sn *snapshot, t *target) *call {
	limit := sn.s.FillMaxBytes
	if l.cache != nil {
		limit = l.cache.StoreLimit(limit)
	}
	r := c.Request()
	return &call{l: l, c: c, r: r, ctx: r.Context(), sn: sn, t: t, pol: sn.policy(t.origin, limit),
		storeLimit: limit, received: l.now(), peer: peerOf(r, sn.s.TrustedProxies)}
}

// request is the request as the httpcache decisions see it.
func (k *call) request() httpcache.Request {
	return httpcache.Request{Method: k.r.Method, URL: k.t.canon, Header: k.r.Header, Time: k.received}
}

// deadline is the client's deadline (zero when none).
func (k *call) deadline() time.Time {
	d, _ := k.ctx.Deadline()
	return d
}

// exchange prepares the upstream request of this call for flight f;
// validate is the stored variant a GET revalidates (nil on a miss).
func (k *call) exchange(method string, validate *edgecache.Asset, f *flight) *exchange {
	return &exchange{l: k.l, t: k.t, method: method, header: k.r.Header.Clone(), peer: k.peer,
		reqTime: k.received, validate: validate, pol: k.pol, storeLimit: k.storeLimit,
		fillMax: k.sn.s.FillMaxBytes, f: f,
		plan: tryPlan{tries: k.t.origin.MaxTries, timeout: k.sn.s.FillTimeout, deadline: k.deadline(), interim: f.sendInterim}}
}

// pick returns the variant Select chooses for h, or nil.
func pick(variants []edgecache.Asset, h http.Header) *edgecache.Asset {
	if len(variants) == 0 {
		return nil
	}
	sts := make([]*httpcache.Stored, len(variants))
	for i, v := range variants {
		sts[i] = v.Stored
	}
	if i := httpcache.Select(h, sts); i >= 0 {
		return &variants[i]
	}
	return nil
}

// waitError is the answer when the client's context ends while it waits
// for an exchange (the exchange goes on for the others).
func (k *call) waitError() error {
	return httpx.NewError(http.StatusGatewayTimeout, httpx.CodeTimeout, "the origin did not answer within the request deadline")
}

// errOnlyIfCached answers only-if-cached without a usable stored response.
var errOnlyIfCached = httpx.NewError(http.StatusGatewayTimeout, httpx.CodeTimeout, "only-if-cached: no usable stored response")

// errBusy answers a full work queue (429 busy, Retry-After 1).
var errBusy = httpx.NewError(http.StatusTooManyRequests, httpx.CodeBusy, "the work queue is full").WithRetryAfter(1)

// errDrainingNow answers a closed work queue.
var errDrainingNow = httpx.NewError(http.StatusServiceUnavailable, httpx.CodeDraining, "the edge is shutting down")
