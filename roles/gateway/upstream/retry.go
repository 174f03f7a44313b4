package upstream

import (
	"math/rand/v2"
	"net/http"
	"time"

	"github.com/ronhq/ron/httpx/client"
)

// randFloat is the default jitter source.
func randFloat() float64 { return rand.Float64() }

// backoff is the pause before attempt n+1 (n ≥ 1): client.RetryPause
// after n−1 retries, min(RetryCap, U[RetryBase, 2·RetryBase)·2^(n−1)).
func (l *Link) backoff(n int, pol Policy) time.Duration {
	return client.RetryPause{Base: pol.RetryBase, Cap: pol.RetryCap}.Pause(n-1, l.rnd())
}

// retryAfter reads an upstream Retry-After (client.RetryAfterHeader); 0
// when there is no response.
func retryAfter(resp *http.Response, now time.Time) time.Duration {
	if resp == nil {
		return 0
	}
	return client.RetryAfterHeader(resp.Header, now)
}
