// Package httpcache is the pure decision logic of the edge's RFC 9111 shared
// cache for live fill (docs/edge.md §7.2–7.4, §7.6): parsing of the caching
// header fields, storability, freshness and age, the choice between serving,
// revalidating and fetching, conditional revalidation, freshening from 304 and
// HEAD responses, invalidation by unsafe methods, and the Age and Cache-Status
// (RFC 9211) values the edge sends.
//
// The package performs no I/O, starts no goroutines and never reads the clock:
// every function that depends on time takes a `now` argument. Functions never
// modify their arguments; values that change (a freshened entry) are returned
// as new copies, so a *Stored may be shared read-only between goroutines.
//
// References cited in comments and test names: RFC 9110 (HTTP semantics),
// RFC 9111 (caching), RFC 9211 (Cache-Status), RFC 9213 (CDN-Cache-Control),
// RFC 8941 (structured fields), RFC 5861 (stale-while-revalidate,
// stale-if-error).
package httpcache
