package httpcache

import "time"

// ModificationTime is what If-Modified-Since is compared with for a stored
// entry: its Last-Modified, else its Date (docs/edge.md §7.4).
func ModificationTime(st *Stored) time.Time {
	if lm, ok := LastModified(st.Header); ok {
		return lm
	}
	return DateValue(st.Header, st.ResponseTime)
}

// StrongLastModified reports whether the stored Last-Modified may serve as a
// strong validator (If-Range): the entry's Date is at least one second after
// it (RFC 9110 §8.8.2.2, docs/edge.md §2).
func StrongLastModified(st *Stored) bool {
	lm, ok := LastModified(st.Header)
	return ok && DateValue(st.Header, st.ResponseTime).Sub(lm) >= time.Second
}
