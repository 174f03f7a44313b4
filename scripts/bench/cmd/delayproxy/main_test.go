package main

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// fakeUpstream is an in-memory RoundTripper that records what it was asked.
type fakeUpstream struct {
	mu   sync.Mutex
	urls []string
	at   []time.Time
}

func (f *fakeUpstream) RoundTrip(r *http.Request) (*http.Response, error) {
	f.mu.Lock()
	f.urls = append(f.urls, r.URL.String())
	f.at = append(f.at, time.Now())
	f.mu.Unlock()
	return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"application/json"}},
		Body: io.NopCloser(strings.NewReader(`{"ok":true}`)), Request: r}, nil
}

func mustURL(t *testing.T, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func TestProxyDelaysThenForwards(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		up := &fakeUpstream{}
		h := New(mustURL(t, "http://10.0.0.9:5304"), time.Second, up)
		start := time.Now()
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/names/site?local=1", nil))
		if rec.Code != 200 || rec.Body.String() != `{"ok":true}` {
			t.Fatalf("got %d %q", rec.Code, rec.Body.String())
		}
		if len(up.urls) != 1 || up.urls[0] != "http://10.0.0.9:5304/names/site?local=1" {
			t.Fatalf("upstream saw %v", up.urls)
		}
		if d := up.at[0].Sub(start); d != time.Second {
			t.Fatalf("forwarded after %v, want 1s", d)
		}
	})
}

func TestProxyDropsCancelledRequests(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		up := &fakeUpstream{}
		h := New(mustURL(t, "http://10.0.0.9:5304"), time.Second, up)
		ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
		defer cancel()
		start := time.Now()
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/providers/x", nil).WithContext(ctx))
		if d := time.Since(start); d != 100*time.Millisecond {
			t.Fatalf("returned after %v, want 100ms", d)
		}
		if len(up.urls) != 0 {
			t.Fatalf("upstream saw %v", up.urls)
		}
	})
}

func TestBadInput(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"no target", nil},
		{"target without scheme", []string{"-target", "127.0.0.1:5304"}},
		{"ftp target", []string{"-target", "ftp://h:1"}},
		{"target without host", []string{"-target", "http://"}},
		{"target with query", []string{"-target", "http://h:1/?a=b"}},
		{"target with user", []string{"-target", "http://u:p@h:1"}},
		{"target with fragment", []string{"-target", "http://h:1#f"}},
		{"unparsable target", []string{"-target", "::bad"}},
		{"negative delay", []string{"-target", "http://h:1", "-delay", "-1s"}},
		{"delay too long", []string{"-target", "http://h:1", "-delay", "2m"}},
		{"delay not a duration", []string{"-target", "http://h:1", "-delay", "1"}},
		{"extra argument", []string{"-target", "http://h:1", "x"}},
		{"bad listen address", []string{"-target", "http://h:1", "-listen", "nonsense"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := run(tc.args, io.Discard); err == nil {
				t.Errorf("run(%q) = nil, want an error", tc.args)
			}
		})
	}
}
