package gateway

import (
	"fmt"
	"io"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/ronhq/ron/store"
)

// upstreamLatency is the stub upstream's answer time in the overload test.
const upstreamLatency = 20 * time.Millisecond

// slowUpstream answers 200 after upstreamLatency (or when the request ends).
func slowUpstream(w http.ResponseWriter, r *http.Request, _ []byte) {
	t := time.NewTimer(upstreamLatency)
	defer t.Stop()
	select {
	case <-t.C:
		_, _ = io.WriteString(w, "ok")
	case <-r.Context().Done():
	}
}

// TestOverloadAnswers (docs/gateway.md §12 overload, at the role level): 200 concurrent
// GETs from two tenants against 4 scheduler slots, a queue of 8 and a
// 20 ms upstream. Every answer is a 2xx, or a 429 or 503 with an integer
// Retry-After ≥ 1; no request fails at the transport.
func TestOverloadAnswers(t *testing.T) {
	s := newStub(slowUpstream)
	cfg := baseConfig()
	cfg.StorageURL = s.listen(t)
	cfg.SchedInflight, cfg.QueueCap = 4, 8
	h := startGateway(t, cfg, Locals{})
	tokens := []string{h.bearer("tenant-a", "storage:read"), h.bearer("tenant-b", "storage:read")}
	const requests = 200
	answers := make([]<-chan answer, 0, requests)
	for i := range requests {
		path := fmt.Sprintf("/o/%s", store.Sum([]byte{byte(i)}))
		answers = append(answers, h.async(h.req("GET", path, nil, "Authorization", tokens[i%2])))
	}
	counts := map[int]int{}
	for _, c := range answers {
		a := <-c
		counts[a.status]++
		switch {
		case a.err != nil:
			t.Errorf("transport error: %v", a.err)
		case a.status/100 == 2:
		case a.status == http.StatusTooManyRequests || a.status == http.StatusServiceUnavailable:
			if ra, err := strconv.Atoi(a.header.Get("Retry-After")); err != nil || ra < 1 {
				t.Errorf("%s without an integer Retry-After ≥ 1: %q", a, a.header.Get("Retry-After"))
			}
		default:
			t.Errorf("unexpected answer under overload: %s", a)
		}
	}
	t.Logf("answers by status: %v", counts)
	if counts[http.StatusOK] == 0 {
		t.Errorf("no request was served: %v", counts)
	}
	eventually(t, "every scheduler slot given back", func() bool { return h.r.sched.InFlight() == 0 })
}
