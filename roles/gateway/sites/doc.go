// Package sites serves named blobs and content-addressed static sites at
// /n/{name}[/{path...}] (docs/gateway.md §5).
//
// A request is validated first (name syntax of docs/index.md §3 through
// indexapi.ParseName / ParseNameVersion, then the path rules of docs/gateway.md §5), so bad
// input costs no upstream call. The name (or name@version) is resolved
// through a Resolver with a small TTL cache (positive answers NameCacheTTL,
// 404s NotFoundTTL). The target is a manifest when its stored Content-Type
// has the media type manifest.MediaType (parameters ignored), otherwise a
// blob. Manifests are read whole (at most ManifestMaxBytes), checked against
// their id, decoded strictly with manifest.Parse and kept in an LRU weighted
// by size; a target found in that cache is known to be a manifest, so no
// Objects call at all is made for it (a matching If-None-Match on an entry
// is thus answered 304 without touching storage).
//
// Bytes are never read here except a manifest's: entries and blob targets
// are served by Objects.Serve, which behaves like GET /o/{b3} (Range,
// conditionals), with Content-Type and Cache-Control replaced.
//
// Concurrency: Sites holds no goroutines. Concurrent misses on one name or
// one manifest share a single upstream call (singleflight in the calling
// goroutine; a follower whose leader was cancelled retries with its own
// context). Caches are guarded by short mutexes never held across I/O.
package sites
