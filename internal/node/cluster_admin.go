package node

import (
	"context"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/roles/storage"
	"github.com/ronhq/ron/roles/storage/storageapi"
	"github.com/ronhq/ron/store"
)

// PlacementTimeout bounds GET /api/v1/cluster/placement/{b3}: it asks the
// known storage members which of them hold the object.
const PlacementTimeout = 10 * time.Second

// PlacementReply is the body of GET /api/v1/cluster/placement/{b3}
// (docs/cluster.md §9): targets are the ids of top(RF, W, x), holders the
// members that answered that they hold x (this node included).
type PlacementReply struct {
	Targets []string `json:"targets"`
	Holders []string `json:"holders"`
}

// mountCluster adds the cluster routes of docs/cluster.md §9 (scope admin;
// loopback needs no token) and, when storage runs in cluster mode, the
// storage role's repair routes.
func (a *adminPlane) mountCluster(api *echo.Group) {
	api.GET("/cluster/members", a.handleMembers, a.requireAdmin)
	api.GET("/cluster/placement/:b3", a.handlePlacement, a.requireAdmin)
	if st := a.clusterStorage(); st != nil {
		st.MountRepairAdmin(api, a.requireAdmin)
	}
}

// clusterStorage is the storage role when it runs in cluster mode.
func (a *adminPlane) clusterStorage() *storage.Role {
	if a.node.cluster == nil {
		return nil
	}
	st, _ := a.node.roles[storageapi.RoleName].(*storage.Role)
	return st
}

// errClusterOff answers the cluster routes of a node in single-box mode.
func errClusterOff() error {
	return httpx.NewError(http.StatusNotFound, httpx.CodeNotFound, "cluster mode is off on this node (cluster.enabled = false)")
}

// handleMembers answers GET /api/v1/cluster/members: the membership as the
// status shows it ({node_id, zone, members}).
func (a *adminPlane) handleMembers(c echo.Context) error {
	st := a.node.cluster.status()
	if st == nil {
		return errClusterOff()
	}
	return c.JSON(http.StatusOK, st)
}

// handlePlacement answers GET /api/v1/cluster/placement/{b3} through the
// storage role: 404 when cluster mode is off or storage does not run here,
// 400 for a malformed id.
func (a *adminPlane) handlePlacement(c echo.Context) error {
	if a.node.cluster == nil {
		return errClusterOff()
	}
	st := a.clusterStorage()
	if st == nil {
		return httpx.NewError(http.StatusNotFound, httpx.CodeNotFound, "the storage role does not run on this node: ask a storage node's admin listener")
	}
	id, err := store.ParseID(c.Param("b3"))
	if err != nil {
		return httpx.NewError(http.StatusBadRequest, httpx.CodeBadRequest, "object id must be b3: followed by 64 lowercase hex digits")
	}
	ctx, cancel := context.WithTimeout(c.Request().Context(), PlacementTimeout)
	defer cancel()
	targets, holders, err := st.Placement(ctx, id)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, PlacementReply{Targets: nonNil(targets), Holders: nonNil(holders)})
}

// nonNil makes a nil slice encode as [].
func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
