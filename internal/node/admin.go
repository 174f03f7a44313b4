package node

import (
	"context"
	"net"
	"net/http"
	"runtime/debug"
	"time"

	"github.com/VictoriaMetrics/metrics"
	"github.com/labstack/echo/v4"

	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/httpx/auth"
	"github.com/ronhq/ron/internal/node/ui"
	"github.com/ronhq/ron/runtime"
	"github.com/ronhq/ron/runtime/cluster"
	"github.com/ronhq/ron/runtime/controlplane"
)

// adminStopTimeout bounds the admin listener's own shutdown (step 6).
const adminStopTimeout = time.Second

// adminPlane is the always-on admin listener (docs/architecture.md §7).
type adminPlane struct {
	node   *Node
	server *httpx.Server
}

func newAdminPlane(n *Node) *adminPlane {
	cfg := n.cfg.Load()
	a := &adminPlane{node: n, server: httpx.NewServer(httpx.ServerOptions{
		Role: "admin", Addr: cfg.Admin.Listen, Log: n.log.With().Str("role", "admin").Logger(),
		Metrics: n.metrics.Set(), Limits: cfg.Admin.Ingress.Limits(),
	})}
	e := a.server.Echo()
	mountOps(e, n)
	ui.Mount(e)
	api := e.Group("/api/v1")
	api.GET("/status", a.handleStatus)
	api.POST("/reload", a.handleReload, a.requireAdmin)
	api.POST("/shutdown", a.handleShutdown, a.requireAdmin)
	api.POST("/tokens", a.handleTokens, a.requireAdmin)
	a.mountCluster(api)
	a.mountControlPlane(api)
	return a
}

func (a *adminPlane) start() error { return a.server.Listen() }
func (a *adminPlane) addr() string { return a.server.Addr() }

// serve runs the listener; its result arrives on the returned channel.
func (a *adminPlane) serve() <-chan error {
	errc := make(chan error, 1)
	go func() { errc <- a.server.Serve() }() // admin-serve: ends at stop()
	return errc
}

func (a *adminPlane) stop() {
	ctx, cancel := context.WithTimeout(context.Background(), adminStopTimeout)
	defer cancel()
	a.server.Shutdown(ctx)
}

// mountOps adds /healthz, /readyz, /metrics and /version to a listener; every
// role listener and the admin plane answer them alike.
func mountOps(e *echo.Echo, n *Node) {
	e.GET("/healthz", func(c echo.Context) error {
		return c.JSON(http.StatusOK, map[string]string{"status": "ok"})
	})
	e.GET("/readyz", n.handleReadyz)
	e.GET("/metrics", n.handleMetrics)
	e.GET("/version", func(c echo.Context) error { return c.JSON(http.StatusOK, n.versionInfo()) })
}

// readyzReply is the /readyz body.
type readyzReply struct {
	Ready    bool              `json:"ready"`
	Missing  []string          `json:"missing,omitempty"`
	Degraded []string          `json:"degraded,omitempty"`
	Shedding *runtime.Shedding `json:"shedding,omitempty"`
}

func (n *Node) handleReadyz(c echo.Context) error {
	rd := n.readiness(c.Request().Context())
	reply := readyzReply{Ready: len(rd.Missing) == 0 && len(rd.Degraded) == 0, Missing: rd.Missing, Degraded: rd.Degraded, Shedding: rd.Shedding}
	if reply.Ready {
		return c.JSON(http.StatusOK, reply)
	}
	c.Response().Header().Set("Retry-After", "5")
	return c.JSON(http.StatusServiceUnavailable, reply)
}

// handleMetrics answers loopback callers freely and others with an admin token.
func (n *Node) handleMetrics(c echo.Context) error {
	if !isLoopback(c.Request()) {
		if _, err := auth.Check(n.keys, c.Request(), "admin", time.Now()); err != nil {
			return err
		}
	}
	c.Response().Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	c.Response().WriteHeader(http.StatusOK)
	n.metrics.Set().WritePrometheus(c.Response())
	metrics.WriteProcessMetrics(c.Response())
	return nil
}

// VersionInfo is the /version body.
type VersionInfo struct {
	Version string `json:"version"`
	Go      string `json:"go"`
	Commit  string `json:"commit,omitempty"`
}

func (n *Node) versionInfo() VersionInfo {
	v := VersionInfo{Version: n.version}
	if bi, ok := debug.ReadBuildInfo(); ok {
		v.Go = bi.GoVersion
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" {
				v.Commit = s.Value
			}
		}
	}
	return v
}

func isLoopback(r *http.Request) bool {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return false
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// requireAdmin lets loopback callers through and asks others for an admin token.
func (a *adminPlane) requireAdmin(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if isLoopback(c.Request()) {
			return next(c)
		}
		if _, err := auth.Check(a.node.keys, c.Request(), "admin", time.Now()); err != nil {
			return err
		}
		return next(c)
	}
}

// Status is the RON-STATUS-V1 document of /api/v1/status. Cluster is the
// membership (docs/cluster.md §9), present only in cluster mode.
type Status struct {
	Version string               `json:"version"`
	UptimeS int64                `json:"uptime_s"`
	Amnesia bool                 `json:"amnesia"`
	Ready   bool                 `json:"ready"`
	Roles   []runtime.RoleStatus `json:"roles"`
	Queues  []QueueStatus        `json:"queues"`
	Cluster *cluster.Status      `json:"cluster,omitempty"`
	// ControlPlane is this node's view of the control-plane group, present
	// only on a node that takes part (docs/cluster.md §14).
	ControlPlane *controlplane.Status `json:"control_plane,omitempty"`
}

// QueueStatus is one bounded queue in the status document.
type QueueStatus struct {
	Role     string  `json:"role"`
	Queue    string  `json:"queue"`
	Depth    float64 `json:"depth"`
	Capacity float64 `json:"capacity"`
	Dropped  float64 `json:"dropped"`
}

func (a *adminPlane) handleStatus(c echo.Context) error {
	n := a.node
	rd := n.readiness(c.Request().Context())
	return c.JSON(http.StatusOK, Status{
		Version: n.version,
		UptimeS: int64(time.Since(n.started).Seconds()),
		Amnesia: n.cfg.Load().Amnesia,
		Ready:   len(rd.Missing) == 0 && len(rd.Degraded) == 0,
		Roles:   n.manager.StatusContext(c.Request().Context()),
		Queues:  queueStatuses(n.metrics),
		Cluster: n.cluster.status(),

		ControlPlane: n.controlPlaneStatus(),
	})
}

func (a *adminPlane) handleReload(c echo.Context) error {
	v, err := a.node.Reload()
	if err != nil {
		return httpx.NewError(http.StatusBadRequest, httpx.CodeBadRequest, "%v", err)
	}
	return c.JSON(http.StatusOK, map[string]uint64{"config_version": v})
}

func (a *adminPlane) handleShutdown(c echo.Context) error {
	a.node.Shutdown("admin API")
	return c.JSON(http.StatusAccepted, map[string]string{"status": "shutting down"})
}

// tokenRequest is the body of POST /api/v1/tokens.
type tokenRequest struct {
	Scopes []string `json:"scopes"`
	Tenant string   `json:"tenant,omitempty"`
	TTL    string   `json:"ttl,omitempty"`
}

// TokenReply is the answer of POST /api/v1/tokens.
type TokenReply struct {
	Token   string    `json:"token"`
	ID      string    `json:"id"`
	Expires time.Time `json:"expires"`
}

func (a *adminPlane) handleTokens(c echo.Context) error {
	var req tokenRequest
	if err := httpx.ReadStrictJSON(c.Request(), &req); err != nil {
		return err
	}
	reply, err := MintToken(a.node.keys, req.Scopes, req.Tenant, req.TTL)
	if err != nil {
		return httpx.NewError(http.StatusBadRequest, httpx.CodeBadRequest, "%v", err)
	}
	return c.JSON(http.StatusOK, reply)
}
