package live

import (
	"context"
	"errors"
	"io"
	"net/http"
	"slices"
	"time"

	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/roles/edge/edgecache"
	"github.com/ronhq/ron/roles/edge/httpcache"
)

// fillBuf is the read size of a fill.
const fillBuf = 32 << 10

// exchange is one upstream GET or HEAD on behalf of a request (docs/edge.md §7.5); its
// run methods execute on a work-queue worker and publish to its flight.
type exchange struct {
	l          *Live
	t          *target
	method     string
	header     http.Header // the client's request header (an owned copy)
	peer       peer
	reqTime    time.Time        // when the client's request arrived
	validate   *edgecache.Asset // the variant a GET revalidates; nil on a miss
	pol        httpcache.Policy
	storeLimit int64 // largest body stored
	fillMax    int64 // fill_max_bytes (to tell the amnesia limit apart)
	plan       tryPlan
	f          *flight
	start      time.Time
}

// send sends the exchange's request with retries; a revalidation is
// conditional unless unconditional is set (the one refetch of docs/edge.md §7.4).
func (x *exchange) send(ctx context.Context, unconditional bool) (*upstreamResp, error) {
	h := forwardHeader(x.header, x.t.origin, x.peer)
	if x.validate != nil {
		applyConditional(h, x.validate.Stored, unconditional)
	}
	return x.l.roundTrip(ctx, newRequest(x.method, x.t.send, h), x.plan)
}

// applyConditional turns h into the revalidation of st (RFC 9111 §4.3.1):
// the client's conditionals and Range removed, the stored validators and
// Vary-selected fields set (the validators left out when unconditional).
func applyConditional(h http.Header, st *httpcache.Stored, unconditional bool) {
	cond := httpcache.ConditionalHeaders(st)
	for _, name := range cond.Remove {
		h.Del(name)
	}
	for name, vs := range cond.Set {
		if unconditional && (name == "If-None-Match" || name == "If-Modified-Since") {
			continue
		}
		h[name] = slices.Clone(vs)
	}
}

// runGet is the worker side of a GET miss or revalidation.
func (x *exchange) runGet(ctx context.Context) {
	x.start = time.Now()
	u, err := x.send(ctx, false)
	if err != nil {
		x.fail(err)
		return
	}
	lookup := ""
	if x.validate != nil {
		lookup = lookupRefetched
		if u.status() == http.StatusNotModified {
			if x.revalidated(u) {
				return
			}
			if u, err = x.send(ctx, true); err != nil {
				x.fail(err)
				return
			}
		}
	}
	x.respond(u, lookup)
}

// runHead is the worker side of a forwarded HEAD, never stored: a 200
// freshens or invalidates the stored variants it could select (docs/edge.md §7.4);
// when it freshened the variant this request selects, the request is
// answered from that entry (stored fields kept), else the origin's answer
// is relayed.
func (x *exchange) runHead(ctx context.Context) {
	x.start = time.Now()
	u, err := x.send(ctx, false)
	if err != nil {
		x.fail(err)
		return
	}
	if u.status() == http.StatusOK {
		if a, stored, ok := x.freshenFromHead(u); ok {
			u.Close()
			x.l.met.fill(fillNotModified, x.start, time.Now())
			x.f.publish(outcome{kind: outEntry, st: a.Stored, asset: a, status: http.StatusOK, stored: stored,
				lookup: lookupRevalidated})
			return
		}
	}
	x.pass(u, "")
}

// freshenFromHead applies a HEAD 200 to every stored variant of the key
// and returns the freshened variant the request selects, if any.
func (x *exchange) freshenFromHead(u *upstreamResp) (a edgecache.Asset, stored, ok bool) {
	req := httpcache.Request{Method: http.MethodHead, URL: x.t.canon, Header: x.header, Time: x.reqTime}
	resp := x.response(u)
	var fresh []edgecache.Asset
	var saved []bool
	for _, v := range x.l.cache.Variants(x.t.key) {
		st, oc := httpcache.FreshenFromHead(req, v.Stored, resp)
		if oc == httpcache.HeadIgnored {
			continue
		}
		up := x.l.cache.UpdateAsset(x.t.key, v.Stored, st)
		if oc == httpcache.HeadFreshened {
			fresh, saved = append(fresh, edgecache.Asset{Stored: st, Blob: v.Blob}), append(saved, up)
		}
	}
	if p := pick(fresh, x.header); p != nil {
		i := slices.IndexFunc(fresh, func(f edgecache.Asset) bool { return f.Stored == p.Stored })
		return *p, saved[i], true
	}
	return edgecache.Asset{}, false, false
}

// response is u as the httpcache decisions see it.
func (x *exchange) response(u *upstreamResp) httpcache.Response {
	return httpcache.Response{Status: u.status(), Header: u.resp.Header, ContentLength: u.resp.ContentLength,
		RequestTime: u.reqTime, ResponseTime: u.respTime}
}

// revalidated applies a 304 to the revalidated variant; false when the
// 304 does not select it (the caller refetches once).
func (x *exchange) revalidated(u *upstreamResp) bool {
	resp := x.response(u)
	u.Close()
	st, ok := httpcache.Update304(x.validate.Stored, resp)
	if !ok {
		return false
	}
	stored := x.l.cache.UpdateAsset(x.t.key, x.validate.Stored, st)
	x.l.met.fill(fillNotModified, x.start, time.Now())
	x.f.publish(outcome{kind: outEntry, st: st, asset: edgecache.Asset{Stored: st, Blob: x.validate.Blob},
		status: http.StatusNotModified, stored: stored, lookup: lookupRevalidated})
	x.l.flights.remove(x.f)
	return true
}

// respond stores a storable GET response while its clients read it, or
// passes it to the requesting client (docs/edge.md §7.2, docs/edge.md §7.5).
func (x *exchange) respond(u *upstreamResp, lookup string) {
	req := httpcache.Request{Method: http.MethodGet, URL: x.t.canon, Header: x.header, Time: x.reqTime}
	resp := x.response(u)
	ok, reason := httpcache.Storable(req, resp, x.pol)
	if !ok {
		if reason == httpcache.ReasonTooLarge && x.l.cache.Memory() && resp.ContentLength <= x.fillMax {
			x.l.met.reject(reasonAmnesia)
		}
		x.pass(u, lookup)
		return
	}
	if httpcache.ValidatorsOf(resp.Header).ETagInvalid {
		x.l.met.reject(reasonEtagInvalid)
	}
	fill, err := x.l.cache.NewFill(resp.ContentLength)
	if err != nil {
		x.l.log.Warn().Err(err).Msg("live: cannot start a cache fill; relaying")
		x.pass(u, lookup)
		return
	}
	st := httpcache.NewStored(req, resp)
	x.f.publish(outcome{kind: outEntry, st: st.Clone(), fill: fill, status: u.status(), stored: true, lookup: lookup})
	x.fillBody(u, fill, st)
}

// fillBody copies the body into fill at the origin's pace and commits it
// under the key; a body growing past the store limit is handed to the
// leader instead.
func (x *exchange) fillBody(u *upstreamResp, fill *edgecache.Fill, st *httpcache.Stored) {
	defer x.l.flights.remove(x.f)
	buf := make([]byte, fillBuf)
	for {
		n, err := u.body.Read(buf)
		if n > 0 && fill.Written()+int64(n) > x.storeLimit {
			x.overflow(u, fill, buf[:n])
			return
		}
		if n > 0 {
			if _, werr := fill.Write(buf[:n]); werr != nil {
				u.Close()
				x.fillFailed(fill, werr)
				return
			}
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			u.Close()
			x.fillFailed(fill, err)
			return
		}
	}
	u.Close()
	if err := fill.CommitAsset(x.t.key, st); err != nil {
		x.fillFailed(fill, err)
		return
	}
	x.l.met.fill(fillStored, x.start, time.Now())
}

// fillFailed aborts fill: its readers get err.
func (x *exchange) fillFailed(fill *edgecache.Fill, err error) {
	fill.Abort(err)
	result := fillError
	if errors.Is(err, errFillTimeout) {
		result = fillTimeout
	}
	x.l.met.fill(result, x.start, time.Now())
	x.l.log.Debug().Err(err).Str("origin", x.t.origin.Name).Msg("live: fill aborted")
}

// overflow hands the rest of a too-large body of unknown length to the
// requesting client; the fill is dropped once it has read the prefix.
func (x *exchange) overflow(u *upstreamResp, fill *edgecache.Fill, pending []byte) {
	if x.l.cache.Memory() {
		x.l.met.reject(reasonAmnesia)
	}
	x.l.met.fill(fillPassed, x.start, time.Now())
	x.l.flights.remove(x.f)
	x.f.giveOverflow(&handoff{fill: fill, prefix: fill.Written(), pending: slices.Clone(pending), u: u})
}

// pass gives a response that is not stored to the requesting client.
func (x *exchange) pass(u *upstreamResp, lookup string) {
	x.l.met.fill(fillPassed, x.start, time.Now())
	x.f.givePass(u)
	x.f.publish(outcome{kind: outPass, status: u.status(), lookup: lookup})
	x.l.flights.remove(x.f)
}

// fail publishes an exchange that got no response.
func (x *exchange) fail(err error) {
	result := fillError
	if errors.Is(err, errFillTimeout) {
		result = fillTimeout
	}
	x.l.met.fill(result, x.start, time.Now())
	x.l.log.Debug().Err(err).Str("origin", x.t.origin.Name).Msg("live: origin exchange failed")
	x.f.failed(upstreamError(err), failureOf(err))
	x.l.flights.remove(x.f)
}

// upstreamError is the answer to a failed exchange (docs/edge.md §7.5): 504 timeout
// for fill_timeout or the client's deadline, 503 draining when aborted at shutdown, else 502
// upstream_unavailable.
func upstreamError(err error) error {
	switch {
	case errors.Is(err, errFillTimeout), errors.Is(err, context.DeadlineExceeded):
		return httpx.NewError(http.StatusGatewayTimeout, httpx.CodeTimeout, "the origin did not answer within fill_timeout")
	case errors.Is(err, context.Canceled):
		return errDrainingNow
	}
	return httpx.NewError(http.StatusBadGateway, httpx.CodeUpstreamUnavailable, "the origin could not be reached")
}
