package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// handlerRT serves requests in memory through h (an httptest recorder), so
// that runs work inside a synctest bubble. A request whose context ends
// while h runs fails with the context's error, as a real transport would.
type handlerRT struct{ h http.Handler }

func (rt handlerRT) RoundTrip(r *http.Request) (*http.Response, error) {
	rec := httptest.NewRecorder()
	rt.h.ServeHTTP(rec, r)
	if err := r.Context().Err(); err != nil {
		return nil, err
	}
	return rec.Result(), nil
}

// failRT fails every request like a refused connection.
type failRT struct{}

func (failRT) RoundTrip(*http.Request) (*http.Response, error) {
	return nil, errors.New("dial tcp 127.0.0.1:1: connect: connection refused")
}

// delayHandler answers 200 "ok" after d, or nothing when the client leaves.
func delayHandler(d time.Duration) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-r.Context().Done():
			return
		case <-t.C:
		}
		_, _ = io.WriteString(w, "ok")
	})
}

// mustParse parses args or fails the test.
func mustParse(t *testing.T, args ...string) config {
	t.Helper()
	cfg, err := parseArgs(args)
	if err != nil {
		t.Fatalf("parseArgs(%q): %v", args, err)
	}
	return cfg
}

// runSummary runs cfg with one round tripper per class and decodes the JSON.
func runSummary(t *testing.T, cfg config, rts ...http.RoundTripper) Summary {
	t.Helper()
	var out, brief bytes.Buffer
	if err := run(t.Context(), cfg, rts, &out, &brief); err != nil && !errors.Is(err, errNoAnswer) {
		t.Fatal(err)
	}
	var s Summary
	if err := json.Unmarshal(out.Bytes(), &s); err != nil {
		t.Fatalf("summary %q: %v", out.String(), err)
	}
	if n := strings.Count(brief.String(), "\n"); n != len(cfg.classes)+1 {
		t.Fatalf("brief has %d lines: %q", n, brief.String())
	}
	return s
}

const u = "http://127.0.0.1:8090/o/b3:00"

func TestParseArgsBadInput(t *testing.T) {
	a := "name=A,rate=10,url=" + u
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"no class", nil},
		{"class without name", []string{"-class", "rate=1,url=" + u}},
		{"class without url", []string{"-class", "name=A,rate=1"}},
		{"open class without rate", []string{"-class", "name=A,url=" + u}},
		{"zero rate", []string{"-class", "name=A,rate=0,url=" + u}},
		{"negative rate", []string{"-class", "name=A,rate=-5,url=" + u}},
		{"rate too high", []string{"-class", "name=A,rate=2e6,url=" + u}},
		{"rate NaN", []string{"-class", "name=A,rate=NaN,url=" + u}},
		{"rate not a number", []string{"-class", "name=A,rate=fast,url=" + u}},
		{"unknown key", []string{"-class", a + ",color=red"}},
		{"piece without =", []string{"-class", a + ",x"}},
		{"empty value", []string{"-class", "name=,rate=1,url=" + u}},
		{"key twice", []string{"-class", a + ",rate=3"}},
		{"name with space", []string{"-class", "name=a b,rate=1,url=" + u}},
		{"ftp url", []string{"-class", "name=A,rate=1,url=ftp://h/x"}},
		{"url without host", []string{"-class", "name=A,rate=1,url=http:///x"}},
		{"url with user", []string{"-class", "name=A,rate=1,url=http://u@h/x"}},
		{"url with fragment", []string{"-class", "name=A,rate=1,url=http://h/x#f"}},
		{"bad method", []string{"-class", a + ",method=POST"}},
		{"zero max_outstanding", []string{"-class", a + ",max_outstanding=0"}},
		{"bad max_outstanding", []string{"-class", a + ",max_outstanding=many"}},
		{"duplicate names", []string{"-class", a, "-class", a}},
		{"zero duration", []string{"-class", a, "-d", "0s"}},
		{"negative warmup", []string{"-class", a, "-warmup", "-1s"}},
		{"zero window", []string{"-class", a, "-window", "0s"}},
		{"too many windows", []string{"-class", a, "-d", "1h", "-window", "1ms"}},
		{"zero timeout", []string{"-class", a, "-timeout", "0s"}},
		{"negative closed", []string{"-class", a, "-closed", "-1"}},
		{"too many workers", []string{"-class", a, "-closed", "5000"}},
		{"zero max-outstanding", []string{"-class", a, "-max-outstanding", "0"}},
		{"extra argument", []string{"-class", a, "x"}},
		{"unknown flag", []string{"-class", a, "-z"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := parseArgs(tc.args); err == nil {
				t.Errorf("parseArgs(%q) = nil error", tc.args)
			}
		})
	}
}

func TestParseArgsGood(t *testing.T) {
	cfg := mustParse(t, "-class", "name=A,rate=2.5,url="+u+"?x=1,token=abc.def,method=HEAD,max_outstanding=7",
		"-class", "name=B,rate=1,url="+u, "-d", "5s", "-warmup", "1s", "-window", "2s")
	a, b := cfg.classes[0], cfg.classes[1]
	if a != (classSpec{name: "A", url: u + "?x=1", method: "HEAD", rate: 2.5, token: "abc.def", maxOutstanding: 7}) ||
		b.method != "GET" || cfg.outstanding(a) != 7 || cfg.outstanding(b) != 1000 || !cfg.open() {
		t.Fatalf("parsed %+v", cfg)
	}
	cfg = mustParse(t, "-closed", "64", "-class", "name=A,url="+u)
	if cfg.open() || cfg.closed != 64 || cfg.classes[0].rate != 0 {
		t.Fatalf("closed loop parsed %+v", cfg)
	}
}

// A steady server: every scheduled request is sent and answered, the
// latency is the server's delay, the windows split the sends evenly.
func TestOpenLoopSteady(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := mustParse(t, "-class", "name=A,rate=100,url="+u, "-d", "1s", "-window", "500ms")
		s := runSummary(t, cfg, handlerRT{delayHandler(20 * time.Millisecond)})
		a := s.Classes[0]
		if s.Mode != "open" || a.Sent != 100 || a.Completed != 100 || a.OK != 100 || a.Status["200"] != 100 ||
			a.Dropped != 0 || a.ConnErrors != 0 || a.OKPerS != 100 || a.ShareOK != 1 {
			t.Fatalf("summary %+v", a)
		}
		if a.Latency != (percentiles{N: 100, P50: 20, P90: 20, P99: 20, Max: 20}) || a.MaxSendLagMS != 0 {
			t.Fatalf("latency %+v, send lag %v", a.Latency, a.MaxSendLagMS)
		}
		if len(a.Windows) != 2 || a.Windows[0].Sent != 50 || a.Windows[1].Latency.N != 50 ||
			a.Windows[1].StartS != 0.5 || a.Windows[1].EndS != 1 {
			t.Fatalf("windows %+v", a.Windows)
		}
	})
}

// A server that handles one request at a time (50 ms each) under 40 req/s:
// the queue grows, and latency counted from the schedule shows it (request
// i is scheduled at 25i ms and done at 50(i+1) ms).
func TestOpenLoopMeasuresFromSchedule(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		one := make(chan struct{}, 1)
		serial := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			one <- struct{}{}
			defer func() { <-one }()
			delayHandler(50*time.Millisecond).ServeHTTP(w, r)
		})
		cfg := mustParse(t, "-class", "name=A,rate=40,url="+u, "-d", "1s")
		a := runSummary(t, cfg, handlerRT{serial}).Classes[0]
		if a.Sent != 40 || a.OK != 40 || a.Latency.Max != 1025 || a.Latency.P50 != 525 {
			t.Fatalf("summary %+v", a)
		}
	})
}

// Past max_outstanding, scheduled sends are dropped and counted.
func TestOpenLoopDropsBeyondOutstanding(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := mustParse(t, "-class", "name=A,rate=10,max_outstanding=2,url="+u, "-d", "1s")
		a := runSummary(t, cfg, handlerRT{delayHandler(time.Second)}).Classes[0]
		if a.Sent != 2 || a.Dropped != 8 || a.Completed != 2 || a.MaxOutstanding != 2 {
			t.Fatalf("summary %+v", a)
		}
	})
}

// Statuses, Retry-After, connection errors and timeouts are told apart;
// the bearer token is sent.
func TestOutcomes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var sawToken string
		answer := func(code int, retryAfter string) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if code == 429 {
					sawToken = r.Header.Get("Authorization")
				}
				if retryAfter != "" {
					w.Header().Set("Retry-After", retryAfter)
				}
				w.WriteHeader(code)
			})
		}
		cfg := mustParse(t, "-d", "1s", "-timeout", "100ms",
			"-class", "name=limited,rate=10,token=tok,url="+u, "-class", "name=busy,rate=10,url="+u,
			"-class", "name=down,rate=10,url="+u, "-class", "name=slow,rate=10,url="+u,
			"-class", "name=fine,rate=30,url="+u)
		s := runSummary(t, cfg, handlerRT{answer(429, "1")}, handlerRT{answer(503, "")}, failRT{},
			handlerRT{delayHandler(time.Second)}, handlerRT{answer(204, "")})
		lim, busy, down, slow, fine := s.Classes[0], s.Classes[1], s.Classes[2], s.Classes[3], s.Classes[4]
		switch {
		case sawToken != "Bearer tok":
			t.Errorf("Authorization %q", sawToken)
		case lim.Status["429"] != 10 || lim.RetryAfter["429_with"] != 10 || lim.OK != 0:
			t.Errorf("limited %+v", lim)
		case busy.Status["503"] != 10 || busy.RetryAfter["503_without"] != 10:
			t.Errorf("busy %+v", busy)
		case down.ConnErrors != 10 || down.Completed != 0 || !strings.Contains(down.LastError, "refused"):
			t.Errorf("down %+v", down)
		case slow.Timeouts != 10 || slow.ConnErrors != 0:
			t.Errorf("slow %+v", slow)
		case fine.OK != 30 || fine.ShareOK != 1:
			t.Errorf("fine %+v", fine)
		case s.All.Sent != 70 || s.All.Completed != 50 || s.All.ConnErrors != 10 || s.All.Timeouts != 10 ||
			s.All.Status["429"] != 10 || s.All.RetryAfter["429_with"] != 10 || s.All.OK != 30:
			t.Errorf("all %+v", s.All)
		}
	})
}

// The warm-up is reported apart; windows count from its end; shares split
// the 2xx between classes.
func TestWarmupWindowsAndShares(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		slowLater := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			d := 10 * time.Millisecond
			if time.Since(start) >= time.Second {
				d = 30 * time.Millisecond
			}
			delayHandler(d).ServeHTTP(w, r)
		})
		cfg := mustParse(t, "-warmup", "500ms", "-d", "1s", "-window", "500ms",
			"-class", "name=A,rate=300,url="+u, "-class", "name=B,rate=100,url="+u)
		s := runSummary(t, cfg, handlerRT{slowLater}, handlerRT{slowLater})
		a, b := s.Classes[0], s.Classes[1]
		if a.Warmup != (warmStats{Sent: 150, Completed: 150, OK: 150}) || a.Sent != 300 || b.Sent != 100 {
			t.Fatalf("A %+v, B %+v", a, b)
		}
		if a.ShareOK != 0.75 || b.ShareOK != 0.25 || s.All.OK != 400 || s.WarmupS != 0.5 {
			t.Fatalf("shares %v %v, all %+v", a.ShareOK, b.ShareOK, s.All)
		}
		w := s.All.Windows
		if len(w) != 2 || w[0].Latency.P99 != 10 || w[1].Latency.P99 != 30 || w[0].Sent != 200 {
			t.Fatalf("windows %+v", w)
		}
	})
}

// Closed loop: N workers back to back; capacity = N / latency.
func TestClosedLoop(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := mustParse(t, "-closed", "4", "-d", "1s", "-class", "name=A,url="+u)
		s := runSummary(t, cfg, handlerRT{delayHandler(10 * time.Millisecond)})
		a := s.Classes[0]
		if s.Mode != "closed" || a.Concurrency != 4 || a.Sent != 400 || a.OK != 400 || a.OKPerS != 400 ||
			a.Latency.Max != 10 {
			t.Fatalf("summary %+v", a)
		}
	})
}

// A signal (ctx ending) stops the run early; cancelled requests are not
// counted as errors.
func TestCancelStopsEarly(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithTimeout(t.Context(), 255*time.Millisecond)
		defer cancel()
		cfg := mustParse(t, "-class", "name=A,rate=100,url="+u, "-d", "10s")
		var out bytes.Buffer
		start := time.Now()
		err := run(ctx, cfg, []http.RoundTripper{handlerRT{delayHandler(time.Second)}}, &out, io.Discard)
		if !errors.Is(err, errNoAnswer) || time.Since(start) != 255*time.Millisecond {
			t.Fatalf("run = %v after %v", err, time.Since(start))
		}
		var s Summary
		if err := json.Unmarshal(out.Bytes(), &s); err != nil || s.Classes[0].Sent != 26 ||
			s.Classes[0].ConnErrors+s.Classes[0].Timeouts != 0 {
			t.Fatalf("summary %+v, %v", s, err)
		}
	})
}

// runTo writes the summary to the -o file.
func TestRunToFile(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "out.json")
		cfg := mustParse(t, "-class", "name=A,rate=10,url="+u, "-d", "1s", "-o", path)
		if err := runTo(t.Context(), cfg, []http.RoundTripper{handlerRT{delayHandler(0)}}, io.Discard); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(path)
		var s Summary
		if err != nil || json.Unmarshal(b, &s) != nil || s.Classes[0].OK != 10 {
			t.Fatalf("file %q, %v", b, err)
		}
		cfg.out = filepath.Join(path, "not-a-dir", "x.json")
		if err := runTo(t.Context(), cfg, []http.RoundTripper{failRT{}}, io.Discard); err == nil {
			t.Fatal("runTo into a missing directory = nil error")
		}
	})
}

// Over a real listener, the request reaches the server with its method
// and token (no timing asserted: one request, then the run ends).
func TestOverHTTP(t *testing.T) {
	got := make(chan string, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case got <- r.Method + " " + r.URL.Path + " " + r.Header.Get("Authorization"):
		default:
		}
	}))
	defer srv.Close()
	tr := newTransport(4)
	defer tr.CloseIdleConnections()
	cfg := mustParse(t, "-class", "name=A,rate=0.001,method=HEAD,token=t1,url="+srv.URL+"/o/x", "-d", "1ms")
	s := runSummary(t, cfg, tr)
	if s.Classes[0].Status["200"] != 1 || <-got != "HEAD /o/x Bearer t1" {
		t.Fatalf("summary %+v", s.Classes[0])
	}
}
