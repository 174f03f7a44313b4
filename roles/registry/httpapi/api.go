package httpapi

import (
	"net/http"
	"time"

	lru "github.com/hashicorp/golang-lru/v2"
	"github.com/labstack/echo/v4"
	"github.com/rs/zerolog"

	"github.com/ronhq/ron/httpx/auth"
	"github.com/ronhq/ron/roles/registry/committer"
	"github.com/ronhq/ron/roles/registry/registryapi"
	"github.com/ronhq/ron/roles/registry/registryapi/descriptor"
	"github.com/ronhq/ron/roles/registry/segment"
	"github.com/ronhq/ron/roles/registry/tiles"
	"github.com/ronhq/ron/runtime"
)

// Options configure New. Committer, Tree and Log are required; the rest
// have defaults.
type Options struct {
	// Committer is the single writer whose snapshots the reads serve and to
	// which the writes are handed.
	Committer *committer.Committer
	// Tree serves the checkpoint, the hash tiles and the log key.
	Tree *tiles.Tree
	// Log serves artifacts by version, entry bundles and stream replays.
	Log *segment.Log
	// Keys checks capability tokens.
	Keys *auth.Keyring
	// Settings returns the live settings, read per request; nil means
	// DefaultSettings. Zero durations and counts take their defaults.
	Settings func() Settings
	// Status returns the body of GET /registry/status; nil answers 503.
	Status func() registryapi.Status
	// MinIndex returns the durable min_index; nil means Log.MinIndex.
	MinIndex func() uint64
	// Now is the clock for tokens and time stamp checks; nil = time.Now.
	Now func() time.Time
	// Metrics receives the SSE and rejection metrics; nil = a private set.
	Metrics *runtime.Metrics
	// Forward, when set, runs first on the three write routes: in cluster
	// mode it relays a write to the control-plane leader's registry when
	// this member does not lead (docs/cluster.md §14), else calls next.
	Forward echo.MiddlewareFunc
	// Logger receives audit lines of handler-side rejections.
	Logger zerolog.Logger
}

// Settings are the API's hot-reloadable knobs (docs/registry.md §7).
type Settings struct {
	// PublicReads false makes every read route need registry:read.
	PublicReads bool
	// ReadOnly refuses writes with 503 not_ready (maintenance).
	ReadOnly bool
	// Limits bound payloads and time stamps (max_payload_bytes, clock_skew).
	Limits descriptor.Limits
	// StreamHeartbeat is the idle time before ": hb" (default 5 s).
	StreamHeartbeat time.Duration
	// StreamMaxClients bounds concurrent streams (default 1024).
	StreamMaxClients int
	// StreamMaxLag is how many versions a stream may fall behind HEAD
	// before it skips to HEAD (default 1024).
	StreamMaxLag int
	// CommitTimeout bounds a write's wait for the committer (default 2 s).
	CommitTimeout time.Duration
}

// DefaultSettings returns the docs/registry.md §7 defaults: public reads, writable.
func DefaultSettings() Settings {
	return Settings{PublicReads: true, Limits: descriptor.DefaultLimits(), StreamHeartbeat: 5 * time.Second,
		StreamMaxClients: 1024, StreamMaxLag: 1024, CommitTimeout: 2 * time.Second}
}

// withDefaults fills zero durations and counts from DefaultSettings.
func (s Settings) withDefaults() Settings {
	d := DefaultSettings()
	if s.Limits.MaxPayloadBytes <= 0 {
		s.Limits.MaxPayloadBytes = d.Limits.MaxPayloadBytes
	}
	if s.StreamHeartbeat <= 0 {
		s.StreamHeartbeat = d.StreamHeartbeat
	}
	if s.StreamMaxClients <= 0 {
		s.StreamMaxClients = d.StreamMaxClients
	}
	if s.StreamMaxLag <= 0 {
		s.StreamMaxLag = d.StreamMaxLag
	}
	if s.CommitTimeout <= 0 {
		s.CommitTimeout = d.CommitTimeout
	}
	return s
}

// API answers the registry's docs/registry.md §2 routes. It is safe for concurrent use.
type API struct {
	opt     Options
	c       *committer.Committer
	hub     *Hub
	bundles *lru.Cache[uint64, *bundle]
	m       *meters
}

// New returns the API over opt. It does no I/O and starts no goroutine.
func New(opt Options) *API {
	if opt.Now == nil {
		opt.Now = time.Now
	}
	if opt.Metrics == nil {
		opt.Metrics = runtime.NewMetrics(nil)
	}
	if opt.MinIndex == nil {
		opt.MinIndex = opt.Log.MinIndex
	}
	opt.Logger = opt.Logger.With().Str("role", registryapi.RoleName).Logger()
	bundles, _ := lru.New[uint64, *bundle](bundleCacheSize) // size > 0: never fails
	a := &API{opt: opt, c: opt.Committer, bundles: bundles, m: newMeters(opt.Metrics)}
	a.hub = newHub(a)
	return a
}

// settings returns the live settings with defaults filled in.
func (a *API) settings() Settings {
	if a.opt.Settings == nil {
		return DefaultSettings()
	}
	return a.opt.Settings().withDefaults()
}

// Hub returns the SSE hub; the role calls its Notify from the committer's
// OnCommit and its Close at shutdown.
func (a *API) Hub() *Hub { return a.hub }

// Streaming reports whether a route is a long-lived stream: the role passes
// it as httpx.ServerOptions.Streaming so that GET /registry/stream escapes
// the handler deadline (the stream sets per-event write deadlines itself).
func Streaming(method, route string) bool {
	return route == registryapi.RouteStream && (method == http.MethodGet || method == http.MethodHead)
}

// Mount registers every docs/registry.md §2 route on e; each GET route also answers HEAD.
// Reads check registry:read first when public_reads is false; writes check
// their scope (401 unauthorized, 403 forbidden) before anything else.
func (a *API) Mount(e *echo.Echo) {
	get := []string{http.MethodGet, http.MethodHead}
	e.Match(get, registryapi.RouteHead, a.getHead, a.readScope)
	e.Match(get, registryapi.RouteStatus, a.getStatus, a.readScope)
	e.Match(get, registryapi.RouteStream, a.getStream, a.readScope)
	e.Match(get, registryapi.RouteProposals, a.listProposals, a.readScope)
	fwd := a.opt.Forward
	if fwd == nil {
		fwd = func(next echo.HandlerFunc) echo.HandlerFunc { return next }
	}
	e.POST(registryapi.RouteProposals, a.postProposal, fwd, a.requireScope(registryapi.ScopePropose))
	e.Match(get, registryapi.RouteProposal, a.getProposal, a.readScope)
	e.POST(registryapi.RouteApprove, a.postApproval, fwd, a.requireScope(registryapi.ScopeApprove))
	e.POST(registryapi.RouteCommit, a.postCommit, fwd, a.requireScope(registryapi.ScopeCommit))
	e.Match(get, registryapi.RouteCheckpoint, a.getCheckpoint, a.readScope)
	e.Match(get, registryapi.RouteKey, a.getKey, a.readScope)
	e.Match(get, registryapi.RouteTile, a.getTile, a.readScope)
	e.Match(get, registryapi.RouteVersion, a.getVersion, a.readScope)
}
