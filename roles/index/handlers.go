// Package index is the index role (docs/index.md): name pointers, provider
// records and resolve. handlers.go, names.go, providers.go and resolve.go hold
// the HTTP handlers of docs/index.md §3 (names), docs/index.md §4 (providers) and docs/index.md §5 (resolve) over an
// indexdb.DB, with an optional cache and PeerSource; role.go is the runnable
// role (listener, admission, workers, hot reload). Its contract (wire
// types, scopes, name syntax, Client and HTTPClient) is roles/index/indexapi;
// local.go holds LocalClient, the in-process indexapi.Client.
//
// Cluster mode (docs/cluster.md §6, Options.Cluster) adds ownership:
// roles/index/ownership picks each key's owners and primary and holds the
// per-member clients (the cluster PeerSource); roles/index/replication
// routes name writes through the primary, sends provider records to their
// owners and runs anti-entropy. role_cluster.go wires them into the role
// and cluster_handlers.go serves the cluster-mode writes and /replica/*.
package index

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/httpx/auth"
	"github.com/ronhq/ron/roles/index/cache"
	"github.com/ronhq/ron/roles/index/indexapi"
	"github.com/ronhq/ron/roles/index/indexdb"
	"github.com/ronhq/ron/roles/index/replication"
	"github.com/ronhq/ron/runtime"
)

// authedKey marks a request whose scope the route middleware checked.
const authedKey = "index.authed"

// Cache-Control values of docs/index.md §3 and §4.
const (
	ccNoCache        = "no-cache"
	ccNameVersion    = "public, max-age=60"
	ccProviders      = "public, max-age=10"
	ccProvidersEmpty = "public, max-age=2"
)

// Handlers answers the index's name, provider and resolve routes. Their
// knobs are Settings, given with Reconfigure (the zero Settings until then).
type Handlers struct {
	db   *indexdb.DB
	keys *auth.Keyring
	now  func() time.Time
	live atomic.Pointer[Settings]
	cl   *clusterMode // cluster mode; nil = static mode (set before Mount)

	// Metrics, when set, receives the handlers' docs/index.md §13 metrics (writes, auth
	// failures, resolve latency, deadline hits) with role="index". Set it
	// before Mount.
	Metrics *runtime.Metrics
}

// Settings are the handlers' hot-reloadable knobs.
type Settings struct {
	// Zone is this node's cluster.zone: the default region GET
	// /providers/{b3} sorts first. Empty means no preference.
	Zone string
	// DefaultTTL is provider_ttl_default, applied to announced records
	// without ttl_s; 0 means indexdb.DefaultTTL.
	DefaultTTL time.Duration
	// Cache, when set, is the docs/index.md §7 answer cache; local writes invalidate it.
	// Values are JSON-encoded answers.
	Cache *cache.Cache[[]byte]
	// Peers, when set, is asked on a local miss (never for ?local=1). Nil
	// means this node answers alone.
	Peers PeerSource
	// ResolveBudget is the whole-call lookup budget; 0 means
	// DefaultResolveBudget (1200 ms).
	ResolveBudget time.Duration
	// PrivateReads makes every read route require indexapi.ScopeRead
	// (public_reads = false).
	PrivateReads bool
}

// Reconfigure makes s the handlers' settings from the next request on.
// Requests already running keep the settings they started with.
func (h *Handlers) Reconfigure(s Settings) { h.live.Store(&s) }

// settings returns the settings in force.
func (h *Handlers) settings() Settings { return *h.live.Load() }

// NewHandlers returns handlers over db that check write tokens against keys
// at the time now returns (time.Now when nil). The same clock should drive
// db so that provider ages and expiry agree.
func NewHandlers(db *indexdb.DB, keys *auth.Keyring, now func() time.Time) *Handlers {
	if now == nil {
		now = time.Now
	}
	h := &Handlers{db: db, keys: keys, now: now}
	h.live.Store(&Settings{})
	return h
}

// Mount registers the routes of docs/index.md §3, §4 and §5 on e, plus in
// cluster mode POST /replica/names (docs/cluster.md §14) and
// /replica/providers (docs/cluster.md §6), both indexapi.ScopeReplicate. Every route first checks its capability (writes
// indexapi.ScopeWrite; reads indexapi.ScopeRead when reads are private), then runs mw in
// order (the role's admission: per-IP bucket and work queue), then the
// handler.
func (h *Handlers) Mount(e *echo.Echo, mw ...echo.MiddlewareFunc) {
	write := append([]echo.MiddlewareFunc{h.requireScope(indexapi.ScopeWrite)}, mw...)
	read := append([]echo.MiddlewareFunc{h.readScope}, mw...)
	e.PUT("/names/:name", h.putName, write...)
	e.GET("/names/:name", h.getName, read...)
	e.GET("/names/:name/versions", h.nameHistory, read...)
	e.DELETE("/names/:name", h.deleteName, write...)
	e.POST("/providers", h.announce, write...)
	e.GET("/providers/:b3", h.getProviders, read...)
	e.GET("/resolve/:key", h.getResolve, read...)
	if h.cl != nil {
		replicate := append([]echo.MiddlewareFunc{h.requireScope(indexapi.ScopeReplicate)}, mw...)
		e.POST(replication.PathReplicaNames, h.replicaNames, replicate...)
		e.POST(replication.PathReplicaProviders, h.replicaProviders, replicate...)
	}
}

// requireScope is route middleware checking the request's token for scope.
func (h *Handlers) requireScope(scope string) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			if err := h.authorize(c, scope); err != nil {
				return err
			}
			c.Set(authedKey, scope)
			return next(c)
		}
	}
}

// readScope is route middleware requiring indexapi.ScopeRead when reads are private.
func (h *Handlers) readScope(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if h.settings().PrivateReads {
			if err := h.authorize(c, indexapi.ScopeRead); err != nil {
				return err
			}
		}
		return next(c)
	}
}

// authorize checks the request's bearer token for scope; failures are
// *auth.AuthError, which unwraps to the 401/403 envelope, and are counted in
// ron_index_auth_failures_total{kind}. A request whose route middleware
// already checked scope passes at once.
func (h *Handlers) authorize(c echo.Context, scope string) error {
	if done, _ := c.Get(authedKey).(string); done == scope {
		return nil
	}
	_, err := auth.Check(h.keys, c.Request(), scope, h.now())
	if kind := auth.KindOf(err); kind != "" && h.Metrics != nil {
		h.Metrics.Counter("index_auth_failures_total", "role", roleName, "kind", kind).Inc()
	}
	return err
}

// dbError maps indexdb's typed errors onto the envelope (docs/index.md §3,
// §15): indexapi.ErrInvalid → 400 bad_request (indexapi.InvalidInput),
// ErrPrecondition → 412 with details.current_version (null when there is
// no live version), ErrDeleted and ErrPruned → 404 with details.reason,
// ErrNotFound → 404. Anything else passes through (500 internal unless it
// already is an envelope).
func dbError(err error) error {
	var pe *indexdb.PreconditionError
	switch {
	case errors.As(err, &pe):
		var cur any
		if pe.Current != 0 {
			cur = pe.Current
		}
		return httpx.NewError(http.StatusPreconditionFailed, httpx.CodePreconditionFailed, "precondition failed").
			WithDetails(map[string]any{"current_version": cur})
	case errors.Is(err, indexapi.ErrInvalid):
		return indexapi.InvalidInput(err)
	case errors.Is(err, indexdb.ErrDeleted):
		return httpx.NewError(http.StatusNotFound, httpx.CodeNotFound, "deleted").
			WithDetails(map[string]any{"reason": "deleted"})
	case errors.Is(err, indexdb.ErrPruned):
		return httpx.NewError(http.StatusNotFound, httpx.CodeNotFound, "version no longer kept").
			WithDetails(map[string]any{"reason": "pruned"})
	case errors.Is(err, indexdb.ErrNotFound):
		return httpx.NewError(http.StatusNotFound, httpx.CodeNotFound, "not found")
	}
	return err
}

// writeJSON writes v as a JSON 200-class answer with the given headers set.
func writeJSON(c echo.Context, status int, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return writeBody(c, status, append(b, '\n'))
}

// writeBody writes b, an encoded JSON answer, with the headers writeJSON
// sets.
func writeBody(c echo.Context, status int, b []byte) error {
	hd := c.Response().Header()
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("Content-Length", strconv.Itoa(len(b)))
	return c.Blob(status, echo.MIMEApplicationJSON, b)
}

// writeErrorCached writes err as the envelope like httpx.WriteError but
// keeps a Cache-Control header (the 404 of GET /providers/{b3} is cacheable
// for 2 s, docs/index.md §4).
func writeErrorCached(c echo.Context, err error, cacheControl string) error {
	he := *httpx.AsError(err)
	he.CorrID = httpx.CorrID(c)
	b, mErr := json.Marshal(httpx.Envelope{Error: &he})
	if mErr != nil {
		return mErr
	}
	hd := c.Response().Header()
	hd.Del("ETag")
	hd.Set("Cache-Control", cacheControl)
	return writeJSON(c, he.Status, json.RawMessage(b))
}
