// Package objects serves the edge's immutable objects, GET|HEAD /o/{b3}
// (docs/edge.md §3): hits from the edge cache (package edgecache), misses
// filled from storage and then from index providers as one job per id on
// the work queue (package fillq), every byte checked by the verified
// transfer (package store/verified: each 64 KiB group against the object id
// through its Bao outboard) before any client or the cache sees it, and
// every size stated on a miss before the last group verified (a 206 ending
// earlier, a 416) proven first by reading that group (once per object: the
// sizes proven are remembered).
//
// Requests for an id whose fill is running wait for it (within their own
// deadline) and read the entry as it grows; the fill goes on when its first
// client leaves; a failed fill fails every waiter with the same error and is
// not remembered. Objects above the store limit are streamed, verified, to
// the request that asked for them and never stored.
package objects

import (
	"context"
	"net/http"
	"sync"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/rs/zerolog"

	"github.com/ronhq/ron/httpx/client"
	"github.com/ronhq/ron/roles/edge/edgecache"
	"github.com/ronhq/ron/roles/edge/fillq"
	"github.com/ronhq/ron/runtime"
	"github.com/ronhq/ron/store"
	"github.com/ronhq/ron/store/verified"
)

// Source is the storage source of /o fills: the co-located storage role
// or storage_url. Providers are built internally from the base URLs
// Options.Providers returns. Every source is read the same way, the
// co-located one too: the outboard, then the body, each 64 KiB group
// verified against the id.
type Source struct {
	Name    string       // "storage" (co-located or storage_url)
	BaseURL string       // http(s) base without a trailing slash; in-process "http://storage.inproc"
	Client  *http.Client // in-process: an inproc transport over the storage role's handler
	// Prepare adds the principal (context) or Authorization; may be nil.
	Prepare func(*http.Request)
}

// Limits are the live settings of /o (docs/edge.md §10).
type Limits struct {
	FillMaxBytes int64         // larger objects are streamed, not stored
	MaxProviders int           // providers tried after storage (0 = none)
	FillTimeout  time.Duration // to the response headers, then per 64 KiB (≤ 0: 5 s)
	MaxTries     int           // attempts per source on timeout/503/504 (≤ 0: 3)
	MaxRanges    int           // Range parts before a 200 full (≤ 0: 128)
}

// Defaults of zero Limits fields.
const (
	DefaultFillTimeout = 5 * time.Second
	DefaultMaxTries    = 3
	DefaultMaxRanges   = 128
)

// Options configure Objects.
type Options struct {
	Cache *edgecache.Cache
	Queue *fillq.Queue
	// Storage is the first source; nil = none.
	Storage *Source
	// Providers lists provider base URLs holding id (the index); nil = no
	// index. At most Limits.MaxProviders of them are tried.
	Providers func(ctx context.Context, id store.ID) ([]string, error)
	// ProviderClient sends provider requests (nil: http.DefaultClient
	// without redirects); ProviderToken, when set and not "", gives the
	// bearer token they carry. Nothing else of the client's request is
	// forwarded.
	ProviderClient *http.Client
	ProviderToken  func() string
	// Limits are read per request; nil = the defaults.
	Limits  func() Limits
	Metrics *runtime.Metrics
	Log     zerolog.Logger
}

// Objects serves /o/{b3}. Safe for concurrent use.
type Objects struct {
	opt       Options
	met       *objMetrics
	providers *http.Client
	sizes     *verified.Sizes // object sizes proven by fills, streams and proofs

	mu      sync.Mutex
	flights map[store.ID]*flight // one running fill per id
}

// New returns the /o handler over opt's cache and queue. It does no I/O.
func New(opt Options) *Objects {
	pc := opt.ProviderClient
	if pc == nil {
		pc = &http.Client{CheckRedirect: client.NoRedirects}
	}
	return &Objects{opt: opt, met: newObjMetrics(opt.Metrics), providers: pc, sizes: verified.NewSizes(0),
		flights: map[store.ID]*flight{}}
}

// limits returns the live limits with defaults for zero fields.
func (o *Objects) limits() Limits {
	var l Limits
	if o.opt.Limits != nil {
		l = o.opt.Limits()
	}
	if l.FillTimeout <= 0 {
		l.FillTimeout = DefaultFillTimeout
	}
	if l.MaxTries <= 0 {
		l.MaxTries = DefaultMaxTries
	}
	if l.MaxRanges <= 0 {
		l.MaxRanges = DefaultMaxRanges
	}
	l.MaxProviders = max(l.MaxProviders, 0)
	return l
}

// Serve answers GET|HEAD /o/:b3 (docs/edge.md §3): 400 for a malformed id;
// 304 at once for an If-None-Match naming the object (412 for an If-Match
// that does not); a hit from the cache; a miss filled through the work queue
// (HEAD: asked of the sources, nothing filled). Errors are *httpx.Error
// envelopes; a failure after the headers went out aborts the connection
// (panic(http.ErrAbortHandler)), so no client takes a short body for a whole
// one.
func (o *Objects) Serve(c echo.Context) error {
	id, err := store.ParseID(c.Param("b3"))
	if err != nil {
		return errBadID()
	}
	r := c.Request()
	if st := early(r, id); st != 0 {
		return o.answerEarly(c, id, st)
	}
	if b, ctype, ok := o.opt.Cache.Object(id); ok {
		defer b.Close()
		o.met.hit.Inc()
		return o.respond(c, answer{id: id, size: b.Size(), ctype: ctype, cacheStatus: statusHit, read: blobRead(b)})
	}
	o.met.miss.Inc()
	if r.Method == http.MethodHead {
		return o.headMiss(c, id)
	}
	return o.getMiss(c, id)
}
