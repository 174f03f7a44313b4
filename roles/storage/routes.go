package storage

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/httpx/auth"
	"github.com/ronhq/ron/store"
)

// routes mounts every storage endpoint of docs/storage.md §2.
func (r *Role) routes(e *echo.Echo) {
	e.POST("/o", r.handlePost)
	e.PUT("/o", r.handlePost)
	e.PUT("/o/:b3", r.handlePut)
	e.GET("/o/:b3", r.handleGet)
	e.HEAD("/o/:b3", r.handleGet)
	e.DELETE("/o/:b3", r.handleDelete)
	e.GET("/o/:b3/outboard", r.handleOutboard)
	e.HEAD("/o/:b3/outboard", r.handleOutboard)
	e.GET("/o/:b3/slice", r.handleSlice)
	e.GET("/o/:b3/chunks", r.handleChunksGone)
	e.HEAD("/o/:b3/chunks", r.handleChunksGone)
	e.GET("/inventory", r.handleInventory)
	e.POST("/inventory/has", r.handleHas)
}

// isStreamingRoute marks the routes whose bodies are streamed under the role's
// own caps and per-chunk deadlines.
func isStreamingRoute(method, route string) bool {
	switch route {
	case "/o", "/o/:b3", "/o/:b3/slice":
		return method != http.MethodDelete
	}
	return false
}

// authorize checks the request's token for scope and counts failures.
func (r *Role) authorize(c echo.Context, scope string) error {
	_, err := auth.Check(r.opt.Keys, c.Request(), scope, time.Now())
	if err != nil {
		if kind := auth.KindOf(err); kind != "" {
			r.metrics.authFailure(kind)
		}
		return err
	}
	return nil
}

// parseID parses the {b3} path parameter (400 on any other form).
func parseID(c echo.Context) (store.ID, error) {
	id, err := store.ParseID(c.Param("b3"))
	if err != nil {
		return id, httpx.NewError(http.StatusBadRequest, httpx.CodeBadRequest, "object id must be b3: followed by 64 lowercase hex digits")
	}
	return id, nil
}

// admitted runs fn inside a slot of pool for an HTTP request (see withSlot).
func (r *Role) admitted(c echo.Context, pool chan struct{}, fn func() error) error {
	return r.withSlot(c.Request().Context(), pool, httpx.RouteOf(c), fn)
}

// withSlot runs fn inside a slot of pool, answering 429 busy (counted under
// endpoint, a route template) when the work queue is full or no slot frees
// up within queue_timeout. The slot is released when fn returns.
func (r *Role) withSlot(ctx context.Context, pool chan struct{}, endpoint string, fn func() error) error {
	release, err := r.enter(ctx, pool, endpoint)
	if err != nil {
		return err
	}
	defer release()
	return fn()
}

// enter admits one request into pool; release must be called once done.
func (r *Role) enter(ctx context.Context, pool chan struct{}, endpoint string) (release func(), err error) {
	release, err = r.work.enter(ctx, pool)
	if errors.Is(err, errBusy) {
		r.metrics.busy(endpoint)
	}
	return release, err
}

// storeError maps engine errors to the envelope.
func storeError(err error) error {
	var mm *store.HashMismatchError
	switch {
	case errors.Is(err, store.ErrNotFound):
		return httpx.NewError(http.StatusNotFound, httpx.CodeNotFound, "object not found")
	case errors.Is(err, store.ErrQuarantined):
		return httpx.NewError(http.StatusNotFound, httpx.CodeNotFound, "object not found").
			WithDetails(map[string]any{"reason": "quarantined"})
	case errors.As(err, &mm):
		return httpx.NewError(http.StatusConflict, httpx.CodeHashMismatch, "body does not hash to the id in the path").
			WithDetails(map[string]any{"expected": mm.Expected.String(), "actual": mm.Actual.String()})
	case errors.Is(err, store.ErrTooLarge):
		return httpx.NewError(http.StatusRequestEntityTooLarge, httpx.CodePayloadTooLarge, "object larger than max_object_bytes")
	case errors.Is(err, store.ErrNoSpace):
		return httpx.NewError(http.StatusInsufficientStorage, httpx.CodeInsufficientStorage, "not enough free space")
	case errors.Is(err, store.ErrCorrupt):
		return httpx.NewError(http.StatusInternalServerError, httpx.CodeCorrupt, "object failed verification and was quarantined")
	case errors.Is(err, store.ErrBadMeta):
		return httpx.NewError(http.StatusBadRequest, httpx.CodeBadRequest, "%v", err)
	}
	return err
}
