package httpcache

import (
	"net/http"
	"slices"
	"strconv"
)

// clientConditionals are removed from a revalidation request: the cache
// validates its own entry and then evaluates the client's conditions (and
// Range) against the result itself.
var clientConditionals = []string{"If-Match", "If-None-Match", "If-Modified-Since", "If-Unmodified-Since", "If-Range", "Range"}

// Conditional describes the upstream request that revalidates a stored
// response, applied on top of the client's forwarded header.
type Conditional struct {
	// Set holds fields to set, replacing the client's lines: If-None-Match
	// (the stored ETag), If-Modified-Since (the stored Last-Modified, as
	// received) and the stored variant's Vary-selected request fields.
	Set http.Header
	// Remove lists fields to delete: the client's conditionals and Range,
	// and Vary-selected fields the stored variant's request lacked.
	Remove []string
	// Conditional is false when the entry has no validator: the request is
	// then an unconditional refetch.
	Conditional bool
}

// ConditionalHeaders builds the revalidation of st (RFC 9111 §4.3.1,
// docs/edge.md §7.4).
func ConditionalHeaders(st *Stored) Conditional {
	c := Conditional{Set: http.Header{}, Remove: slices.Clone(clientConditionals)}
	v := ValidatorsOf(st.Header)
	if v.HasETag {
		c.Set.Set("If-None-Match", v.ETag.String())
	}
	if v.HasLastModified {
		c.Set.Set("If-Modified-Since", st.Header.Get("Last-Modified"))
	}
	c.Conditional = v.Any()
	for _, sel := range st.Selecting {
		if sel.Present {
			c.Set[sel.Name] = slices.Clone(sel.Raw)
		} else {
			c.Remove = append(c.Remove, sel.Name)
		}
	}
	return c
}

// Selects304 reports whether a 304 with header resp freshens the stored
// header st (RFC 9111 §4.3.4): a strong ETag in the 304 must strongly match
// the stored one; a weak one must match it weakly; without an ETag, a
// Last-Modified must equal the stored one; a 304 with no validator selects
// only an entry without one.
func Selects304(st, resp http.Header) bool {
	sv, nv := ValidatorsOf(st), ValidatorsOf(resp)
	switch {
	case nv.HasETag && !nv.ETag.Weak:
		return sv.HasETag && sv.ETag.StrongEqual(nv.ETag)
	case nv.HasETag:
		return sv.HasETag && sv.ETag.WeakEqual(nv.ETag)
	case nv.HasLastModified:
		return sv.HasLastModified && sv.LastModified.Equal(nv.LastModified)
	}
	return !sv.Any()
}

// Update304 freshens st with a 304 response (RFC 9111 §4.3.4). ok is false
// when the 304 does not select st (see Selects304): nothing is updated and
// the caller refetches unconditionally. Otherwise the result is a copy of st
// whose header has every end-to-end field of the 304 but Content-Length
// replacing the stored lines of that field; Age is dropped when the 304 has
// none (the stored age no longer applies); Date is set to the 304's response
// time when it has none; the times become the 304 exchange's, and the entry
// is no longer invalidated.
func Update304(st *Stored, resp Response) (*Stored, bool) {
	if !Selects304(st.Header, resp.Header) {
		return nil, false
	}
	return freshen(st, resp), true
}

// freshen merges a 304's (or HEAD 200's) header into a copy of st.
func freshen(st *Stored, resp Response) *Stored {
	n := st.Clone()
	upd := EndToEnd(resp.Header)
	upd.Del("Content-Length")
	cloneInto(n.Header, upd)
	if len(upd.Values("Age")) == 0 {
		n.Header.Del("Age")
	}
	if len(upd.Values("Date")) == 0 {
		n.Header.Set("Date", FormatHTTPDate(resp.ResponseTime))
	}
	n.RequestTime, n.ResponseTime = resp.RequestTime, resp.ResponseTime
	n.Invalidated = false
	return n
}

// HeadOutcome is the effect of a 200 response to HEAD on one stored entry.
type HeadOutcome uint8

const (
	// HeadIgnored: the response is not a 200, or could not select the entry.
	HeadIgnored HeadOutcome = iota
	// HeadFreshened: the entry is updated as by a 304.
	HeadFreshened
	// HeadStaled: the entry no longer matches and is marked Invalidated.
	HeadStaled
)

// FreshenFromHead applies a HEAD response to a stored entry of the same key
// (RFC 9111 §4.3.5, docs/edge.md §7.4): a 200 that could select st (Vary)
// freshens it when its ETag and Last-Modified equal the stored ones (both
// absent counts as equal) and its Content-Length, when present, equals
// st.BodyLen; otherwise st becomes Invalidated. The result is a new copy, or
// st itself for HeadIgnored.
func FreshenFromHead(req Request, st *Stored, resp Response) (*Stored, HeadOutcome) {
	if resp.Status != http.StatusOK || !VaryMatches(st, req.Header) {
		return st, HeadIgnored
	}
	if headMatches(st, resp.Header) {
		return freshen(st, resp), HeadFreshened
	}
	n := st.Clone()
	n.Invalidated = true
	return n, HeadStaled
}

// headMatches compares validators and length of a HEAD 200 with st.
func headMatches(st *Stored, h http.Header) bool {
	if trimOWS(st.Header.Get("ETag")) != trimOWS(h.Get("ETag")) {
		return false
	}
	slm, sok := LastModified(st.Header)
	hlm, hok := LastModified(h)
	if sok != hok || !slm.Equal(hlm) || (!sok && trimOWS(st.Header.Get("Last-Modified")) != trimOWS(h.Get("Last-Modified"))) {
		return false
	}
	if cl := h.Get("Content-Length"); cl != "" && st.BodyLen >= 0 {
		n, err := strconv.ParseInt(trimOWS(cl), 10, 64)
		return err == nil && n == st.BodyLen
	}
	return true
}
