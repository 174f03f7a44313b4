package hedge

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/ronhq/ron/httpx/client"
	"github.com/ronhq/ron/runtime"
)

type answer struct {
	Key    string `json:"key"`
	Target string `json:"target"`
}

func newPeer(t *testing.T, h http.HandlerFunc, path string) (*HTTPPeer[answer], *client.Client) {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	c := client.New(client.Options{BaseURL: srv.URL, Role: "index",
		Breaker: client.BreakerOptions{MinRequests: 1, ConsecutiveFailures: 1}})
	t.Cleanup(c.Close)
	check := func(a answer) error {
		if a.Key != "k" {
			return fmt.Errorf("key %q, want k", a.Key)
		}
		return nil
	}
	return &HTTPPeer[answer]{Client: c, Path: path, Op: "GET /resolve/{key}", Check: check}, c
}

func TestHTTPPeerAnswers(t *testing.T) {
	cases := []struct {
		name, body string
		status     int
		want       func(error) bool
	}{
		{"ok", `{"key":"k","target":"b3:x"}`, 200, func(err error) bool { return err == nil }},
		{"not found", `{"error":{"code":"not_found","message":"no"}}`, 404, DefaultNotFound},
		{"unknown field", `{"key":"k","extra":1}`, 200, isInvalid},
		{"trailing data", `{"key":"k"} {}`, 200, isInvalid},
		{"wrong key", `{"key":"other"}`, 200, isInvalid},
		{"busy", `{"error":{"code":"busy","message":"no"}}`, 429, func(err error) bool { return err != nil && !DefaultTransient(err) }},
		{"unavailable", `{"error":{"code":"upstream_unavailable","message":"no"}}`, 503, DefaultTransient},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, _ := newPeer(t, func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path != "/resolve/k" || r.URL.Query().Get("local") != "1" {
					t.Errorf("asked %s", r.URL)
				}
				w.WriteHeader(c.status)
				fmt.Fprint(w, c.body)
			}, "/resolve/k")
			v, err := p.Lookup(t.Context())
			if !c.want(err) {
				t.Fatalf("got %+v, %v", v, err)
			}
		})
	}
}

func isInvalid(err error) bool { return errors.Is(err, ErrInvalidAnswer) && !DefaultTransient(err) }

// TestLosingHTTPLegsLeaveBreakerClosed runs real HTTP legs that lose to a
// fake peer while the peer server is still holding their requests. Their
// cancellation (context.Canceled, cause ErrLost) must not count against the
// breaker, which here trips on a single counted failure.
func TestLosingHTTPLegsLeaveBreakerClosed(t *testing.T) {
	arrived := make(chan struct{}, 1)
	slow, c := newPeer(t, func(w http.ResponseWriter, r *http.Request) {
		arrived <- struct{}{}
		<-r.Context().Done()
	}, "/resolve/k")
	winner := Func("fast", func(ctx context.Context) (answer, error) {
		select {
		case <-arrived:
			return answer{Key: "k", Target: "b3:x"}, nil
		case <-ctx.Done():
			return answer{}, ctx.Err()
		}
	})
	m := runtime.NewMetrics(nil)
	sat := func(a answer) bool { return a.Target != "" }
	for range 10 {
		_, res, err := Lookup(t.Context(), []Peer[answer]{slow, winner}, sat, Options{Metrics: m, Role: "index"})
		if err != nil || res.Winner != "fast" {
			t.Fatalf("got %+v %v", res, err)
		}
	}
	if s := c.BreakerState(); s != client.StateClosed {
		t.Fatalf("breaker %s after 10 lost legs, want closed", s)
	}
	series := fmt.Sprintf(`ron_index_peer_requests_total{role="index",result="canceled",target="%s"}`, c.Target())
	if got := m.Values()[series]; got != 10 {
		t.Fatalf("%s = %v, want 10", series, got)
	}
}

// TestHTTPFailureTripsBreaker is the control: a real failure does count, and
// the next lookup skips the peer.
func TestHTTPFailureTripsBreaker(t *testing.T) {
	p, c := newPeer(t, func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusInternalServerError)
	}, "/resolve/k")
	sat := func(a answer) bool { return true }
	_, _, err := Lookup(t.Context(), []Peer[answer]{p}, sat, Options{})
	if !errors.Is(err, ErrUnavailable) || c.BreakerState() != client.StateOpen {
		t.Fatalf("got %v, breaker %s", err, c.BreakerState())
	}
	_, res, err := Lookup(t.Context(), []Peer[answer]{p}, sat, Options{})
	if !errors.Is(err, ErrUnavailable) || res.Skipped != 1 || res.Asked != 0 {
		t.Fatalf("got %v %+v, want the peer skipped", err, res)
	}
}
