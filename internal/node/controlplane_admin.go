package node

import (
	"context"
	"errors"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/runtime/consensus"
	"github.com/ronhq/ron/runtime/controlplane"
)

// serverRequest is the body of POST /api/v1/cluster/servers: a server an
// operator adds (or updates) by hand.
type serverRequest struct {
	ID    string `json:"id"`
	Addr  string `json:"addr"`
	Voter bool   `json:"voter"`
}

// mountControlPlane adds the control-plane routes of docs/cluster.md §14
// (scope admin): the servers as this node sees them, and adding or
// removing one on the leader.
func (a *adminPlane) mountControlPlane(api *echo.Group) {
	api.GET("/cluster/servers", a.handleServers, a.requireAdmin)
	api.POST("/cluster/servers", a.handleAddServer, a.requireAdmin)
	api.DELETE("/cluster/servers/:id", a.handleRemoveServer, a.requireAdmin)
}

// member is the node's control-plane member, or the 404 of a node that
// takes no part.
func (a *adminPlane) member() (*controlplane.Member, error) {
	if cp := a.node.cp; cp != nil && cp.member != nil {
		return cp.member, nil
	}
	return nil, httpx.NewError(http.StatusNotFound, httpx.CodeNotFound,
		"this node takes no part in the control plane (cluster mode with the index role, or cluster.server = true)")
}

// handleServers answers GET /api/v1/cluster/servers.
func (a *adminPlane) handleServers(c echo.Context) error {
	m, err := a.member()
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, m.Status())
}

// handleAddServer answers POST /api/v1/cluster/servers {id, addr, voter}.
func (a *adminPlane) handleAddServer(c echo.Context) error {
	m, err := a.member()
	if err != nil {
		return err
	}
	var in serverRequest
	if err := httpx.ReadStrictJSON(c.Request(), &in); err != nil {
		return err
	}
	if in.ID == "" || in.Addr == "" {
		return httpx.NewError(http.StatusBadRequest, httpx.CodeBadRequest, "id and addr are required")
	}
	if err := m.AddServer(c.Request().Context(), consensus.Server{ID: in.ID, Addr: in.Addr, Voter: in.Voter}); err != nil {
		return serverChangeError(err)
	}
	return c.JSON(http.StatusOK, m.Status())
}

// handleRemoveServer answers DELETE /api/v1/cluster/servers/{id}.
func (a *adminPlane) handleRemoveServer(c echo.Context) error {
	m, err := a.member()
	if err != nil {
		return err
	}
	if err := m.RemoveServer(c.Request().Context(), c.Param("id")); err != nil {
		return serverChangeError(err)
	}
	return c.JSON(http.StatusOK, m.Status())
}

// serverChangeError maps a refused configuration change: asked of a
// follower, 409 naming the leader; without a quorum, 503 no_quorum.
func serverChangeError(err error) error {
	switch {
	case errors.Is(err, controlplane.ErrNotLeader):
		return httpx.NewError(http.StatusConflict, httpx.CodeConflict, "%v: run the command against the leader's admin listener", err)
	case errors.Is(err, consensus.ErrNoQuorum), errors.Is(err, consensus.ErrUnknownOutcome), errors.Is(err, context.DeadlineExceeded):
		return httpx.NewError(http.StatusServiceUnavailable, httpx.CodeNoQuorum, "%v", err)
	}
	return httpx.NewError(http.StatusBadRequest, httpx.CodeBadRequest, "%v", err)
}

// controlPlaneStatus is the "control_plane" object of /api/v1/status; nil
// when the node takes no part.
func (n *Node) controlPlaneStatus() *controlplane.Status {
	if n.cp == nil || n.cp.member == nil {
		return nil
	}
	st := n.cp.member.Status()
	return &st
}

// ControlPlane is the node's view of the control plane; ok is false on a
// node that takes no part (or before the part started).
func (n *Node) ControlPlane() (st controlplane.Status, ok bool) {
	if s := n.controlPlaneStatus(); s != nil {
		return *s, true
	}
	return controlplane.Status{}, false
}
