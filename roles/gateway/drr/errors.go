package drr

import (
	"net/http"

	"github.com/ronhq/ron/httpx"
)

// Errors Acquire answers with (docs/gateway.md §3.5, §8). Each carries
// Retry-After 1 and details.limit naming what fired.
var (
	// ErrTenantQueue: the tenant's queue was full on arrival.
	ErrTenantQueue = httpx.NewError(http.StatusTooManyRequests, httpx.CodeRateLimited, "tenant queue full").
			WithDetails(map[string]any{"limit": "tenant_queue"})
	// ErrDropped: the request was the oldest waiting one when the total queue
	// was full and another arrived.
	ErrDropped = httpx.NewError(http.StatusServiceUnavailable, httpx.CodeBusy, "dropped from a full queue").
			WithDetails(map[string]any{"limit": "queue_full"})
	// ErrQueueWait: the request waited max_queue_wait or its deadline passed.
	ErrQueueWait = httpx.NewError(http.StatusServiceUnavailable, httpx.CodeBusy, "waited too long for a slot").
			WithDetails(map[string]any{"limit": "queue_wait"})
	// ErrDraining: the scheduler has stopped (shutdown).
	ErrDraining = httpx.NewError(http.StatusServiceUnavailable, httpx.CodeDraining, "scheduler stopped")
)
