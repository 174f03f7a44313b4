package upstream

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/httpx/auth"
	"github.com/ronhq/ron/httpx/client"
)

// recorder is the client's ResponseWriter in Serve tests: it records the
// status, the header sent with it, the body, flushes and write deadlines;
// its writes can fail or take time (synctest time).
type recorder struct {
	header    http.Header
	status    int
	sent      http.Header
	body      bytes.Buffer
	flushes   int
	deadlines []time.Time
	werr      error
	writeTime time.Duration
}

func (r *recorder) Header() http.Header {
	if r.header == nil {
		r.header = http.Header{}
	}
	return r.header
}

func (r *recorder) WriteHeader(status int) {
	if r.status == 0 {
		r.status, r.sent = status, r.Header().Clone()
	}
}

func (r *recorder) Write(p []byte) (int, error) {
	r.WriteHeader(http.StatusOK)
	time.Sleep(r.writeTime)
	if r.werr != nil {
		return 0, r.werr
	}
	return r.body.Write(p)
}

func (r *recorder) Flush() { r.flushes++ }

func (r *recorder) SetWriteDeadline(t time.Time) error {
	r.deadlines = append(r.deadlines, t)
	return nil
}

// served is what one Serve call returned and wrote.
type served struct {
	ok      bool
	status  int
	err     error
	commits []int // statuses commit was called with
	rec     *recorder
}

// serveCall runs l.Serve for c; keep (nil: all) decides per status, and
// accepted headers are copied to the recorder as the gateway does.
func serveCall(ctx context.Context, l *Link, c Call, keep func(int) bool, rec *recorder) served {
	if rec == nil {
		rec = &recorder{}
	}
	s := served{rec: rec}
	s.ok, s.status, s.err = l.Serve(ctx, c, rec, func(status int, h http.Header) bool {
		s.commits = append(s.commits, status)
		if keep != nil && !keep(status) {
			return false
		}
		for k, v := range h {
			rec.Header()[k] = v
		}
		return true
	})
	return s
}

// TestServeMatchesDo: Serve writes what Do returns (status, headers,
// body) on both wirings, in-process reads being served directly.
func TestServeMatchesDo(t *testing.T) {
	calls := map[string]func() Call{
		"GET 200":          func() Call { return Call{Method: "GET", Path: "/ok"} },
		"HEAD":             func() Call { return Call{Method: "HEAD", Path: "/ok"} },
		"206":              func() Call { return Call{Method: "GET", Path: "/range"} },
		"304":              func() Call { return Call{Method: "GET", Path: "/cached"} },
		"404 envelope":     func() Call { return Call{Method: "GET", Path: "/missing"} },
		"429 envelope":     func() Call { return Call{Method: "GET", Path: "/busy"} },
		"500 envelope":     func() Call { return Call{Method: "GET", Path: "/broken"} },
		"POST with a body": func() Call { return Call{Method: "POST", Path: "/o", Body: strings.NewReader("abc"), ContentLength: 3} },
		"PUT 413": func() Call {
			return Call{Method: "PUT", Path: "/names/a", Body: strings.NewReader("{}"), ContentLength: 2}
		},
	}
	keys := append(slices.Clone(passHeaders), "Content-Length")
	for _, w := range wirings {
		l := w.link(t, passThroughHandler(), Options{})
		for name, call := range calls {
			t.Run(w.name+"/"+name, func(t *testing.T) {
				resp, err := l.Do(context.Background(), call())
				if err != nil {
					t.Fatalf("Do: %v", err)
				}
				want := seen{status: resp.StatusCode, headers: pick(resp.Header, keys), body: body(t, resp)}
				s := serveCall(context.Background(), l, call(), nil, nil)
				if !s.ok || s.err != nil || s.status != want.status || len(s.commits) != 1 {
					t.Fatalf("Serve: served %v status %d err %v commits %v; want status %d", s.ok, s.status, s.err, s.commits, want.status)
				}
				got := seen{status: s.rec.status, headers: pick(s.rec.sent, keys), body: s.rec.body.String()}
				if got.status != want.status || got.body != want.body || !sameHeaders(got.headers, want.headers) {
					t.Fatalf("Serve wrote %+v\nDo returned %+v", got, want)
				}
			})
		}
	}
}

func pick(h http.Header, keys []string) map[string][]string {
	out := map[string][]string{}
	for _, k := range keys {
		if v := h.Values(k); len(v) > 0 {
			out[k] = v
		}
	}
	return out
}

// TestServeRetries: retries are decided when the upstream commits its
// headers; a discarded answer never reaches commit; the final one does.
func TestServeRetries(t *testing.T) {
	cases := []struct {
		name     string
		acts     []int
		header   http.Header
		method   string
		deadline time.Duration
		policy   Policy
		status   int    // final status, 0 when an error is expected
		errCode  string // expected *httpx.Error code
		attempts int
		elapsed  time.Duration
		timeouts float64
	}{
		{name: "503 twice then 200", acts: []int{503, 503, 200}, method: "GET", status: 200, attempts: 3, elapsed: 150 * time.Millisecond},
		{name: "HEAD retried", acts: []int{502, 200}, method: "HEAD", status: 200, attempts: 2, elapsed: 50 * time.Millisecond},
		{name: "attempts spent: last 504 served", acts: []int{504}, method: "GET", status: 504, attempts: 3, elapsed: 150 * time.Millisecond},
		{name: "Retry-After replaces a shorter pause", acts: []int{503, 200}, header: http.Header{"Retry-After": {"1"}},
			method: "GET", status: 200, attempts: 2, elapsed: time.Second},
		{name: "Retry-After past the deadline", acts: []int{503, 200}, header: http.Header{"Retry-After": {"10"}},
			method: "GET", status: 503, attempts: 1},
		{name: "pause does not fit the deadline", acts: []int{503, 200}, deadline: 40 * time.Millisecond,
			method: "GET", status: 503, attempts: 1},
		{name: "500 not retried", acts: []int{500, 200}, method: "GET", status: 500, attempts: 1},
		{name: "DELETE not retried", acts: []int{503, 200}, method: "DELETE", status: 503, attempts: 1},
		{name: "broken connection retried then 502", acts: []int{actPanic}, method: "GET", errCode: httpx.CodeUpstreamUnavailable,
			attempts: 3, elapsed: 150 * time.Millisecond},
		{name: "broken connection then 200", acts: []int{actPanic, 200}, method: "GET", status: 200, attempts: 2, elapsed: 50 * time.Millisecond},
		{name: "attempt timeout retried", acts: []int{actHang, 200}, method: "GET", deadline: 20 * time.Second,
			policy: Policy{ForwardTimeout: time.Second}, status: 200, attempts: 2, elapsed: time.Second + 50*time.Millisecond, timeouts: 1},
	}
	for _, w := range wirings {
		for _, tc := range cases {
			t.Run(w.name+"/"+tc.name, func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					s := &script{acts: tc.acts, header: tc.header}
					l := w.link(t, s, Options{Policy: tc.policy})
					var attempts int
					c := Call{Method: tc.method, Path: "/o/x", Attempts: &attempts}
					if tc.deadline > 0 {
						c.Deadline = time.Now().Add(tc.deadline)
					}
					start := time.Now()
					got := serveCall(context.Background(), l, c, nil, nil)
					elapsed := time.Since(start)
					checkServed(t, got, tc.method, tc.status, tc.errCode)
					if attempts != tc.attempts || s.count() != tc.attempts || elapsed != tc.elapsed {
						t.Fatalf("attempts %d (handler %d), elapsed %v; want %d, %v", attempts, s.count(), elapsed, tc.attempts, tc.elapsed)
					}
					if got := metric(l, `ron_backoff_retries_total{role="gateway",op="forward"}`); got != float64(tc.attempts-1) {
						t.Fatalf("retries metric %v", got)
					}
					if got := metric(l, timeoutsSeries); got != tc.timeouts {
						t.Fatalf("timeouts metric %v, want %v", got, tc.timeouts)
					}
				})
			})
		}
	}
}

// checkServed checks a served answer (commit called once, status and the
// script's body written) or an *httpx.Error code with nothing written.
func checkServed(t *testing.T, s served, method string, status int, code string) {
	t.Helper()
	if code != "" {
		if he := httpx.AsError(s.err); s.ok || s.err == nil || he.Code != code || len(s.commits) != 0 || s.rec.status != 0 {
			t.Fatalf("served %v, err %v, commits %v, written %d; want error %s", s.ok, s.err, s.commits, s.rec.status, code)
		}
		return
	}
	if !s.ok || s.err != nil || s.status != status || !slices.Equal(s.commits, []int{status}) || s.rec.status != status {
		t.Fatalf("served %v status %d err %v commits %v written %d; want %d", s.ok, s.status, s.err, s.commits, s.rec.status, status)
	}
	want := http.StatusText(status)
	if method == http.MethodHead {
		want = ""
	}
	if s.rec.body.String() != want {
		t.Fatalf("body %q, want %q", s.rec.body.String(), want)
	}
}

// TestServeDecline: a declined answer is reported, nothing is written.
func TestServeDecline(t *testing.T) {
	for _, w := range wirings {
		for _, tc := range []struct {
			name     string
			acts     []int
			status   int
			attempts int
		}{
			{"404", []int{404}, 404, 1},
			{"503 after the retries", []int{503}, 503, 3},
		} {
			t.Run(w.name+"/"+tc.name, func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					s := &script{acts: tc.acts}
					l := w.link(t, s, Options{})
					keep := func(status int) bool { return status < 400 }
					got := serveCall(context.Background(), l, Call{Method: "GET", Path: "/o/x"}, keep, nil)
					if got.ok || got.err != nil || got.status != tc.status || !slices.Equal(got.commits, []int{tc.status}) {
						t.Fatalf("served %v status %d err %v commits %v", got.ok, got.status, got.err, got.commits)
					}
					if got.rec.status != 0 || got.rec.body.Len() != 0 || len(got.rec.header) != 0 || s.count() != tc.attempts {
						t.Fatalf("written %d %q %v; handler calls %d", got.rec.status, got.rec.body.String(), got.rec.header, s.count())
					}
				})
			})
		}
	}
}

func TestServeDeadline504(t *testing.T) {
	for _, w := range wirings {
		t.Run(w.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s := &script{acts: []int{actHang}}
				l := w.link(t, s, Options{})
				start := time.Now()
				got := serveCall(context.Background(), l, Call{Method: "GET", Path: "/o/x", Deadline: start.Add(time.Second)}, nil, nil)
				if he := httpx.AsError(got.err); got.ok || he.Status != http.StatusGatewayTimeout || time.Since(start) != time.Second {
					t.Fatalf("served %v err %v after %v", got.ok, got.err, time.Since(start))
				}
				if metric(l, timeoutsSeries) != 1 ||
					metric(l, `ron_gateway_upstream_requests_total{role="gateway",code="error",upstream="storage"}`) != 1 {
					t.Fatalf("metrics %v", l.met.m.Values())
				}
			})
		})
	}
}

func TestServeCallerCanceled(t *testing.T) {
	for _, w := range wirings {
		t.Run(w.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				l := w.link(t, &script{acts: []int{actHang}}, Options{})
				ctx, cancel := context.WithCancel(context.Background())
				time.AfterFunc(time.Second, cancel)
				got := serveCall(ctx, l, Call{Method: "GET", Path: "/o/x"}, nil, nil)
				if he := httpx.AsError(got.err); got.ok || he.Status != http.StatusServiceUnavailable || he.Code != httpx.CodeUpstreamUnavailable {
					t.Fatalf("served %v err %v", got.ok, got.err)
				}
				if l.BreakerState() != client.StateClosed || metric(l, timeoutsSeries) != 0 {
					t.Fatalf("breaker %s, timeouts %v", l.BreakerState(), metric(l, timeoutsSeries))
				}
			})
		})
	}
}

// TestServeBodyProgress: after the headers each piece of the body must
// follow within ForwardTimeout; time spent writing to the client does not
// count; streams have no limit and are flushed.
func TestServeBodyProgress(t *testing.T) {
	cases := []struct {
		name      string
		h         trickle
		stream    bool
		writeTime time.Duration
		body      string
		stalled   bool
		elapsed   time.Duration // 0: not checked
	}{
		{name: "steady body outlives the deadline", h: trickle{pieces: []string{"a", "b", "c"}, pause: 4 * time.Second},
			body: "abc", elapsed: 8 * time.Second},
		{name: "stalled body", h: trickle{pieces: []string{"a"}, hang: true}, body: "a", stalled: true, elapsed: 5 * time.Second},
		{name: "slow piece", h: trickle{pieces: []string{"a", "b"}, pause: 6 * time.Second}, body: "a", stalled: true},
		{name: "slow client does not count", h: trickle{pieces: []string{"a", "b", "c"}, pause: time.Second},
			writeTime: 6 * time.Second, body: "abc"},
		{name: "stream has no progress limit", h: trickle{pieces: []string{"a", "b"}, pause: time.Minute},
			stream: true, body: "ab", elapsed: time.Minute},
	}
	for _, w := range wirings {
		for _, tc := range cases {
			t.Run(w.name+"/"+tc.name, func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					l := w.link(t, tc.h, Options{})
					rec := &recorder{writeTime: tc.writeTime}
					start := time.Now()
					got := serveCall(context.Background(), l, Call{Method: "GET", Path: "/registry/stream", Stream: tc.stream}, nil, rec)
					if !got.ok || got.status != 200 || rec.body.String() != tc.body || errors.Is(got.err, ErrStalled) != tc.stalled ||
						(got.err != nil) != tc.stalled {
						t.Fatalf("served %v status %d body %q err %v; want %q stalled %v", got.ok, got.status, rec.body.String(), got.err, tc.body, tc.stalled)
					}
					if tc.elapsed != 0 && time.Since(start) != tc.elapsed {
						t.Fatalf("elapsed %v, want %v", time.Since(start), tc.elapsed)
					}
					want := 0.0
					if tc.stalled {
						want = 1
					}
					if metric(l, timeoutsSeries) != want {
						t.Fatalf("timeouts metric %v, want %v", metric(l, timeoutsSeries), want)
					}
					if tc.stream && rec.flushes < len(tc.h.pieces) {
						t.Fatalf("%d flushes for %d pieces", rec.flushes, len(tc.h.pieces))
					}
				})
			})
		}
	}
}

// TestServeWriteDeadlines: every write to the client gets a write deadline
// of ForwardTimeout.
func TestServeWriteDeadlines(t *testing.T) {
	for _, w := range wirings {
		t.Run(w.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				l := w.link(t, trickle{pieces: []string{"a", "b"}, pause: time.Second}, Options{Policy: Policy{ForwardTimeout: 3 * time.Second}})
				start := time.Now()
				got := serveCall(context.Background(), l, Call{Method: "GET", Path: "/x"}, nil, nil)
				want := []time.Time{start.Add(3 * time.Second), start.Add(4 * time.Second)}
				if !got.ok || got.err != nil || !slices.Equal(got.rec.deadlines, want) {
					t.Fatalf("served %v err %v deadlines %v, want %v", got.ok, got.err, got.rec.deadlines, want)
				}
			})
		})
	}
}

// TestServeClientWriteFails: a failed write to the client ends the call
// with that error after the status was sent.
func TestServeClientWriteFails(t *testing.T) {
	gone := errors.New("client gone")
	for _, w := range wirings {
		t.Run(w.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				handlerErr := make(chan error, 1)
				h := http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
					_, err := io.WriteString(rw, "abc")
					rw.(http.Flusher).Flush()
					for i := 0; err == nil && i < 100; i++ {
						_, err = io.WriteString(rw, strings.Repeat("x", 4096))
						rw.(http.Flusher).Flush()
					}
					handlerErr <- err
				})
				l := w.link(t, h, Options{})
				got := serveCall(context.Background(), l, Call{Method: "GET", Path: "/x"}, nil, &recorder{werr: gone})
				if !got.ok || got.status != 200 || !errors.Is(got.err, gone) {
					t.Fatalf("served %v status %d err %v", got.ok, got.status, got.err)
				}
				if w.name == "inproc" {
					if err := <-handlerErr; !errors.Is(err, gone) {
						t.Fatalf("handler write error %v", err)
					}
				}
			})
		})
	}
}

// TestServeUpstreamBreaksOff: a body cut short after the headers ends the
// call with an error wrapping io.ErrUnexpectedEOF.
func TestServeUpstreamBreaksOff(t *testing.T) {
	for _, w := range wirings {
		t.Run(w.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
					rw.Header().Set("Content-Length", "100")
					_, _ = io.WriteString(rw, "partial")
					rw.(http.Flusher).Flush()
					panic(http.ErrAbortHandler)
				})
				l := w.link(t, h, Options{})
				got := serveCall(context.Background(), l, Call{Method: "GET", Path: "/x"}, nil, nil)
				if !got.ok || got.status != 200 || !errors.Is(got.err, io.ErrUnexpectedEOF) || got.rec.body.String() != "partial" {
					t.Fatalf("served %v status %d err %v body %q", got.ok, got.status, got.err, got.rec.body.String())
				}
			})
		})
	}
}

// TestServeLinkHeaders: the handler sees the link headers and, in-process,
// the link principal, as with Do; the caller's header is left alone.
func TestServeLinkHeaders(t *testing.T) {
	for _, w := range wirings {
		t.Run(w.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var gotH http.Header
				var gotClaims *auth.Claims
				var gotURI, gotHost string
				h := http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
					gotH, gotClaims, gotURI, gotHost = r.Header.Clone(), auth.ClaimsFromContext(r.Context()), r.RequestURI, r.Host
				})
				principal := LinkPrincipal(false)
				l := w.link(t, h, Options{Principal: principal, Token: func(context.Context) (string, error) { return "linktok", nil }})
				in := http.Header{"X-Corr-Id": {"c-1"}, "Authorization": {"Bearer client"}, "X-Ron-Tenant": {"evil"}}
				got := serveCall(context.Background(), l, Call{Method: "GET", Path: "/o/b3%3Aab", RawQuery: "x=1", Header: in,
					Tenant: "acme", ClientIP: "203.0.113.7", Proto: "https", Host: "gw.example",
					Deadline: time.Now().Add(1500 * time.Millisecond)}, nil, nil)
				if !got.ok || got.err != nil {
					t.Fatalf("served %v err %v", got.ok, got.err)
				}
				want := map[string]string{"X-Corr-Id": "c-1", "X-Ron-Tenant": "acme", "X-Forwarded-For": "203.0.113.7",
					"X-Forwarded-Proto": "https", "X-Forwarded-Host": "gw.example", "Request-Timeout": "1.500"}
				for k, v := range want {
					if vs := gotH.Values(k); len(vs) != 1 || vs[0] != v {
						t.Errorf("%s = %q, want %q", k, vs, v)
					}
				}
				if gotURI != "/o/b3%3Aab?x=1" || gotH.Get("X-Forwarded-Prefix") != "" {
					t.Errorf("request URI %q, prefix %q", gotURI, gotH.Get("X-Forwarded-Prefix"))
				}
				if w.name == "inproc" && (gotH.Get("Authorization") != "" || gotClaims != principal || gotHost != "storage.inproc") {
					t.Errorf("in-process: Authorization %q, claims %v, host %q", gotH.Get("Authorization"), gotClaims, gotHost)
				}
				if w.name == "http" && (gotH.Get("Authorization") != "Bearer linktok" || gotClaims != nil) {
					t.Errorf("HTTP: Authorization %q, claims %v", gotH.Get("Authorization"), gotClaims)
				}
				if in.Get("X-Ron-Tenant") != "evil" || in.Get("Authorization") != "Bearer client" {
					t.Error("Serve modified the caller's header")
				}
			})
		})
	}
}

// TestServeBreakerOpens: failures answered through Serve trip the breaker,
// which then refuses without calling the upstream.
func TestServeBreakerOpens(t *testing.T) {
	for _, w := range wirings {
		t.Run(w.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s := &script{acts: []int{500}}
				l := w.link(t, s, Options{})
				for range 5 {
					if got := serveCall(context.Background(), l, Call{Method: "GET", Path: "/o/x"}, nil, nil); !got.ok || got.status != 500 {
						t.Fatalf("served %v status %d err %v", got.ok, got.status, got.err)
					}
				}
				got := serveCall(context.Background(), l, Call{Method: "GET", Path: "/o/x"}, nil, nil)
				he := httpx.AsError(got.err)
				if got.ok || he.Status != http.StatusServiceUnavailable || he.RetryAfter < 1 || s.count() != 5 || l.BreakerState() != client.StateOpen {
					t.Fatalf("served %v err %v (retry %d), calls %d, breaker %s", got.ok, got.err, he.RetryAfter, s.count(), l.BreakerState())
				}
			})
		})
	}
}
