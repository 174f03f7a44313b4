package httpcache

import (
	"net/http"
	"time"
)

// Action is what the edge does with a request given the stored response
// that matched it (if any).
type Action uint8

const (
	// Fetch forwards the request to the origin as on a miss (client
	// conditionals unchanged; a storable 200 is stored).
	Fetch Action = iota
	// ServeFresh answers from the stored response.
	ServeFresh
	// ServeStale answers from the stored, stale response without waiting;
	// Decision.Background says whether to queue a background revalidation.
	ServeStale
	// Validate revalidates the stored response with the origin (see
	// ConditionalHeaders) before answering.
	Validate
	// GatewayTimeout answers 504: only-if-cached and nothing usable is stored.
	GatewayTimeout
)

var actionNames = [...]string{"fetch", "serve_fresh", "serve_stale", "validate", "gateway_timeout"}

// String returns the action's name.
func (a Action) String() string {
	if int(a) < len(actionNames) {
		return actionNames[a]
	}
	return "unknown"
}

// Cache-Status forward reasons (RFC 9211 §2.2) the edge uses.
const (
	FwdMiss    = "miss"    // nothing stored matched
	FwdStale   = "stale"   // a stored response matched but needs validation
	FwdRequest = "request" // a fresh stored response matched but the request forbade its use
	FwdBypass  = "bypass"  // the cache does not handle this request
)

// Decision is the outcome of Decide.
type Decision struct {
	Action Action
	// Fwd is the Cache-Status fwd value for an Action that contacts the
	// origin (Fetch, Validate; also set for GatewayTimeout).
	Fwd string
	// Lifetime and Age of the stored response at the decision time (zero
	// without one).
	Lifetime, Age time.Duration
	// Background: for ServeStale, queue one background revalidation
	// (stale-while-revalidate).
	Background bool
	// Why is a short machine-readable explanation for logs and tests.
	Why string
}

// TTL is the remaining freshness lifetime, negative when stale.
func (d Decision) TTL() time.Duration { return d.Lifetime - d.Age }

// Decide chooses how to answer a request given the stored response st that
// Select picked for it (nil for none) at time now (docs/edge.md §7.4, RFC 9111
// §4, §5.2.1, RFC 5861 §3). Order: methods other than GET and HEAD bypass;
// If-Match / If-Unmodified-Since forward; response no-cache or an
// invalidated entry validate; request no-cache (or Pragma), max-age and
// min-fresh validate; a fresh response is served; a stale one is served when
// the request's max-stale allows it, or within stale-while-revalidate with a
// background revalidation, unless must-revalidate, proxy-revalidate or
// s-maxage forbid stale use; otherwise it is validated. Under only-if-cached
// every outcome that would contact the origin becomes GatewayTimeout.
func Decide(req Request, st *Stored, now time.Time, p Policy) Decision {
	rd := p.requestDirectives(req.Header)
	d := decide(req, rd, st, now, p)
	if rd.Has("only-if-cached") && (d.Action == Fetch || d.Action == Validate) {
		d.Action, d.Why = GatewayTimeout, "only-if-cached: "+d.Why
	}
	return d
}

func decide(req Request, rd Directives, st *Stored, now time.Time, p Policy) Decision {
	if req.Method != http.MethodGet && req.Method != http.MethodHead {
		return Decision{Action: Fetch, Fwd: FwdBypass, Why: "method"}
	}
	if st == nil {
		return Decision{Action: Fetch, Fwd: FwdMiss, Why: "miss"}
	}
	lifetime, age := Freshness(st, now, p)
	d := Decision{Lifetime: lifetime, Age: age}
	fresh := age < lifetime && !st.Invalidated
	validate := func(fwd, why string) Decision {
		d.Action, d.Fwd, d.Why = Validate, fwd, why
		return d
	}
	if len(req.Header.Values("If-Match")) > 0 || len(req.Header.Values("If-Unmodified-Since")) > 0 {
		d.Action, d.Fwd, d.Why = Fetch, fwdFor(fresh), "origin-only precondition"
		return d
	}
	dirs, _ := Effective(st.Header)
	switch {
	case st.Invalidated:
		return validate(FwdStale, "invalidated")
	case dirs.Has("no-cache"):
		return validate(FwdStale, "response no-cache")
	}
	if why := requestForbids(rd, lifetime, age); why != "" {
		return validate(fwdFor(fresh), why)
	}
	if fresh {
		d.Action, d.Why = ServeFresh, "fresh"
		return d
	}
	return staleDecision(d, dirs, rd)
}

// staleDecision handles a stale response: served when the request's
// max-stale allows it or within stale-while-revalidate, unless a directive
// forbids stale use; validated otherwise.
func staleDecision(d Decision, dirs, rd Directives) Decision {
	staleness := d.Age - d.Lifetime
	switch swr, swrOK := dirs.Seconds("stale-while-revalidate"); {
	case staleForbidden(dirs):
		d.Action, d.Fwd, d.Why = Validate, FwdStale, "stale, revalidation required"
	case maxStaleAllows(rd, staleness):
		d.Action, d.Why = ServeStale, "max-stale"
	case swrOK && staleness < swr:
		d.Action, d.Background, d.Why = ServeStale, true, "stale-while-revalidate"
	default:
		d.Action, d.Fwd, d.Why = Validate, FwdStale, "stale"
	}
	return d
}

func fwdFor(fresh bool) string {
	if fresh {
		return FwdRequest
	}
	return FwdStale
}

// requestForbids returns why the request's directives forbid using the
// stored response without validation, or "" (RFC 9111 §5.2.1).
func requestForbids(rd Directives, lifetime, age time.Duration) string {
	if rd.Has("no-cache") {
		return "request no-cache"
	}
	if maxAge, ok := rd.Seconds("max-age"); ok && age > maxAge {
		return "request max-age"
	}
	if minFresh, ok := rd.Seconds("min-fresh"); ok && lifetime-age < minFresh {
		return "request min-fresh"
	}
	return ""
}

// staleForbidden: directives that forbid serving the response stale
// (RFC 9111 §4.2.4, §5.2.2.2, §5.2.2.8, §5.2.2.10).
func staleForbidden(dirs Directives) bool {
	return dirs.Has("must-revalidate") || dirs.Has("proxy-revalidate") || dirs.Has("s-maxage") || dirs.Has("no-cache")
}

// maxStaleAllows: request max-stale without an argument accepts any
// staleness; with a valid one, staleness up to it; an invalid one is ignored.
func maxStaleAllows(rd Directives, staleness time.Duration) bool {
	v, ok := rd["max-stale"]
	if !ok {
		return false
	}
	if !v.HasValue {
		return true
	}
	limit, ok := rd.Seconds("max-stale")
	return ok && staleness <= limit
}
