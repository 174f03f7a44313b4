package live

import (
	"context"
	"errors"
	"net/http"

	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/roles/edge/edgecache"
	"github.com/ronhq/ron/roles/edge/fillq"
	"github.com/ronhq/ron/roles/edge/httpcache"
)

// serveSafe answers a GET or HEAD: from the cache, after a revalidation,
// or from the origin (docs/edge.md §7.4).
func (l *Live) serveSafe(k *call) error {
	variants := l.cache.Variants(k.t.key)
	a := pick(variants, k.r.Header)
	var st *httpcache.Stored
	if a != nil {
		st = a.Stored
	}
	d := httpcache.Decide(k.request(), st, k.received, k.pol)
	k.fwd = d.Fwd
	switch d.Action {
	case httpcache.ServeFresh:
		return k.fromCache(*a, d, lookupHit, nil)
	case httpcache.ServeStale:
		var background func()
		if d.Background {
			background = func() { k.revalidateLater(*a, variants) }
		}
		return k.fromCache(*a, d, lookupStaleServed, background)
	case httpcache.GatewayTimeout:
		l.met.lookup(lookupMiss, 1)
		return errOnlyIfCached
	}
	if d.Action != httpcache.Validate {
		a = nil // forwarded as on a miss: the entry plays no part
	}
	if k.r.Method == http.MethodHead {
		return k.forwardHead(d, a)
	}
	return k.fetch(d, a, variants)
}

// fromCache serves the stored variant a (a fresh hit, or stale within
// max-stale or stale-while-revalidate). An entry evicted meanwhile is a
// miss. then, when set, runs once the body is open (a background
// revalidation may replace the entry without taking the body away).
func (k *call) fromCache(a edgecache.Asset, d httpcache.Decision, lookup string, then func()) error {
	b, ok := k.l.cache.OpenAsset(a)
	if ok && then != nil {
		then()
	}
	if !ok {
		miss := httpcache.Decision{Action: httpcache.Fetch, Fwd: httpcache.FwdMiss}
		if k.r.Method == http.MethodHead {
			return k.forwardHead(miss, nil)
		}
		return k.fetch(miss, nil, nil)
	}
	k.l.met.lookup(lookup, 1)
	cs := httpcache.CacheStatus{Hit: true, TTL: d.TTL()}.String()
	return k.serveStored(a.Stored, blobSource{b}, cs)
}

// serveStale serves a after its revalidation failed (stale-if-error,
// stale_if_unreachable).
func (k *call) serveStale(a *edgecache.Asset) error {
	b, ok := k.l.cache.OpenAsset(*a)
	if !ok {
		return httpx.NewError(http.StatusBadGateway, httpx.CodeUpstreamUnavailable, "the origin could not be reached")
	}
	k.l.met.lookup(lookupStaleServed, 1)
	lifetime, age := httpcache.Freshness(a.Stored, k.l.now(), k.pol)
	cs := httpcache.CacheStatus{Hit: true, TTL: lifetime - age}.String()
	return k.serveStored(a.Stored, blobSource{b}, cs)
}

// fetch sends a GET upstream, coalesced with the requests for the same
// key and Vary-selected values (docs/edge.md §7.5). stale is the variant revalidated
// (nil on a miss).
func (k *call) fetch(d httpcache.Decision, stale *edgecache.Asset, variants []edgecache.Asset) error {
	f, leader := k.l.flights.join(flightKey(k.t.key, variants, k.r.Header))
	if !leader {
		return k.await(f, d, stale)
	}
	if d.Action == httpcache.Fetch && d.Fwd == httpcache.FwdMiss {
		// A fill may have committed between the look-up and the join.
		if a := pick(k.l.cache.Variants(k.t.key), k.r.Header); a != nil {
			if d2 := httpcache.Decide(k.request(), a.Stored, k.l.now(), k.pol); d2.Action == httpcache.ServeFresh {
				f.publish(outcome{kind: outRetry})
				k.l.flights.remove(f)
				f.leave()
				return k.fromCache(*a, d2, lookupHit, nil)
			}
		}
	}
	return k.lead(f, d, stale)
}

// maxAlone bounds the exchanges one request sends on its own (a shared
// response that did not serve it, an entry evicted before it was read).
const maxAlone = 2

// alone sends the request without coalescing (a waiter the shared
// response did not serve).
func (k *call) alone(d httpcache.Decision, stale *edgecache.Asset) error {
	if k.alones++; k.alones > maxAlone {
		return httpx.NewError(http.StatusBadGateway, httpx.CodeUpstreamUnavailable, "the origin response could not be kept")
	}
	if k.r.Method == http.MethodHead {
		return k.forwardHead(d, stale)
	}
	return k.lead(newFlight(""), d, stale)
}

// lead submits the exchange of flight f and answers from its outcome.
func (k *call) lead(f *flight, d httpcache.Decision, stale *edgecache.Asset) error {
	defer f.leave()
	x := k.exchange(http.MethodGet, stale, f)
	kind := "fill"
	if stale != nil {
		kind = "revalidate"
	}
	if err := k.l.submit(x, kind, x.runGet); err != nil {
		f.failed(err, 0)
		k.l.flights.remove(f)
		return err
	}
	if err := k.waitLeader(f); err != nil {
		return err
	}
	return k.answer(f, d, stale, false)
}

// await waits for another request's exchange and answers from it.
func (k *call) await(f *flight, d httpcache.Decision, stale *edgecache.Asset) error {
	k.l.met.coalesced.Inc()
	select {
	case <-f.done:
	case <-k.ctx.Done():
		return k.waitError()
	}
	return k.answer(f, d, stale, true)
}

// waitLeader waits for f's outcome, relaying interim responses.
func (k *call) waitLeader(f *flight) error {
	for {
		select {
		case ir := <-f.interim:
			k.writeInterim(ir)
		case <-f.done:
			for {
				select {
				case ir := <-f.interim:
					k.writeInterim(ir)
				default:
					return nil
				}
			}
		case <-k.ctx.Done():
			return k.waitError()
		}
	}
}

// answer serves the outcome of flight f; collapsed is set for a waiter.
func (k *call) answer(f *flight, d httpcache.Decision, stale *edgecache.Asset, collapsed bool) error {
	o := f.out
	switch o.kind {
	case outEntry:
		if collapsed && !httpcache.VaryMatches(o.st, k.r.Header) {
			return k.alone(d, stale)
		}
		k.countLookup(d, o.lookup)
		return k.serveOutcome(f, o, d, stale, collapsed)
	case outPass:
		if k.staleOnStatus(stale, o.status) {
			if !collapsed {
				if u := f.claimPass(); u != nil {
					u.Close()
				}
			}
			return k.serveStale(stale)
		}
		if collapsed {
			return k.alone(d, stale)
		}
		return k.relayPass(f, o, d)
	case outFailed:
		if stale != nil && o.failure != 0 && httpcache.ServeStaleOnFailure(k.request(), stale.Stored, k.l.now(), o.failure, k.pol) {
			return k.serveStale(stale)
		}
		k.countLookup(d, "")
		return o.err
	}
	if k.retried { // outRetry
		return k.alone(d, stale)
	}
	k.retried = true
	return k.l.serveSafe(k)
}

// staleOnStatus: a revalidation answered 500, 502, 503 or 504 and the
// stored response may be served instead (stale-if-error).
func (k *call) staleOnStatus(stale *edgecache.Asset, status int) bool {
	return stale != nil && httpcache.IsErrorStatus(status) &&
		httpcache.ServeStaleOnFailure(k.request(), stale.Stored, k.l.now(), httpcache.FailureStatus, k.pol)
}

// relayPass relays the leader's response that was not stored.
func (k *call) relayPass(f *flight, o outcome, d httpcache.Decision) error {
	u := f.claimPass()
	if u == nil {
		return httpx.NewError(http.StatusBadGateway, httpx.CodeUpstreamUnavailable, "the origin response was lost")
	}
	defer u.Close()
	k.countLookup(d, o.lookup)
	return k.relay(u, httpcache.CacheStatus{Fwd: d.Fwd, FwdStatus: o.status}.String())
}

// countLookup counts the call's cache outcome once it contacted the
// origin: the validation result when known, else miss, bypass (a request
// forwarded past a stored response) or refetched.
func (k *call) countLookup(d httpcache.Decision, lookup string) {
	switch {
	case lookup != "":
	case d.Action == httpcache.Validate:
		lookup = lookupRefetched
	case d.Fwd == httpcache.FwdMiss:
		lookup = lookupMiss
	default:
		lookup = lookupBypass
	}
	k.l.met.lookup(lookup, 1)
}

// serveOutcome serves an outEntry: a 304-freshened entry from its blob, a
// new one from its fill as it grows.
func (k *call) serveOutcome(f *flight, o outcome, d httpcache.Decision, stale *edgecache.Asset, collapsed bool) error {
	cs := httpcache.CacheStatus{Fwd: d.Fwd, FwdStatus: o.status, Stored: o.stored, Collapsed: collapsed}.String()
	if o.fill == nil {
		b, ok := k.l.cache.OpenAsset(o.asset)
		if !ok {
			return k.alone(d, stale)
		}
		return k.serveStored(o.st, blobSource{b}, cs)
	}
	fol := o.fill.Follow()
	if !collapsed && o.st.BodyLen < 0 {
		return k.serveGrowing(f, o.st, fol, cs)
	}
	err := k.serveStored(o.st, followerSource{fol}, cs)
	var ns errNotServed
	switch {
	case !errors.As(err, &ns):
		return err
	case errors.Is(ns.err, errOverflow):
		return k.alone(d, stale) // the fill outgrew the store limit: fetch on our own
	}
	return upstreamError(ns.err)
}

// submit puts an exchange on the work queue (docs/edge.md §7.5): 429 busy when full,
// 503 draining when closed. A dropped job fails its flight.
func (l *Live) submit(x *exchange, kind string, run func(context.Context)) error {
	err := l.queue.Submit(fillq.Job{Kind: kind, Deadline: x.plan.deadline, Run: run,
		Dropped: func(err error) {
			x.f.failed(droppedError(err), 0)
			l.flights.remove(x.f)
		}})
	switch {
	case errors.Is(err, fillq.ErrBusy):
		l.met.busy()
		return errBusy
	case err != nil:
		return errDrainingNow
	}
	return nil
}
