package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestParseArgsBadInput(t *testing.T) {
	ok := []string{"-url", "http://127.0.0.1:5304", "-keys", "a.b"}
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"no url", []string{"-keys", "a"}},
		{"no keys", []string{"-url", "http://h:1"}},
		{"url without scheme", []string{"-url", "h:1", "-keys", "a"}},
		{"ftp url", []string{"-url", "ftp://h:1", "-keys", "a"}},
		{"url without host", []string{"-url", "http://", "-keys", "a"}},
		{"url with query", []string{"-url", "http://h:1?x=1", "-keys", "a"}},
		{"url with user", []string{"-url", "http://u@h:1", "-keys", "a"}},
		{"empty key", []string{"-url", "http://h:1", "-keys", "a,,b"}},
		{"key with slash", []string{"-url", "http://h:1", "-keys", "a/b"}},
		{"key with query", []string{"-url", "http://h:1", "-keys", "a?b"}},
		{"zero workers", append(ok, "-c", "0")},
		{"too many workers", append(ok, "-c", "1025")},
		{"zero duration", append(ok, "-d", "0s")},
		{"duration too long", append(ok, "-d", "2h")},
		{"negative timeout", append(ok, "-timeout", "-1s")},
		{"unknown flag", append(ok, "-x")},
		{"extra argument", append(ok, "extra")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := parseArgs(tc.args); err == nil {
				t.Errorf("parseArgs(%q) = nil error", tc.args)
			}
		})
	}
	cfg, err := parseArgs([]string{"-url", "http://127.0.0.1:5304/", "-keys", "a.b,b3:00,x@2", "-c", "2"})
	if err != nil || cfg.base.String() != "http://127.0.0.1:5304" || len(cfg.keys) != 3 || !cfg.noCache ||
		cfg.concurrency != 2 {
		t.Fatalf("parseArgs = %+v, %v", cfg, err)
	}
}

func TestPercentile(t *testing.T) {
	var lat []time.Duration
	for i := 1; i <= 100; i++ {
		lat = append(lat, time.Duration(i)*time.Millisecond)
	}
	for _, tc := range []struct {
		p    float64
		want time.Duration
	}{{0.5, 50 * time.Millisecond}, {0.99, 99 * time.Millisecond}, {1, 100 * time.Millisecond}, {0.001, time.Millisecond}} {
		if got := percentile(lat, tc.p); got != tc.want {
			t.Errorf("percentile(%v) = %v, want %v", tc.p, got, tc.want)
		}
	}
	if got := percentile(nil, 0.5); got != 0 {
		t.Errorf("percentile of nothing = %v", got)
	}
}

// fakeNode answers /resolve/{key} after 10 ms: key "down" with 503, any
// other key with a peer answer.
type fakeNode struct{}

func (fakeNode) RoundTrip(r *http.Request) (*http.Response, error) {
	select {
	case <-time.After(10 * time.Millisecond):
	case <-r.Context().Done():
		return nil, r.Context().Err()
	}
	code, body := 200, `{"key":"k","source":"peer","providers":[]}`
	if strings.HasSuffix(r.URL.Path, "/down") {
		code, body = 503, `{"error":{"code":"upstream_unavailable"}}`
	}
	if r.Header.Get("Cache-Control") != "no-cache" {
		code = 400
	}
	return &http.Response{StatusCode: code, Body: io.NopCloser(strings.NewReader(body)), Request: r}, nil
}

func TestLoadCountsAndPercentiles(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg, err := parseArgs([]string{"-url", "http://node:1", "-keys", "a,down", "-c", "2", "-d", "1s"})
		if err != nil {
			t.Fatal(err)
		}
		res, err := load(context.Background(), cfg, &http.Client{Transport: fakeNode{}})
		if err != nil {
			t.Fatal(err)
		}
		// Two workers, 10 ms each, starting requests for 1 s: 200 requests
		// (202 when the last ones start at the very end), half failing.
		n := len(res.lat) + res.errors
		if n < 200 || n > 202 || res.errors < n/2-1 || res.errors > n/2+1 || res.sources["peer"] != len(res.lat) {
			t.Fatalf("requests %d, errors %d, sources %v", n, res.errors, res.sources)
		}
		if p := percentile(res.lat, 0.99); p != 10*time.Millisecond {
			t.Fatalf("p99 %v, want 10ms", p)
		}
		if s := res.summary(); !strings.Contains(s, "p50_ms=10.00") || !strings.Contains(s, "sources=peer:") ||
			!strings.Contains(s, "status 503") {
			t.Fatalf("summary %q", s)
		}
	})
}

func TestRunReportsNoSuccess(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// Without no-cache the fake node answers 400 to everything.
		cfg, err := parseArgs([]string{"-url", "http://node:1", "-keys", "a", "-d", "100ms", "-no-cache=false"})
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		err = run(context.Background(), cfg, &http.Client{Transport: fakeNode{}}, &out)
		if !errors.Is(err, errNoSuccess) || !strings.HasPrefix(out.String(), "requests=") ||
			!strings.Contains(out.String(), "status 400") || strings.Contains(out.String(), "requests=0 ") {
			t.Fatalf("run = %v, output %q", err, out.String())
		}
	})
}
