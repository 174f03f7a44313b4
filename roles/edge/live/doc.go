// Package live is the edge's live fill at /assets/{origin}/{path...}
// (docs/edge.md §7): an RFC 9111 shared cache in front of configured
// origins.
//
// The decisions (storability, freshness, revalidation, Vary, invalidation)
// come from roles/edge/httpcache; bodies live in roles/edge/edgecache; every
// upstream GET or HEAD runs as a job on the bounded work queue of
// roles/edge/fillq. This package adds the I/O around them: the origin
// mapping and client (docs/edge.md §7.1), the upstream exchanges with their timeouts and
// retries (docs/edge.md §7.5), request coalescing with clients reading a fill while it
// grows, serving stored responses through the httpx/ranges helpers (docs/edge.md §7.4),
// and forwarding of the other methods with invalidation (docs/edge.md §7.6).
//
// Concurrency: a request's handler goroutine never writes the cache; the
// worker running its job does, at the origin's pace, and every client reads
// the growing fill on its own. No mutex is held across I/O; every wait is
// bounded by the client's context or the fill timeout.
package live
