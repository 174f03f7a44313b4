package upstream

import (
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// randFloat is the default jitter source.
func randFloat() float64 { return rand.Float64() }

// backoff is the pause before attempt n+1 (n ≥ 1):
// min(RetryCap, U[RetryBase, 2·RetryBase)·2^(n−1)).
func (l *Link) backoff(n int, pol Policy) time.Duration {
	d := pol.RetryBase + time.Duration(l.rnd()*float64(pol.RetryBase))
	for i := 1; i < n && d < pol.RetryCap; i++ {
		d *= 2
	}
	return min(d, pol.RetryCap)
}

// retryAfter reads an upstream Retry-After (delay-seconds or an HTTP-date);
// 0 when absent, unparsable or already past.
func retryAfter(resp *http.Response, now time.Time) time.Duration {
	if resp == nil {
		return 0
	}
	return retryAfterHeader(resp.Header, now)
}

// retryAfterHeader reads the Retry-After of an answer's header h, as
// retryAfter does.
func retryAfterHeader(h http.Header, now time.Time) time.Duration {
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0
	}
	if secs, err := strconv.ParseInt(v, 10, 32); err == nil {
		return time.Duration(max(secs, 0)) * time.Second
	}
	t, err := http.ParseTime(v)
	if err != nil || !t.After(now) {
		return 0
	}
	return t.Sub(now)
}
