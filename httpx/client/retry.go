package client

import (
	"net/http"
	"strconv"
	"strings"
	"time"
)

// RetryPause is the wait between the attempts of one call, shared by every
// outbound caller (this package's Client and the gateway's links): retry
// n+1, after n earlier retries, waits a random time in [Base, 2·Base),
// doubled n times, capped at Cap.
type RetryPause struct {
	Base, Cap time.Duration
}

// Pause returns the wait before retry n+1; rnd is uniform in [0, 1).
func (p RetryPause) Pause(n int, rnd float64) time.Duration {
	d := p.Base + time.Duration(rnd*float64(p.Base))
	for range n {
		if d >= p.Cap {
			break
		}
		d *= 2
	}
	return min(d, p.Cap)
}

// RetryAfter reads a Retry-After value, delay-seconds or an HTTP-date, as
// the wait it asks for from now. ok is false when v is empty or not one of
// the two forms (negative seconds included); a date already past is 0.
func RetryAfter(v string, now time.Time) (d time.Duration, ok bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if n, err := strconv.ParseInt(v, 10, 32); err == nil {
		return time.Duration(n) * time.Second, n >= 0
	}
	t, err := http.ParseTime(v)
	if err != nil {
		return 0, false
	}
	return max(t.Sub(now), 0), true
}

// RetryAfterHeader is the Retry-After of an answer's header h: the wait
// it asks for, 0 when it is absent, malformed or already past.
func RetryAfterHeader(h http.Header, now time.Time) time.Duration {
	d, ok := RetryAfter(h.Get("Retry-After"), now)
	if !ok {
		return 0
	}
	return d
}
