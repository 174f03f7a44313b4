package storage

import (
	"bytes"
	"errors"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/roles/storage/repair"
	"github.com/ronhq/ron/roles/storage/storageapi"
	"github.com/ronhq/ron/runtime"
	"github.com/ronhq/ron/store"
)

// ParsePaceRequest decodes a pace body (storageapi.RepairPaceRequest)
// strictly (400 malformed for bad JSON, unknown fields, non-integers or
// trailing data) and checks its values (400 bad_request: both fields
// required, bytes_per_s ≥ 0, duration_s 1–86400).
func ParsePaceRequest(body []byte) (bytesPerS int64, d time.Duration, err error) {
	var req storageapi.RepairPaceRequest
	if err := httpx.DecodeStrictJSON(body, &req); err != nil {
		return 0, 0, err
	}
	switch {
	case req.BytesPerS == nil || req.DurationS == nil:
		return 0, 0, badRequest("bytes_per_s and duration_s are required")
	case *req.BytesPerS < 0:
		return 0, 0, badRequest("bytes_per_s must be 0 (pause) or more")
	case *req.DurationS < 1 || *req.DurationS > int64(storageapi.MaxRepairBoost/time.Second):
		return 0, 0, badRequest("duration_s must be from 1 to 86400")
	}
	return *req.BytesPerS, time.Duration(*req.DurationS) * time.Second, nil
}

// ParseObjectRequest decodes {"b3":"b3:…"} (storageapi.RepairObjectRequest)
// strictly.
func ParseObjectRequest(body []byte) (store.ID, error) {
	var req storageapi.RepairObjectRequest
	if err := httpx.DecodeStrictJSON(body, &req); err != nil {
		return store.ID{}, err
	}
	id, err := store.ParseID(req.B3)
	if err != nil {
		return id, badRequest("b3 must be b3: followed by 64 lowercase hex digits")
	}
	return id, nil
}

// ParseRunRequest accepts an empty body or an empty JSON object.
func ParseRunRequest(body []byte) error {
	if len(bytes.TrimSpace(body)) == 0 {
		return nil
	}
	return httpx.DecodeStrictJSON(body, &struct{}{})
}

func badRequest(msg string) error {
	return httpx.NewError(http.StatusBadRequest, httpx.CodeBadRequest, "%s", msg)
}

// MountRepairAdmin registers the repair routes of docs/cluster.md §9 on the
// admin listener's /api/v1 group, behind mw (the admin check):
// POST /repair/pace, POST /repair/run (202) and POST /repair/object (202).
// They answer 404 with cluster mode off and 503 not_ready before Start.
func (r *Role) MountRepairAdmin(api *echo.Group, mw echo.MiddlewareFunc) {
	api.POST("/repair/pace", r.handleRepairPace, mw)
	api.POST("/repair/run", r.handleRepairRun, mw)
	api.POST("/repair/object", r.handleRepairObject, mw)
}

// repairer returns the running engine or the answer explaining its absence.
func (r *Role) repairer() (*repair.Repairer, error) {
	rp := r.repair.Load()
	switch {
	case r.opt.Cluster == nil:
		return nil, httpx.NewError(http.StatusNotFound, httpx.CodeNotFound, "repair runs only in cluster mode")
	case rp == nil:
		return nil, errNotStarted()
	}
	return rp, nil
}

// errNotStarted answers a cluster admin call before the role started.
func errNotStarted() error {
	return httpx.NewError(http.StatusServiceUnavailable, httpx.CodeNotReady, "storage has not started").WithRetryAfter(5)
}

func (r *Role) handleRepairPace(c echo.Context) error {
	body, err := httpx.ReadBody(c.Request())
	if err != nil {
		return err
	}
	n, d, err := ParsePaceRequest(body)
	if err != nil {
		return err
	}
	rp, err := r.repairer()
	if err != nil {
		return err
	}
	until, err := rp.Boost(n, d)
	if err != nil {
		return badRequest(err.Error())
	}
	r.Log.Info().Int64("bytes_per_s", n).Time("until", until).Msg("repair pace boosted")
	return c.JSON(http.StatusOK, storageapi.RepairPaceReply{PaceBytesPerS: n, BoostUntil: until.UTC()})
}

func (r *Role) handleRepairRun(c echo.Context) error {
	body, err := httpx.ReadBody(c.Request())
	if err != nil {
		return err
	}
	if err := ParseRunRequest(body); err != nil {
		return err
	}
	rp, err := r.repairer()
	if err != nil {
		return err
	}
	rp.RunPass()
	return c.JSON(http.StatusAccepted, map[string]string{"status": "pass requested"})
}

func (r *Role) handleRepairObject(c echo.Context) error {
	body, err := httpx.ReadBody(c.Request())
	if err != nil {
		return err
	}
	id, err := ParseObjectRequest(body)
	if err != nil {
		return err
	}
	rp, err := r.repairer()
	if err != nil {
		return err
	}
	switch err := rp.CheckObject(id); {
	case errors.Is(err, repair.ErrBusy):
		return httpx.NewError(http.StatusTooManyRequests, httpx.CodeBusy, "the urgent repair lane is full").WithRetryAfter(1)
	case errors.Is(err, runtime.ErrClosed):
		return httpx.NewError(http.StatusServiceUnavailable, httpx.CodeDraining, "storage is stopping").WithRetryAfter(5)
	case err != nil:
		return err
	}
	return c.JSON(http.StatusAccepted, map[string]string{"status": "check queued", "b3": id.String()})
}
