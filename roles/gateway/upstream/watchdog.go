package upstream

import (
	"context"
	"errors"
	"time"

	"github.com/ronhq/ron/httpx/client"
)

// Causes with which a watchdog cancels an attempt.
var (
	errDeadline       = errors.New("upstream: forward deadline passed")
	errAttemptTimeout = errors.New("upstream: attempt timed out")
)

// startWatchdog bounds an attempt until its response headers
// (client.StallWatch). Without a request body the limit is the attempt's
// own (min(deadline, start + ForwardTimeout)). With one, see Do: while the
// body is being sent the upstream must take each next piece within
// ForwardTimeout of the last (a read in progress is the client's time, not
// counted); once the body ended, the limit is the attempt's if the body
// ended before it, else body end + ForwardTimeout. It cancels the attempt
// with errDeadline once the forward deadline has passed, else with
// errAttemptTimeout.
func startWatchdog(start, limit, deadline time.Time, fwd time.Duration, body bool, cancel context.CancelCauseFunc) *client.StallWatch {
	return client.WatchStall(start, limit, fwd, body, func(now time.Time) {
		cause := errAttemptTimeout
		if !now.Before(deadline) {
			cause = errDeadline
		}
		cancel(cause)
	})
}
