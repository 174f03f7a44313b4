package live

import (
	"errors"
	"net/http"
	"net/netip"
	"sync/atomic"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/rs/zerolog"

	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/roles/edge/edgecache"
	"github.com/ronhq/ron/roles/edge/fillq"
	"github.com/ronhq/ron/roles/edge/httpcache"
	"github.com/ronhq/ron/runtime"
)

// Defaults applied to Settings values that are ≤ 0 (docs/edge.md §10).
const (
	DefaultFillMaxBytes = 64 << 20
	DefaultFillTimeout  = 5 * time.Second
	DefaultMaxTries     = 3
	DefaultMaxRanges    = 128
	DefaultBodyMaxBytes = 1 << 20
)

// Settings are the live-changeable /assets settings (docs/edge.md §10).
// Values ≤ 0 of FillMaxBytes, FillTimeout, MaxRanges, BodyMaxBytes,
// DecodeMaxBytes and DecodeMaxRatio take their defaults;
// HeuristicMaxTTL and StaleIfUnreachable are used as given.
type Settings struct {
	Origins            []Origin
	FillMaxBytes       int64         // larger bodies are relayed, not stored
	FillTimeout        time.Duration // to the response headers, then per 64 KiB of body
	HeuristicMaxTTL    time.Duration // cap of the 10 % heuristic
	StaleIfUnreachable time.Duration // stale window when the origin cannot be reached
	MaxRanges          int           // parts of a multipart/byteranges answer
	BodyMaxBytes       int64         // request bodies forwarded to origins (docs/edge.md §7.6)
	DecodeMaxBytes     int64         // decode guard on those bodies: absolute cap
	DecodeMaxRatio     float64       // decode guard: ratio cap
	// TrustedProxies are the peers (besides loopback and in-process
	// callers) whose X-Forwarded-For is kept and appended to; from others
	// it is replaced by the peer's address.
	TrustedProxies []netip.Prefix
}

// Options are the fixed dependencies of a Live.
type Options struct {
	Cache *edgecache.Cache
	Queue *fillq.Queue
	// Client reaches the origins; nil builds the docs/edge.md §7.1 client (system TLS
	// roots, no proxy, transparent compression off). A given client must
	// have compression off (Transport.DisableCompression); redirects are
	// never followed whatever its CheckRedirect.
	Client  *http.Client
	Metrics *runtime.Metrics
	Log     zerolog.Logger
	Now     func() time.Time // nil = time.Now
}

// Live serves /assets (docs/edge.md §7). Safe for concurrent use.
type Live struct {
	cache   *edgecache.Cache
	queue   *fillq.Queue
	client  *http.Client
	log     zerolog.Logger
	now     func() time.Time
	met     *liveMetrics
	set     atomic.Pointer[snapshot]
	flights flights
}

// snapshot is one Settings in force, with its origins by name.
type snapshot struct {
	s       Settings
	origins map[string]Origin
}

// New builds the live fill with the settings s.
func New(opt Options, s Settings) *Live {
	m := opt.Metrics
	if m == nil {
		m = runtime.NewMetrics(nil)
	}
	l := &Live{cache: opt.Cache, queue: opt.Queue, client: originClient(opt.Client), log: opt.Log,
		now: opt.Now, met: newLiveMetrics(m), flights: flights{m: map[string]*flight{}}}
	if l.now == nil {
		l.now = time.Now
	}
	l.Apply(s)
	return l
}

// Apply replaces the settings; requests already running keep the ones
// they started with.
func (l *Live) Apply(s Settings) {
	s = withDefaults(s)
	sn := &snapshot{s: s, origins: make(map[string]Origin, len(s.Origins))}
	for _, o := range s.Origins {
		if o.MaxTries <= 0 {
			o.MaxTries = DefaultMaxTries
		}
		sn.origins[o.Name] = o
	}
	l.set.Store(sn)
}

// withDefaults fills the zero values of s.
func withDefaults(s Settings) Settings {
	if s.FillMaxBytes <= 0 {
		s.FillMaxBytes = DefaultFillMaxBytes
	}
	if s.FillTimeout <= 0 {
		s.FillTimeout = DefaultFillTimeout
	}
	if s.MaxRanges <= 0 {
		s.MaxRanges = DefaultMaxRanges
	}
	if s.BodyMaxBytes <= 0 {
		s.BodyMaxBytes = DefaultBodyMaxBytes
	}
	if s.DecodeMaxBytes <= 0 {
		s.DecodeMaxBytes = httpx.MaxDecodedBytes
	}
	if s.DecodeMaxRatio <= 0 {
		s.DecodeMaxRatio = httpx.MaxDecodeRatio
	}
	return s
}

// Close closes the idle origin connections. Requests still running go on.
func (l *Live) Close() { l.client.CloseIdleConnections() }

// Serve answers every method on /assets/{origin}/{path...}: GET and HEAD
// through the cache (docs/edge.md §7.2–7.5), the others forwarded when the origin
// allows it (docs/edge.md §7.6). Errors are httpx envelopes, with details.reason where
// a ron_edge_rejects_total reason applies.
func (l *Live) Serve(c echo.Context) error {
	sn := l.set.Load()
	t, err := parseTarget(c.Request(), sn.origins)
	if err != nil {
		var he *httpx.Error
		if errors.As(err, &he) && he.Details["reason"] == reasonNotAllowed {
			l.met.reject(reasonNotAllowed)
		}
		return err
	}
	switch c.Request().Method {
	case http.MethodGet, http.MethodHead:
		k := l.newCall(c, sn, t)
		return k.statusOnError(l.serveSafe(k))
	}
	return l.forwardUnsafe(c, sn, t)
}

// statusOnError gives an error answer its Cache-Status (RFC 9211):
// `ron-edge; fwd=<reason>; detail=<code>`, unless one was set already.
func (k *call) statusOnError(err error) error {
	var he *httpx.Error
	h := k.c.Response().Header()
	if err == nil || k.c.Response().Committed || h.Get("Cache-Status") != "" || !errors.As(err, &he) {
		return err
	}
	fwd := k.fwd
	if fwd == "" {
		fwd = httpcache.FwdMiss
	}
	h.Set("Cache-Status", httpcache.CacheName+"; fwd="+fwd+"; detail="+he.Code)
	return err
}

// policy is the httpcache policy for origin o with the current store limit.
func (sn *snapshot) policy(o Origin, storeLimit int64) httpcache.Policy {
	return httpcache.Policy{MaxBodyBytes: storeLimit, DefaultTTL: o.DefaultTTL, HeuristicMaxTTL: sn.s.HeuristicMaxTTL,
		StaleIfUnreachable: sn.s.StaleIfUnreachable, IgnoreRequestDirectives: !o.HonorRequestCacheControl}
}
