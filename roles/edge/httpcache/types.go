package httpcache

import (
	"maps"
	"net/http"
	"net/url"
	"slices"
	"time"
)

// Request is what the cache logic needs of a client request.
type Request struct {
	Method string
	URL    *url.URL // the request target (used for invalidation)
	Header http.Header
	Time   time.Time // when the edge received the request
}

// Response is an origin response as received, before any storage.
type Response struct {
	Status        int
	Header        http.Header
	ContentLength int64     // body length from Content-Length; -1 when unknown
	RequestTime   time.Time // when the request that produced it was sent upstream
	ResponseTime  time.Time // when its header arrived
}

// Stored is a stored response (one variant of a cache key). Its fields are
// plain data so the edge can persist it; functions of this package never
// modify a Stored they are given.
type Stored struct {
	Status int
	// Header is the stored header: the response's end-to-end fields (see
	// EndToEnd) plus a Date when the response had none.
	Header       http.Header
	BodyLen      int64 // stored body length; -1 while unknown
	RequestTime  time.Time
	ResponseTime time.Time
	// Selecting holds the request values of the fields the response's Vary
	// named, in Vary order.
	Selecting []Selected
	// Invalidated marks an entry that must not be reused without a successful
	// validation (RFC 9111 §4.3.5 HEAD mismatch, RFC 9111 §4.4 invalidation): it is
	// never fresh and never served stale.
	Invalidated bool
}

// Clone returns a deep copy of s.
func (s *Stored) Clone() *Stored {
	c := *s
	c.Header = s.Header.Clone()
	c.Selecting = slices.Clone(s.Selecting)
	for i := range c.Selecting {
		c.Selecting[i].Raw = slices.Clone(c.Selecting[i].Raw)
	}
	return &c
}

// Policy holds the configuration the decisions depend on (docs/edge.md §10).
type Policy struct {
	// MaxBodyBytes: a response whose Content-Length exceeds it is not stored
	// (fill_max_bytes, or the amnesia limit); ≤ 0 means no limit here.
	MaxBodyBytes int64
	// DefaultTTL replaces the 10 % heuristic when > 0 (origin default_ttl).
	DefaultTTL time.Duration
	// HeuristicMaxTTL caps the 10 % heuristic (heuristic_max_ttl).
	HeuristicMaxTTL time.Duration
	// StaleIfUnreachable: how long after expiry a response may be served when
	// the origin cannot be reached (stale_if_unreachable).
	StaleIfUnreachable time.Duration
	// IgnoreRequestDirectives disables request Cache-Control and Pragma
	// (origin honor_request_cache_control = false).
	IgnoreRequestDirectives bool
}

// DefaultPolicy returns the spec defaults: 64 MiB bodies, no default TTL, a
// 24 h heuristic cap, 60 s stale-if-unreachable, request directives honoured.
func DefaultPolicy() Policy {
	return Policy{
		MaxBodyBytes:       64 << 20,
		HeuristicMaxTTL:    24 * time.Hour,
		StaleIfUnreachable: 60 * time.Second,
	}
}

// requestDirectives returns the request directives the policy honours.
func (p Policy) requestDirectives(h http.Header) Directives {
	if p.IgnoreRequestDirectives {
		return nil
	}
	return RequestDirectives(h)
}

// NewStored builds the entry for a storable response to req: the response's
// end-to-end header fields, a Date set to the response time when the
// response had none (RFC 9110 §6.6.1), the request values of the fields Vary
// names, and the exchange's times. BodyLen starts as resp.ContentLength.
func NewStored(req Request, resp Response) *Stored {
	h := EndToEnd(resp.Header)
	if len(h.Values("Date")) == 0 {
		h.Set("Date", FormatHTTPDate(resp.ResponseTime))
	}
	vary, _ := ParseVary(resp.Header)
	return &Stored{
		Status:       resp.Status,
		Header:       h,
		BodyLen:      resp.ContentLength,
		RequestTime:  resp.RequestTime,
		ResponseTime: resp.ResponseTime,
		Selecting:    SelectingFields(vary, req.Header),
	}
}

// cloneInto copies the lines of src into dst under canonical names,
// replacing existing lines of the same fields.
func cloneInto(dst, src http.Header) {
	for _, k := range slices.Sorted(maps.Keys(src)) {
		dst[http.CanonicalHeaderKey(k)] = slices.Clone(src[k])
	}
}
