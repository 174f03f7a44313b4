package httpcache

import (
	"net/http"
	"net/url"
	"strings"
	"time"
)

// sim is a minimal single-origin cache built from this package the way the
// edge role uses it, with a scripted origin, for end-to-end scenarios in the
// style of http-tests/cache-tests (tests/*.mjs).
type sim struct {
	p        Policy
	prefix   *url.URL
	entries  map[Key][]*Stored
	start    time.Time
	upstream []string // methods and conditionals the origin saw, for assertions
}

// step is one client request and the origin's scripted answer to it.
type step struct {
	method      string   // default GET
	path        string   // default "test"
	reqH        []string // client request fields
	status      int      // origin status; default 200
	respH       []string // origin response fields
	at          float64  // seconds since the start
	unreachable bool     // the origin cannot be reached
}

// Outcomes of a step, as the cache-tests client would classify them.
const (
	outCached    = "cached"    // answered from the cache, the origin not contacted
	outFetched   = "fetched"   // a full response came from the origin
	outValidated = "validated" // a conditional request was answered 304 and the entry reused
	outError     = "error"     // the origin's error (or unreachability) reached the client
	outTimeout   = "504"       // only-if-cached without a usable entry
)

func newSim() *sim {
	u, _ := url.Parse("http://127.0.0.1:18000")
	return &sim{p: DefaultPolicy(), prefix: u, entries: map[Key][]*Stored{}, start: t0}
}

// run performs one step and returns its outcome.
func (s *sim) run(st step) string {
	if st.method == "" {
		st.method = http.MethodGet
	}
	if st.path == "" {
		st.path = "test"
	}
	if st.status == 0 {
		st.status = 200
	}
	now := s.start.Add(time.Duration(st.at * float64(time.Second)))
	target, _ := url.Parse(s.prefix.String() + "/" + st.path)
	req := Request{Method: st.method, URL: target, Header: hdr(st.reqH...), Time: now}
	key, _ := KeyOf(s.prefix, target)
	if st.method != http.MethodGet && st.method != http.MethodHead {
		r := s.origin(st, req.Header, now)
		for _, k := range Invalidations(st.method, r.Status, target, r.Header, s.prefix) {
			delete(s.entries, k)
		}
		return outFetched
	}
	var cur *Stored
	if i := Select(req.Header, s.entries[key]); i >= 0 {
		cur = s.entries[key][i]
	}
	d := Decide(req, cur, now, s.p)
	switch d.Action {
	case ServeFresh:
		return outCached
	case ServeStale:
		if d.Background {
			s.validate(key, req, cur, st, now)
		}
		return outCached
	case GatewayTimeout:
		return outTimeout
	case Validate:
		return s.validate(key, req, cur, st, now)
	}
	if st.unreachable {
		return outError
	}
	s.store(key, req, s.origin(st, req.Header, now))
	return outFetched
}

// validate revalidates cur like the role: conditional request (HEAD stays
// HEAD), 304 → Update304, HEAD 200 → FreshenFromHead, errors → stale if allowed.
func (s *sim) validate(key Key, req Request, cur *Stored, st step, now time.Time) string {
	failure := Failure(0)
	switch {
	case st.unreachable:
		failure = FailureUnreachable
	case IsErrorStatus(st.status):
		failure = FailureStatus
	}
	if failure != 0 {
		if ServeStaleOnFailure(req, cur, now, failure, s.p) {
			return outCached
		}
		return outError
	}
	c := ConditionalHeaders(cur)
	h := req.Header.Clone()
	for _, f := range c.Remove {
		h.Del(f)
	}
	cloneInto(h, c.Set)
	r := s.origin(st, h, now)
	switch {
	case r.Status == http.StatusNotModified:
		if n, ok := Update304(cur, r); ok {
			s.replace(key, cur, n)
			return outValidated
		}
		r = s.origin(st, req.Header, now) // unconditional refetch
	case req.Method == http.MethodHead:
		if n, outcome := FreshenFromHead(req, cur, r); outcome != HeadIgnored {
			s.replace(key, cur, n)
		}
		return outFetched
	}
	s.store(key, req, r)
	return outFetched
}

// origin answers like the cache-tests server: 304 when a conditional matches
// the scripted validators, else the scripted response.
func (s *sim) origin(st step, sent http.Header, now time.Time) Response {
	s.upstream = append(s.upstream, st.method+" "+sent.Get("If-None-Match")+" "+sent.Get("If-Modified-Since"))
	h := hdr(st.respH...)
	status := st.status
	v := ValidatorsOf(h)
	inm, ims := sent.Get("If-None-Match"), sent.Get("If-Modified-Since")
	imsTime, imsOK := ParseHTTPDate(ims)
	if status == 200 && ((inm != "" && v.HasETag && strings.Contains(inm, `"`+v.ETag.Opaque+`"`)) ||
		(inm == "" && imsOK && v.HasLastModified && !v.LastModified.After(imsTime))) {
		status = http.StatusNotModified
	}
	return Response{Status: status, Header: h, ContentLength: -1, RequestTime: now, ResponseTime: now}
}

// store keeps a storable response, replacing the variant it selects.
func (s *sim) store(key Key, req Request, r Response) {
	if ok, _ := Storable(req, r, s.p); !ok {
		return
	}
	n := NewStored(req, r)
	for i, old := range s.entries[key] {
		if VaryMatches(old, req.Header) {
			s.entries[key][i] = n
			return
		}
	}
	s.entries[key] = append(s.entries[key], n)
}

func (s *sim) replace(key Key, old, n *Stored) {
	for i, e := range s.entries[key] {
		if e == old {
			s.entries[key][i] = n
		}
	}
}
