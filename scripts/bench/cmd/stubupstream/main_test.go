package main

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const anID = "/o/b3:af1349b9f5f9a1a6a0404dea36dcc9499bcb25c9adc112b7cc9a93cae41f3262"

func TestParseArgsBadInput(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"negative size", []string{"-size", "-1"}},
		{"size too large", []string{"-size", "67108865"}},
		{"size not a number", []string{"-size", "1k"}},
		{"negative delay", []string{"-delay", "-1ms"}},
		{"delay too long", []string{"-delay", "61s"}},
		{"delay without unit", []string{"-delay", "20"}},
		{"unknown flag", []string{"-x"}},
		{"extra argument", []string{"extra"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := parseArgs(tc.args); err == nil {
				t.Errorf("parseArgs(%q) = nil error", tc.args)
			}
			if err := run(tc.args, io.Discard); err == nil {
				t.Errorf("run(%q) = nil error", tc.args)
			}
		})
	}
}

func TestParseArgsDefaultsAndValues(t *testing.T) {
	o, err := parseArgs(nil)
	if err != nil || o != (options{listen: "127.0.0.1:0", size: 1024, delay: 20 * time.Millisecond}) {
		t.Fatalf("defaults = %+v, %v", o, err)
	}
	o, err = parseArgs([]string{"-listen", "127.0.0.1:9", "-size", "0", "-delay", "0s"})
	if err != nil || o != (options{listen: "127.0.0.1:9", size: 0, delay: 0}) {
		t.Fatalf("parsed = %+v, %v", o, err)
	}
}

func TestRunBadListen(t *testing.T) {
	if err := run([]string{"-listen", "nonsense"}, io.Discard); err == nil {
		t.Fatal("run with a bad listen address = nil error")
	}
}

func TestAnswers(t *testing.T) {
	for _, tc := range []struct {
		method, path string
		code         int
		body         string
		header       map[string]string
	}{
		{"GET", anID, 200, strings.Repeat("x", 5), map[string]string{"Content-Length": "5", "Content-Type": "application/octet-stream"}},
		{"GET", "/o/anything-goes", 200, strings.Repeat("x", 5), nil},
		{"HEAD", anID, 200, "", map[string]string{"Content-Length": "5"}},
		{"GET", "/healthz", 200, "ok\n", nil},
		{"HEAD", "/readyz", 200, "", nil},
		{"POST", anID, 405, "method not allowed\n", map[string]string{"Allow": "GET, HEAD"}},
		{"PUT", "/healthz", 405, "method not allowed\n", nil},
		{"GET", "/o/a%2Fb", 404, "404 page not found\n", nil},
		{"GET", "/o/a/b", 404, "404 page not found\n", nil},
		{"GET", "/o/", 404, "404 page not found\n", nil},
		{"GET", "/other", 404, "404 page not found\n", nil},
	} {
		t.Run(tc.method+" "+tc.path, func(t *testing.T) {
			rec := httptest.NewRecorder()
			Handler(5, 0).ServeHTTP(rec, httptest.NewRequest(tc.method, tc.path, nil))
			if rec.Code != tc.code || rec.Body.String() != tc.body {
				t.Fatalf("got %d %q, want %d %q", rec.Code, rec.Body.String(), tc.code, tc.body)
			}
			for k, v := range tc.header {
				if got := rec.Header().Get(k); got != v {
					t.Errorf("%s = %q, want %q", k, got, v)
				}
			}
		})
	}
}

func TestDefaultSizeBody(t *testing.T) {
	rec := httptest.NewRecorder()
	Handler(1024, 0).ServeHTTP(rec, httptest.NewRequest("GET", anID, nil))
	if rec.Code != 200 || rec.Body.Len() != 1024 {
		t.Fatalf("got %d with %d bytes", rec.Code, rec.Body.Len())
	}
}

// Thousands of concurrent object requests all answer after exactly the
// delay; health probes do not wait.
func TestConcurrentRequestsAnswerAfterDelay(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := Handler(16, 20*time.Millisecond)
		const n = 3000
		start := time.Now()
		var wg sync.WaitGroup
		var mu sync.Mutex
		late := 0
		for range n {
			wg.Go(func() {
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, httptest.NewRequest("GET", anID, nil))
				if rec.Code != 200 || rec.Body.Len() != 16 || time.Since(start) != 20*time.Millisecond {
					mu.Lock()
					late++
					mu.Unlock()
				}
			})
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", "/healthz", nil))
		if rec.Code != 200 || time.Since(start) != 0 {
			t.Errorf("healthz: %d after %v", rec.Code, time.Since(start))
		}
		wg.Wait()
		if late != 0 {
			t.Fatalf("%d of %d answers were wrong or not at 20ms", late, n)
		}
	})
}

func TestClientLeavingDuringDelayGetsNothing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Millisecond)
		defer cancel()
		start := time.Now()
		rec := httptest.NewRecorder()
		Handler(16, time.Second).ServeHTTP(rec, httptest.NewRequest("GET", anID, nil).WithContext(ctx))
		if d := time.Since(start); d != 5*time.Millisecond {
			t.Fatalf("returned after %v, want 5ms", d)
		}
		if rec.Body.Len() != 0 || rec.Header().Get("Content-Length") != "" {
			t.Fatalf("wrote %q with headers %v", rec.Body.String(), rec.Header())
		}
	})
}

// The handler behind a real listener answers a real client (no timing
// asserted).
func TestOverHTTP(t *testing.T) {
	srv := httptest.NewServer(Handler(100, 0))
	defer srv.Close()
	resp, err := srv.Client().Get(srv.URL + anID)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK || len(b) != 100 {
		t.Fatalf("got %d, %d bytes, %v", resp.StatusCode, len(b), err)
	}
}
