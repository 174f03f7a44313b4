package upstream

import (
	"context"
	"net/http"
	"testing"

	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/httpx/client"
)

func TestNewValidation(t *testing.T) {
	h := http.NotFoundHandler()
	cases := []struct {
		name string
		opt  Options
		ok   bool
	}{
		{"http", Options{Name: "storage", BaseURL: "http://10.0.0.2:5303"}, true},
		{"https with path", Options{Name: "edge", BaseURL: "https://edge.example/base/"}, true},
		{"handler ignores URL", Options{Name: "index", BaseURL: "::bad", Handler: h}, true},
		{"empty name", Options{BaseURL: "http://x"}, false},
		{"empty URL", Options{Name: "storage"}, false},
		{"unparsable", Options{Name: "storage", BaseURL: "http://[::1"}, false},
		{"ftp", Options{Name: "storage", BaseURL: "ftp://x"}, false},
		{"no host", Options{Name: "storage", BaseURL: "http://"}, false},
		{"relative", Options{Name: "storage", BaseURL: "/o"}, false},
		{"user info", Options{Name: "storage", BaseURL: "http://u:p@x"}, false},
		{"query", Options{Name: "storage", BaseURL: "http://x/?a=1"}, false},
		{"fragment", Options{Name: "storage", BaseURL: "http://x/#f"}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			l, err := New(tc.opt)
			if (err == nil) != tc.ok {
				t.Fatalf("New: %v, want ok=%v", err, tc.ok)
			}
			if l != nil {
				l.Close()
				if l.InProcess() != (tc.opt.Handler != nil) || l.BreakerState() != client.StateClosed || l.Policy() != DefaultPolicy() {
					t.Fatalf("link %s: inproc %v state %s policy %+v", l.Name(), l.InProcess(), l.BreakerState(), l.Policy())
				}
			}
		})
	}
}

func TestPathAndQuery(t *testing.T) {
	cases := []struct {
		base, path, query string
		want              string
	}{
		{"/", "/o/b3%3Aab", "", "/o/b3%3Aab"},
		{"/", "names/a%2Fb/versions", "", "/names/a%2Fb/versions"},
		{"/edge", "/tiles/1/2", "x=1&y=%20", "/edge/tiles/1/2?x=1&y=%20"},
	}
	for _, tc := range cases {
		uris := make(chan string, 1)
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { uris <- r.RequestURI })
		l := mustLink(t, Options{Name: "edge", Handler: h})
		l.base.Path = tc.base
		resp, err := l.Do(context.Background(), Call{Method: "GET", Path: tc.path, RawQuery: tc.query})
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if got := <-uris; got != tc.want {
			t.Errorf("path %q query %q → %q, want %q", tc.path, tc.query, got, tc.want)
		}
	}
}

func TestTokenErrorIsInternal(t *testing.T) {
	called := false
	l := mustLink(t, Options{BaseURL: "http://127.0.0.1:1",
		Token: func(context.Context) (string, error) { return "", context.DeadlineExceeded }})
	l.rt = roundTripFunc(func(*http.Request) (*http.Response, error) { called = true; return nil, nil })
	_, err := l.Do(context.Background(), Call{Method: "GET", Path: "/o/x"})
	if he := httpx.AsError(err); he.Status != http.StatusInternalServerError || called {
		t.Fatalf("error %v, transport called %v", err, called)
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
