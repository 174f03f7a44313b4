package index

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ronhq/ron/httpx/client"
	"github.com/ronhq/ron/runtime"
)

// peerRT is an http.RoundTripper answering per host, for synctest bubbles
// (no real connections).
type peerRT struct {
	mu    sync.Mutex
	calls map[string]int
	fn    func(host string, r *http.Request) (*http.Response, error)
}

func newPeerRT(fn func(host string, r *http.Request) (*http.Response, error)) *peerRT {
	return &peerRT{calls: map[string]int{}, fn: fn}
}

func (p *peerRT) RoundTrip(r *http.Request) (*http.Response, error) {
	p.mu.Lock()
	p.calls[r.URL.Host]++
	fn := p.fn
	p.mu.Unlock()
	return fn(r.URL.Host, r)
}

func (p *peerRT) set(fn func(host string, r *http.Request) (*http.Response, error)) {
	p.mu.Lock()
	p.fn = fn
	p.mu.Unlock()
}

// answer is a response with status and body.
func answer(r *http.Request, status int, body string) *http.Response {
	return &http.Response{StatusCode: status, Header: http.Header{"Content-Type": {"application/json"}},
		Body: io.NopCloser(strings.NewReader(body)), Request: r}
}

// statusRT answers every call with status.
func statusRT(status int) func(string, *http.Request) (*http.Response, error) {
	return func(_ string, r *http.Request) (*http.Response, error) { return answer(r, status, "{}"), nil }
}

// hangRT answers when the request's context ends.
func hangRT(_ string, r *http.Request) (*http.Response, error) {
	<-r.Context().Done()
	return nil, r.Context().Err()
}

// breakerClient is one peer client with the docs/index.md §6 breaker of DefaultConfig.
func breakerClient(rt http.RoundTripper) *client.Client {
	return client.New(client.Options{BaseURL: "http://peer.test:5304", HTTP: &http.Client{Transport: rt},
		Retries: -1, Breaker: DefaultConfig().WindowBreakerConfig.Options(), Role: roleName})
}

// calls makes n lookups and returns their errors.
func calls(ctx context.Context, c *client.Client, n int) []error {
	var errs []error
	for range n {
		resp, err := c.Do(ctx, &client.Request{Path: "/names/a.example"})
		if err == nil {
			resp.Body.Close()
		}
		errs = append(errs, err)
	}
	return errs
}

func wantBreaker(t *testing.T, c *client.Client, want string) {
	t.Helper()
	if got := c.BreakerState(); got != want {
		t.Fatalf("breaker %s, want %s", got, want)
	}
}

func TestPeerBreakerTripsAtMinRequests(t *testing.T) {
	cases := []struct {
		name   string
		status int
		opens  bool
	}{
		{"503", http.StatusServiceUnavailable, true},
		{"500", http.StatusInternalServerError, true},
		{"429", http.StatusTooManyRequests, true},
		{"400", http.StatusBadRequest, true},
		{"404 is a success", http.StatusNotFound, false},
		{"200", http.StatusOK, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				c := breakerClient(newPeerRT(statusRT(tc.status)))
				calls(t.Context(), c, 19)
				wantBreaker(t, c, client.StateClosed) // below breaker_min_requests
				calls(t.Context(), c, 1)
				if want := map[bool]string{true: client.StateOpen, false: client.StateClosed}[tc.opens]; c.BreakerState() != want {
					t.Fatalf("after 20 × %d: %s, want %s", tc.status, c.BreakerState(), want)
				}
			})
		})
	}
}

func TestPeerBreakerNeedsMoreThanHalf(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rt := newPeerRT(statusRT(http.StatusOK))
		c := breakerClient(rt)
		calls(t.Context(), c, 10)
		rt.set(statusRT(http.StatusBadGateway))
		calls(t.Context(), c, 10)
		wantBreaker(t, c, client.StateClosed) // 10 of 20: not more than half
		calls(t.Context(), c, 1)
		wantBreaker(t, c, client.StateOpen) // 11 of 21
	})
}

func TestPeerBreakerWindowRollsInBuckets(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rt := newPeerRT(statusRT(http.StatusServiceUnavailable))
		c := breakerClient(rt)
		calls(t.Context(), c, 15)
		time.Sleep(30 * time.Second) // the 15 failures leave the 30 s window
		calls(t.Context(), c, 15)
		wantBreaker(t, c, client.StateClosed)
		calls(t.Context(), c, 5)
		wantBreaker(t, c, client.StateOpen)
	})
}

func TestPeerBreakerHalfOpenAndClose(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rt := newPeerRT(statusRT(http.StatusServiceUnavailable))
		c := breakerClient(rt)
		calls(t.Context(), c, 20)
		wantBreaker(t, c, client.StateOpen)
		if err := calls(t.Context(), c, 1)[0]; !errors.Is(err, client.ErrBreakerOpen) {
			t.Fatalf("open breaker let a call through: %v", err)
		}
		time.Sleep(10*time.Second + time.Millisecond) // breaker_cooldown
		wantBreaker(t, c, client.StateHalfOpen)

		release := make(chan struct{})
		rt.set(func(_ string, r *http.Request) (*http.Response, error) {
			<-release
			return answer(r, http.StatusOK, "{}"), nil
		})
		var wg sync.WaitGroup
		for range 3 { // breaker_half_open probes
			wg.Go(func() { calls(context.Background(), c, 1) })
		}
		synctest.Wait()
		if err := calls(t.Context(), c, 1)[0]; !errors.Is(err, client.ErrBreakerOpen) {
			t.Fatalf("a fourth half-open probe went through: %v", err)
		}
		close(release)
		wg.Wait()
		wantBreaker(t, c, client.StateClosed)

		rt.set(statusRT(http.StatusServiceUnavailable))
		calls(t.Context(), c, 20)
		time.Sleep(10*time.Second + time.Millisecond)
		calls(t.Context(), c, 1) // the probe fails
		wantBreaker(t, c, client.StateOpen)
	})
}

// nameAnswer is a peer's valid answer for blog.example.
const nameAnswer = `{"name":"blog.example","b3":"` + idA + `","version":3,"updated_at":"2026-11-22T10:00:00.000Z"}`

// testHedgedPeers is a HedgedPeers over rt with the docs/index.md §6 settings.
func testHedgedPeers(t *testing.T, rt http.RoundTripper, m *runtime.Metrics, urls ...string) *HedgedPeers {
	t.Helper()
	ps, _ := newPeerSetup(DefaultConfig(), "", m)
	hp, err := NewHedgedPeers(urls, ps.hedge, client.Options{HTTP: &http.Client{Transport: rt}, Retries: -1,
		Breaker: ps.bo, Metrics: m.Set(), Role: roleName})
	if err != nil {
		t.Fatal(err)
	}
	return hp
}

// TestLosingLegsDoNotCount: a peer that is always slower than another
// loses every lookup; its cancelled legs leave its breaker closed.
func TestLosingLegsDoNotCount(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := runtime.NewMetrics(nil)
		rt := newPeerRT(func(host string, r *http.Request) (*http.Response, error) {
			if host == "slow.test" {
				return hangRT(host, r)
			}
			time.Sleep(10 * time.Millisecond)
			return answer(r, http.StatusOK, nameAnswer), nil
		})
		hp := testHedgedPeers(t, rt, m, "http://fast.test", "http://slow.test")
		for range 30 {
			rec, err := hp.Name(t.Context(), "blog.example")
			if err != nil || rec.Version != 3 {
				t.Fatalf("lookup: %+v %v", rec, err)
			}
		}
		if hp.OpenCount() != 0 {
			t.Fatal("a losing peer's breaker opened")
		}
		if got := m.Values()[`ron_index_peer_requests_total{role="index",result="canceled",target="slow.test"}`]; got != 30 {
			t.Fatalf("canceled legs %v", got)
		}
	})
}

// TestInvalidAnswersOpenTheBreaker is the control: wrong answers count.
func TestInvalidAnswersOpenTheBreaker(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := runtime.NewMetrics(nil)
		rt := newPeerRT(func(_ string, r *http.Request) (*http.Response, error) {
			return answer(r, http.StatusOK, `{"name":"other.example"}`), nil
		})
		hp := testHedgedPeers(t, rt, m, "http://liar.test")
		for range 20 {
			if _, err := hp.Name(t.Context(), "blog.example"); err == nil {
				t.Fatal("an invalid answer was accepted")
			}
		}
		if hp.OpenCount() != 1 {
			t.Fatal("20 invalid answers left the breaker closed")
		}
		if got := m.Values()[`ron_breaker_open_total{role="index",target="liar.test"}`]; got != 1 {
			t.Fatalf("breaker_open_total %v", got)
		}
	})
}
