package upstream

import (
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/VictoriaMetrics/metrics"

	"github.com/ronhq/ron/httpx/client"
	"github.com/ronhq/ron/runtime"
)

// Metric names (runtime.Metrics adds the ron_ prefix and the role label).
const (
	metricRequests = "gateway_upstream_requests_total"
	metricBreaker  = "breaker_state"
	metricRetries  = "backoff_retries_total"
	metricTimeouts = "io_timeouts_total"
	opForward      = "forward"
)

// linkMetrics holds one Link's counters; per-code counters are created on
// first use and cached.
type linkMetrics struct {
	m        *runtime.Metrics
	name     string
	retries  *metrics.Counter
	timeouts *metrics.Counter
	byStatus [maxStatus + 1]atomic.Pointer[metrics.Counter] // code label = the status; 0: "error"
	mu       sync.Mutex                                     // serializes the creation of code counters
}

// maxStatus is the largest status with a cached counter; larger ones are
// counted as "error" (no HTTP status is above 599).
const maxStatus = 999

// newLinkMetrics registers the Link's counters and, unless state is nil,
// its ron_breaker_state gauges, which read state on every scrape.
func newLinkMetrics(m *runtime.Metrics, name string, state func() string) *linkMetrics {
	if m == nil {
		m = runtime.NewMetrics(nil)
	}
	lm := &linkMetrics{m: m, name: name,
		retries:  m.Counter(metricRetries, "role", metricRole, "op", opForward),
		timeouts: m.Counter(metricTimeouts, "role", metricRole, "op", opForward),
	}
	if state != nil {
		RegisterStateGauges(m, name, state)
	}
	return lm
}

// RegisterStateGauges registers the ron_breaker_state{target=name,state}
// gauges of an upstream (role "gateway"): 1 for the state state() returns,
// 0 for the others; state is read on every scrape.
func RegisterStateGauges(m *runtime.Metrics, name string, state func() string) {
	for _, s := range client.BreakerStates {
		m.Gauge(metricBreaker, func() float64 {
			if state() == s {
				return 1
			}
			return 0
		}, "role", metricRole, "target", name, "state", s)
	}
}

// attempt counts one upstream attempt: code is the status, 0 for none.
func (lm *linkMetrics) attempt(status int) {
	if status < 0 || status > maxStatus {
		status = 0
	}
	if c := lm.byStatus[status].Load(); c != nil {
		c.Inc()
		return
	}
	lm.counter(status).Inc()
}

// counter creates (once) the counter of status.
func (lm *linkMetrics) counter(status int) *metrics.Counter {
	lm.mu.Lock()
	defer lm.mu.Unlock()
	if c := lm.byStatus[status].Load(); c != nil {
		return c
	}
	code := "error"
	if status > 0 {
		code = strconv.Itoa(status)
	}
	c := lm.m.Counter(metricRequests, "role", metricRole, "upstream", lm.name, "code", code)
	lm.byStatus[status].Store(c)
	return c
}
