package repairlink

import (
	"bytes"
	"errors"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/rs/zerolog"

	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/roles/storage/repair"
	"github.com/ronhq/ron/roles/storage/storageapi"
	"github.com/ronhq/ron/runtime"
	"github.com/ronhq/ron/store"
)

// parsePaceRequest decodes a pace body (storageapi.RepairPaceRequest)
// strictly (400 malformed for bad JSON, unknown fields, non-integers or
// trailing data) and checks its values (400 bad_request: both fields
// required, bytes_per_s ≥ 0, duration_s 1–86400).
func parsePaceRequest(body []byte) (bytesPerS int64, d time.Duration, err error) {
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

// parseObjectRequest decodes {"b3":"b3:…"} (storageapi.RepairObjectRequest)
// strictly.
func parseObjectRequest(body []byte) (store.ID, error) {
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

// parseRunRequest accepts an empty body or an empty JSON object.
func parseRunRequest(body []byte) error {
	if len(bytes.TrimSpace(body)) == 0 {
		return nil
	}
	return httpx.DecodeStrictJSON(body, &struct{}{})
}

func badRequest(msg string) error {
	return httpx.NewError(http.StatusBadRequest, httpx.CodeBadRequest, "%s", msg)
}

// MountAdmin registers the repair routes of docs/cluster.md §9 on the
// admin listener's /api/v1 group, behind mw (the admin check):
// POST /repair/pace, POST /repair/run (202) and POST /repair/object (202).
// A request's body is checked first; then find returns the running engine
// or the answer explaining its absence (cluster mode off, not started).
// log records pace boosts.
func MountAdmin(api *echo.Group, mw echo.MiddlewareFunc, find func() (*repair.Repairer, error), log zerolog.Logger) {
	a := admin{find: find, log: log}
	api.POST("/repair/pace", a.handlePace, mw)
	api.POST("/repair/run", a.handleRun, mw)
	api.POST("/repair/object", a.handleObject, mw)
}

// admin serves the repair routes.
type admin struct {
	find func() (*repair.Repairer, error)
	log  zerolog.Logger
}

func (a admin) handlePace(c echo.Context) error {
	body, err := httpx.ReadBody(c.Request())
	if err != nil {
		return err
	}
	n, d, err := parsePaceRequest(body)
	if err != nil {
		return err
	}
	rp, err := a.find()
	if err != nil {
		return err
	}
	until, err := rp.Boost(n, d)
	if err != nil {
		return badRequest(err.Error())
	}
	a.log.Info().Int64("bytes_per_s", n).Time("until", until).Msg("repair pace boosted")
	return c.JSON(http.StatusOK, storageapi.RepairPaceReply{PaceBytesPerS: n, BoostUntil: until.UTC()})
}

func (a admin) handleRun(c echo.Context) error {
	body, err := httpx.ReadBody(c.Request())
	if err != nil {
		return err
	}
	if err := parseRunRequest(body); err != nil {
		return err
	}
	rp, err := a.find()
	if err != nil {
		return err
	}
	rp.RunPass()
	return c.JSON(http.StatusAccepted, map[string]string{"status": "pass requested"})
}

func (a admin) handleObject(c echo.Context) error {
	body, err := httpx.ReadBody(c.Request())
	if err != nil {
		return err
	}
	id, err := parseObjectRequest(body)
	if err != nil {
		return err
	}
	rp, err := a.find()
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
