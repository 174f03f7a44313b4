package httpx

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/VictoriaMetrics/metrics"
	"github.com/andybalholm/brotli"
	"github.com/labstack/echo/v4"
	"github.com/rs/zerolog"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// newTestServer builds a server with a few routes exercising the chain.
func newTestServer(lim Limits) (*Server, *metrics.Set) {
	set := metrics.NewSet()
	s := NewServer(ServerOptions{Role: "test", Addr: "127.0.0.1:0", Log: zerolog.Nop(), Metrics: set, Limits: lim,
		Streaming: func(_, route string) bool { return route == "/stream" },
		LongLived: func(_, route string) bool { return route == "/events" }})
	e := s.Echo()
	e.GET("/o/:b3", func(c echo.Context) error { return c.String(http.StatusOK, c.Param("b3")) })
	e.GET("/panic", func(echo.Context) error { panic("boom") })
	e.GET("/healthz", func(c echo.Context) error { return c.NoContent(http.StatusOK) })
	e.GET("/events", func(c echo.Context) error { <-c.Request().Context().Done(); return nil })
	e.POST("/json", func(c echo.Context) error {
		body, err := ReadBody(c.Request())
		if err != nil {
			return err
		}
		var v map[string]any
		if err := DecodeStrictJSON(body, &v); err != nil {
			return err
		}
		return c.JSON(http.StatusOK, v)
	})
	e.POST("/stream", func(c echo.Context) error {
		n, err := io.Copy(io.Discard, c.Request().Body)
		if err != nil {
			return err
		}
		return c.JSON(http.StatusOK, map[string]int64{"n": n})
	})
	e.GET("/wait", func(c echo.Context) error {
		<-c.Request().Context().Done()
		return c.Request().Context().Err()
	})
	return s, set
}

func do(s *Server, req *http.Request) *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	s.Echo().ServeHTTP(rec, req)
	return rec
}

func envelope(t *testing.T, rec *httptest.ResponseRecorder) Error {
	t.Helper()
	var env Envelope
	if err := json.Unmarshal(rec.Body.Bytes(), &env); err != nil || env.Error == nil {
		t.Fatalf("not an error envelope (%d): %q", rec.Code, rec.Body.String())
	}
	return *env.Error
}

func TestCorrID(t *testing.T) {
	s, _ := newTestServer(Limits{})
	req := httptest.NewRequest(http.MethodGet, "/o/x", nil)
	req.Header.Set(HeaderCorrID, "client-id-1")
	if got := do(s, req).Header().Get(HeaderCorrID); got != "client-id-1" {
		t.Errorf("well-formed corr id not echoed: %q", got)
	}
	req.Header.Set(HeaderCorrID, "bad id with spaces")
	if got := do(s, req).Header().Get(HeaderCorrID); len(got) != 26 {
		t.Errorf("malformed corr id should be replaced by a ULID, got %q", got)
	}
}

func TestErrorsLeaveAsEnvelope(t *testing.T) {
	s, _ := newTestServer(Limits{})
	cases := []struct {
		method, path string
		status       int
		code         string
	}{
		{http.MethodGet, "/panic", 500, CodeInternal},
		{http.MethodGet, "/nope", 404, CodeNotFound},
		{http.MethodPost, "/o/x", 405, CodeMethodNotAllowed},
	}
	for _, c := range cases {
		rec := do(s, httptest.NewRequest(c.method, c.path, nil))
		e := envelope(t, rec)
		if rec.Code != c.status || e.Code != c.code || e.CorrID != rec.Header().Get(HeaderCorrID) || e.CorrID == "" {
			t.Errorf("%s %s: %d %+v", c.method, c.path, rec.Code, e)
		}
	}
	if rec := do(s, httptest.NewRequest(http.MethodPost, "/o/x", nil)); !strings.Contains(rec.Header().Get("Allow"), "GET") {
		t.Errorf("405 without Allow: %v", rec.Header())
	}
}

func TestRouteTemplatesInMetrics(t *testing.T) {
	s, set := newTestServer(Limits{})
	do(s, httptest.NewRequest(http.MethodGet, "/o/b3:abc", nil))
	do(s, httptest.NewRequest(http.MethodGet, "/no/such/path", nil))
	var buf bytes.Buffer
	set.WritePrometheus(&buf)
	out := buf.String()
	for _, want := range []string{`ron_http_requests_total{role="test",route="/o/{b3}",code="200"} 1`,
		`ron_http_requests_total{role="test",route="unmatched",code="404"} 1`,
		`ron_http_request_duration_seconds_bucket{role="test",route="/o/{b3}"`} {
		if !strings.Contains(out, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
	if strings.Contains(out, "b3:abc") || strings.Contains(out, "/no/such") {
		t.Error("raw paths leaked into metric labels")
	}
}

func TestInflightCap(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, set := newTestServer(Limits{MaxInflight: 1})
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan int)
		go func() {
			done <- do(s, httptest.NewRequest(http.MethodGet, "/wait", nil).WithContext(ctx)).Code
		}()
		synctest.Wait()
		rec := do(s, httptest.NewRequest(http.MethodGet, "/o/x", nil))
		if rec.Code != 429 || envelope(t, rec).Code != CodeBusy || rec.Header().Get("Retry-After") != "1" {
			t.Fatalf("second request: %d %s", rec.Code, rec.Body)
		}
		// A long-lived stream neither counts nor is refused.
		sctx, scancel := context.WithCancel(context.Background())
		streamDone := make(chan int)
		go func() {
			streamDone <- do(s, httptest.NewRequest(http.MethodGet, "/events", nil).WithContext(sctx)).Code
		}()
		synctest.Wait()
		select {
		case code := <-streamDone:
			t.Fatalf("long-lived route refused under the in-flight cap: %d", code)
		default:
		}
		scancel()
		if code := <-streamDone; code != 200 {
			t.Fatalf("stream ended with %d", code)
		}
		if rec := do(s, httptest.NewRequest(http.MethodGet, "/healthz", nil)); rec.Code != 200 {
			t.Fatalf("ops paths must bypass admission: %d", rec.Code)
		}
		cancel()
		<-done
		var buf bytes.Buffer
		set.WritePrometheus(&buf)
		if !strings.Contains(buf.String(), `ron_busy_rejections_total{role="test",endpoint="/o/{b3}"} 1`) {
			t.Errorf("busy rejection not counted:\n%s", buf.String())
		}
	})
}

func TestRateLimit(t *testing.T) {
	s, _ := newTestServer(Limits{RPS: 2})
	codes := map[int]int{}
	for range 5 {
		codes[do(s, httptest.NewRequest(http.MethodGet, "/o/x", nil)).Code]++
	}
	if codes[200] != 2 || codes[429] != 3 {
		t.Fatalf("codes %v", codes)
	}
	rec := do(s, httptest.NewRequest(http.MethodGet, "/o/x", nil))
	if envelope(t, rec).Code != CodeRateLimited {
		t.Fatal("want rate_limited")
	}
	s.SetLimits(Limits{})
	if rec := do(s, httptest.NewRequest(http.MethodGet, "/o/x", nil)); rec.Code != 200 {
		t.Fatalf("limit not lifted by SetLimits: %d", rec.Code)
	}
}

func TestBodyCap(t *testing.T) {
	s, _ := newTestServer(Limits{})
	big := strings.Repeat(" ", JSONBodyCap+1)
	rec := do(s, httptest.NewRequest(http.MethodPost, "/json", strings.NewReader(big)))
	if rec.Code != 413 || envelope(t, rec).Code != CodePayloadTooLarge {
		t.Fatalf("declared length: %d %s", rec.Code, rec.Body)
	}
	req := httptest.NewRequest(http.MethodPost, "/json", io.MultiReader(strings.NewReader(big)))
	req.ContentLength = -1
	if rec := do(s, req); rec.Code != 413 {
		t.Fatalf("chunked body past the cap: %d", rec.Code)
	}
	req = httptest.NewRequest(http.MethodPost, "/stream", strings.NewReader(big))
	if rec := do(s, req); rec.Code != 200 {
		t.Fatalf("streaming routes are not capped here: %d", rec.Code)
	}
}

func gzipped(b []byte) []byte {
	var buf bytes.Buffer
	w := gzip.NewWriter(&buf)
	_, _ = w.Write(b)
	_ = w.Close()
	return buf.Bytes()
}

func brotlied(b []byte) []byte {
	var buf bytes.Buffer
	w := brotli.NewWriter(&buf)
	_, _ = w.Write(b)
	_ = w.Close()
	return buf.Bytes()
}

func TestDecodeGuard(t *testing.T) {
	s, _ := newTestServer(Limits{})
	small := []byte(`{"a":"` + strings.Repeat("xyz", 10) + `"}`)
	bomb := append(append([]byte(`{"a":"`), bytes.Repeat([]byte{'0'}, 20<<20)...), `"}`...)
	ratioBomb := append(append([]byte(`{"a":"`), bytes.Repeat([]byte{'0'}, 2<<20)...), `"}`...)
	cases := []struct {
		name, enc string
		body      []byte
		status    int
		code      string
	}{
		{"gzip ok", "gzip", gzipped(small), 200, ""},
		{"br ok", "br", brotlied(small), 200, ""},
		{"identity", "identity", small, 200, ""},
		{"gzip absolute bomb", "gzip", gzipped(bomb), 413, CodeDecodedCap},
		{"br absolute bomb", "br", brotlied(bomb), 413, CodeDecodedCap},
		{"gzip ratio bomb", "gzip", gzipped(ratioBomb), 413, CodeDecodedCap},
		{"bad gzip", "gzip", []byte("not gzip"), 400, CodeMalformed},
		{"truncated gzip", "gzip", gzipped(small)[:20], 400, CodeMalformed},
		{"unknown encoding", "zstd", small, 415, CodeUnsupportedMedia},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			req := httptest.NewRequest(http.MethodPost, "/json", bytes.NewReader(c.body))
			req.Header.Set("Content-Encoding", c.enc)
			rec := do(s, req)
			if rec.Code != c.status {
				t.Fatalf("status %d, want %d: %s", rec.Code, c.status, rec.Body)
			}
			if c.code != "" && envelope(t, rec).Code != c.code {
				t.Fatalf("code %s, want %s", envelope(t, rec).Code, c.code)
			}
		})
	}
}

func FuzzGuardBody(f *testing.F) {
	f.Add("gzip", gzipped([]byte(`{"a":1}`)))
	f.Add("br", brotlied([]byte(`{"a":1}`)))
	f.Add("gzip", gzipped(bytes.Repeat([]byte{'a'}, 1<<16)))
	f.Add("br", []byte{0x1b, 0xff})
	f.Fuzz(func(t *testing.T, enc string, body []byte) {
		rc, err := GuardBody(enc, io.NopCloser(bytes.NewReader(body)))
		if err != nil {
			return
		}
		out, _ := io.ReadAll(io.LimitReader(rc, MaxDecodedBytes+1))
		if int64(len(out)) > MaxDecodedBytes {
			t.Fatalf("decoded %d bytes past the cap", len(out))
		}
		if !strings.EqualFold(strings.TrimSpace(enc), "identity") && strings.TrimSpace(enc) != "" && int64(len(out)) > MaxDecodeRatio*int64(max(len(body), 1)) {
			t.Fatalf("decoded %d bytes from %d: ratio cap broken", len(out), len(body))
		}
	})
}

func TestHandlerDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, _ := newTestServer(Limits{})
		req := httptest.NewRequest(http.MethodGet, "/wait", nil)
		req.Header.Set("Request-Timeout", "2")
		start := time.Now()
		rec := do(s, req)
		if rec.Code != 504 || envelope(t, rec).Code != CodeTimeout {
			t.Fatalf("status %d %s", rec.Code, rec.Body)
		}
		if d := time.Since(start); d != 2*time.Second {
			t.Fatalf("deadline after %s, want 2s", d)
		}
		start = time.Now()
		do(s, httptest.NewRequest(http.MethodGet, "/wait", nil))
		if d := time.Since(start); d != 30*time.Second {
			t.Fatalf("default handler deadline %s, want 30s", d)
		}
	})
}

func TestRequestTimeoutParsing(t *testing.T) {
	cases := map[string]time.Duration{"2": 2 * time.Second, "1.5": 1500 * time.Millisecond, "250ms": 250 * time.Millisecond, "0.001": time.Millisecond, "1ms": time.Millisecond}
	for in, want := range cases {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.Header.Set("Request-Timeout", in)
		if got, ok := RequestTimeout(r); !ok || got != want {
			t.Errorf("%q → %s %v", in, got, ok)
		}
	}
	for _, in := range []string{"", "-1", "0", "soon", "1e9", "8e-19", "0.0009", "999us", "1ns", "-5ms"} {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.Header.Set("Request-Timeout", in)
		if _, ok := RequestTimeout(r); ok {
			t.Errorf("%q accepted", in)
		}
	}
}

// TestConnCapAndShutdown runs a real listener: the second connection from
// one IP over the cap gets 429, and Shutdown stops the server.
func TestConnCapAndShutdown(t *testing.T) {
	s, _ := newTestServer(Limits{MaxConnsPerIP: 1})
	if err := s.Listen(); err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- s.Serve() }()
	c1 := dialGet(t, s.Addr())
	defer c1.Close()
	if got := statusOf(t, c1); got != 200 {
		t.Fatalf("first connection: %d", got)
	}
	c2 := dialGet(t, s.Addr())
	defer c2.Close()
	if got := statusOf(t, c2); got != 429 {
		t.Fatalf("second connection: %d", got)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	s.Shutdown(ctx)
	if err := <-served; err != nil {
		t.Fatal(err)
	}
	if !s.Draining() {
		t.Fatal("Shutdown must mark the server draining")
	}
}

func dialGet(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func statusOf(t *testing.T, c net.Conn) int {
	t.Helper()
	if _, err := io.WriteString(c, "GET /o/x HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	buf := make([]byte, 12)
	if _, err := io.ReadFull(c, buf); err != nil {
		t.Fatal(err)
	}
	code, err := strconv.Atoi(string(buf[9:12]))
	if err != nil {
		t.Fatalf("bad status line %q", buf)
	}
	return code
}

func FuzzRequestTimeout(f *testing.F) {
	for _, s := range []string{"2", "1.5", "250ms", "", "-1", "0", "soon", "1e9", "NaN", "Inf", "86399.999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.Header.Set("Request-Timeout", v)
		if d, ok := RequestTimeout(r); ok && d < MinRequestTimeout {
			t.Fatalf("%q accepted as %s, below the %s floor", v, d, MinRequestTimeout)
		}
	})
}

func FuzzDecodeStrictJSON(f *testing.F) {
	for _, s := range []string{`{"ids":["a"]}`, `{"ids":[]} x`, `{"ids":1}`, `{"other":1}`, `[]`, ``, `{"ids":["a"],"ids":["b"]}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var v struct {
			IDs []string `json:"ids"`
		}
		err := DecodeStrictJSON(body, &v)
		if err != nil && AsError(err).Code != CodeMalformed {
			t.Fatalf("error %v is not malformed", err)
		}
	})
}

// TestRunEndsWithCtxOrFailure: Run returns nil when ctx ends (the listener
// keeps serving until Shutdown) and the serve error when serving fails.
func TestRunEndsWithCtxOrFailure(t *testing.T) {
	s, _ := newTestServer(Limits{})
	if err := s.Listen(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := s.Run(ctx); err != nil {
		t.Fatalf("Run after ctx ended: %v", err)
	}
	c := dialGet(t, s.Addr())
	if got := statusOf(t, c); got != 200 {
		t.Fatalf("listener must serve until Shutdown: %d", got)
	}
	c.Close()
	sctx, scancel := context.WithTimeout(context.Background(), time.Second)
	defer scancel()
	s.Shutdown(sctx)

	f, _ := newTestServer(Limits{})
	if err := f.Listen(); err != nil {
		t.Fatal(err)
	}
	_ = f.ln.Close() // serving fails at once
	if err := f.Run(context.Background()); err == nil {
		t.Fatal("Run hid a serve failure")
	}
}

// TestConnCapExempt: an exempt address (a trusted proxy) may open more
// connections than max_conns_per_ip; refusals of others call OnConnCap.
func TestConnCapExempt(t *testing.T) {
	for _, exempt := range []bool{true, false} {
		refused := 0
		s := NewServer(ServerOptions{Role: "test", Addr: "127.0.0.1:0", Log: zerolog.Nop(), Limits: Limits{MaxConnsPerIP: 1},
			ConnCapExempt: func(ip string) bool { return exempt && ip == "127.0.0.1" }, OnConnCap: func() { refused++ }})
		s.Echo().GET("/o/:b3", func(c echo.Context) error { return c.NoContent(http.StatusOK) })
		if err := s.Listen(); err != nil {
			t.Fatal(err)
		}
		served := make(chan error, 1)
		go func() { served <- s.Serve() }()
		c1 := dialGet(t, s.Addr())
		a := statusOf(t, c1)
		c2 := dialGet(t, s.Addr())
		want := map[bool]int{true: 200, false: 429}[exempt]
		if b := statusOf(t, c2); a != 200 || b != want {
			t.Errorf("exempt=%v: statuses %d, %d; want 200, %d", exempt, a, b, want)
		}
		if wantRefused := map[bool]int{true: 0, false: 1}[exempt]; refused != wantRefused {
			t.Errorf("exempt=%v: OnConnCap called %d times, want %d", exempt, refused, wantRefused)
		}
		c1.Close()
		c2.Close()
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		s.Shutdown(ctx)
		cancel()
		if err := <-served; err != nil {
			t.Fatal(err)
		}
	}
}
