package sites

import (
	"net/http"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"github.com/ronhq/ron/runtime"
	"github.com/ronhq/ron/store"
	"github.com/ronhq/ron/store/manifest"
)

// Defaults of docs/gateway.md §9, used for zero or negative Options fields.
const (
	DefaultNameCacheTTL       = 5 * time.Second
	DefaultNotFoundTTL        = 2 * time.Second
	DefaultNameCacheEntries   = 4096
	DefaultCacheControl       = "public, max-age=0, must-revalidate"
	DefaultManifestMaxBytes   = manifest.MaxBytes
	DefaultManifestCacheBytes = 32 << 20
)

// Options configures Sites. Zero or negative numbers and an empty
// CacheControl take the defaults.
type Options struct {
	Objects  Objects
	Resolver Resolver
	// NameCacheTTL is how long a resolved name is reused (name_cache_ttl).
	NameCacheTTL time.Duration
	// NotFoundTTL is how long a 404 from the resolver is reused; it never
	// exceeds NameCacheTTL. Other resolver errors are not cached.
	NotFoundTTL time.Duration
	// NameCacheEntries bounds the name cache (least recently used out).
	NameCacheEntries int
	// CacheControl is sent with entries, blob targets, listings, redirects
	// and their 304s (names_cache_control).
	CacheControl string
	// ManifestMaxBytes bounds a manifest read (manifest_max_bytes); it is
	// capped at manifest.MaxBytes, which manifest.Parse enforces anyway.
	ManifestMaxBytes int64
	// ManifestCacheBytes bounds the decoded-manifest LRU by weight
	// (manifest_cache_bytes); see manifestWeight.
	ManifestCacheBytes int64
	Metrics            *runtime.Metrics
	Log                zerolog.Logger
}

// settings is the live part of Options, swapped atomically.
type settings struct {
	nameTTL, notFoundTTL time.Duration
	cacheControl         string
	manifestMax          int64
}

func (o Options) withDefaults() Options {
	if o.NameCacheTTL <= 0 {
		o.NameCacheTTL = DefaultNameCacheTTL
	}
	if o.NotFoundTTL <= 0 {
		o.NotFoundTTL = DefaultNotFoundTTL
	}
	o.NotFoundTTL = min(o.NotFoundTTL, o.NameCacheTTL)
	if o.NameCacheEntries <= 0 {
		o.NameCacheEntries = DefaultNameCacheEntries
	}
	if o.CacheControl == "" {
		o.CacheControl = DefaultCacheControl
	}
	if o.ManifestMaxBytes <= 0 {
		o.ManifestMaxBytes = DefaultManifestMaxBytes
	}
	o.ManifestMaxBytes = min(o.ManifestMaxBytes, manifest.MaxBytes)
	if o.ManifestCacheBytes <= 0 {
		o.ManifestCacheBytes = DefaultManifestCacheBytes
	}
	return o
}

func (o Options) settings() *settings {
	return &settings{nameTTL: o.NameCacheTTL, notFoundTTL: o.NotFoundTTL,
		cacheControl: o.CacheControl, manifestMax: o.ManifestMaxBytes}
}

// Sites answers /n requests. Safe for concurrent use.
type Sites struct {
	objects    Objects
	resolver   Resolver
	set        atomic.Pointer[settings]
	names      *nameCache
	manifests  *weightedLRU[store.ID, *site]
	nameFlight flight[store.ID]
	siteFlight flight[*site]
	metrics    siteMetrics
	log        zerolog.Logger
}

// New returns Sites reading through opt.Objects and opt.Resolver (both
// required).
func New(opt Options) *Sites {
	opt = opt.withDefaults()
	s := &Sites{
		objects:   opt.Objects,
		resolver:  opt.Resolver,
		names:     newNameCache(opt.NameCacheEntries),
		manifests: newWeightedLRU[store.ID, *site](opt.ManifestCacheBytes),
		log:       opt.Log,
	}
	s.set.Store(opt.settings())
	s.metrics = newSiteMetrics(opt.Metrics, s.manifests)
	return s
}

// SetOptions applies the live fields of opt (NameCacheTTL, NotFoundTTL,
// NameCacheEntries, CacheControl, ManifestMaxBytes, ManifestCacheBytes; zero
// values take the defaults) to later requests; Objects, Resolver, Metrics
// and Log are ignored. Cached names keep the expiry they were stored with;
// a smaller cache evicts at once.
func (s *Sites) SetOptions(opt Options) {
	opt = opt.withDefaults()
	s.set.Store(opt.settings())
	s.names.resize(opt.NameCacheEntries)
	s.manifests.SetMax(opt.ManifestCacheBytes)
}

func (s *Sites) settings() *settings { return s.set.Load() }

// Serve answers GET or HEAD /n/{name}[/{path}] (docs/gateway.md §5).
// nameParam is the raw (escaped) name segment, possibly name@version; rest
// is the raw escaped text after "/n/{name}" ("" = no slash, "/" = trailing
// slash, "/a/b.html" ...); query is the raw query, kept on redirects.
// r's context bounds every upstream call (it should carry the forward
// deadline). Errors are *httpx.Error values the caller writes; nothing has
// been written then. Errors of Objects.Serve are returned as it returned them
// (it may have written the response).
func (s *Sites) Serve(w http.ResponseWriter, r *http.Request, nameParam, rest, query string) error {
	name, key, err := ParseName(nameParam)
	if err != nil {
		return err
	}
	p, err := ParsePath(rest)
	if err != nil {
		return err
	}
	ctx := r.Context()
	id, err := s.resolve(ctx, key)
	if err != nil {
		return err
	}
	st, err := s.target(ctx, id)
	if err != nil {
		return err
	}
	req := request{w: w, r: r, name: name, key: key, query: query, cc: s.settings().cacheControl}
	if st == nil {
		return s.serveBlob(req, id, p)
	}
	return s.serveSite(req, st, p)
}
