package inproc_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/ronhq/ron/httpx/inproc"
)

// sink records what Serve delivers: the committed head (copied during
// Commit, as the contract requires) and the body.
type sink struct {
	commits int
	status  int
	header  http.Header
	body    bytes.Buffer
	werr    error // returned by every Write when set
}

func (s *sink) Commit(status int, h http.Header) {
	s.commits++
	s.status, s.header = status, h.Clone()
}

func (s *sink) Write(p []byte) (int, error) {
	if s.werr != nil {
		return 0, s.werr
	}
	return s.body.Write(p)
}

// outcome is what a caller observes of one answer, by either API.
type outcome struct {
	status int
	header http.Header
	body   string
	err    error // the RoundTrip error or body read error; Serve's error
}

// viaRoundTrip serves method url through h with RoundTrip.
func viaRoundTrip(t *testing.T, h http.Handler, method, url string, body io.Reader) outcome {
	t.Helper()
	resp, err := roundTrip(t, context.Background(), h, method, url, body)
	if err != nil {
		return outcome{err: err}
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return outcome{status: resp.StatusCode, header: resp.Header, body: string(b), err: err}
}

// viaServe serves method url through h with Serve.
func viaServe(t *testing.T, h http.Handler, method, url string, body io.Reader) (outcome, *sink) {
	t.Helper()
	req, err := http.NewRequest(method, url, body)
	if err != nil {
		t.Fatal(err)
	}
	s := &sink{}
	err = inproc.New(h).Serve(req, s)
	return outcome{status: s.status, header: s.header, body: s.body.String(), err: err}, s
}

// equalOutcome compares two outcomes; errors by their kind only.
func equalOutcome(a, b outcome) bool {
	if a.status != b.status || a.body != b.body || (a.err == nil) != (b.err == nil) {
		return false
	}
	if a.err != nil && errors.Is(a.err, inproc.ErrAborted) != errors.Is(b.err, inproc.ErrAborted) {
		return false
	}
	if len(a.header) != len(b.header) {
		return false
	}
	for k, v := range a.header {
		if strings.Join(v, "\x00") != strings.Join(b.header[k], "\x00") {
			return false
		}
	}
	return true
}

// TestServeMatchesRoundTrip: for every kind of answer, Serve delivers the
// same status, headers, body and ending as RoundTrip.
func TestServeMatchesRoundTrip(t *testing.T) {
	cases := []struct {
		name    string
		method  string
		handler http.HandlerFunc
	}{
		{"explicit status and headers", "GET", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/plain")
			w.Header().Add("Set-Cookie", "a=1")
			w.Header().Add("Set-Cookie", "b=2")
			w.Header().Set("Content-Length", "5")
			w.WriteHeader(http.StatusCreated)
			w.Header().Set("X-Late", "ignored")
			w.WriteHeader(http.StatusTeapot)
			_, _ = io.WriteString(w, "hello")
		}},
		{"implicit 200 sniffs html", "GET", func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, "<html>hi") }},
		{"empty return", "GET", func(w http.ResponseWriter, r *http.Request) {}},
		{"empty HEAD return", "HEAD", func(w http.ResponseWriter, r *http.Request) {}},
		{"HEAD discards writes", "HEAD", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Length", "4")
			_, _ = io.WriteString(w, "abcd")
		}},
		{"short body aborts", "GET", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Length", "10")
			_, _ = io.WriteString(w, "abc")
		}},
		{"304 without body", "GET", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Length", "7")
			w.WriteHeader(http.StatusNotModified)
			_, _ = io.WriteString(w, "nope")
		}},
		{"204", "DELETE", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) }},
		{"1xx dropped", "GET", func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusEarlyHints)
			w.Header().Set("Content-Type", "x/y")
			_, _ = io.WriteString(w, "x")
		}},
		{"flush commits", "GET", func(w http.ResponseWriter, r *http.Request) {
			w.(http.Flusher).Flush()
			_, _ = io.WriteString(w, "after")
		}},
		{"panic after body bytes", "GET", func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.WriteString(w, "partial")
			panic("boom")
		}},
		{"abort before headers", "GET", func(w http.ResponseWriter, r *http.Request) { panic(http.ErrAbortHandler) }},
		{"invalid status", "GET", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(42) }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			want := viaRoundTrip(t, tc.handler, tc.method, "http://x.inproc/p", nil)
			got, s := viaServe(t, tc.handler, tc.method, "http://x.inproc/p", nil)
			if !equalOutcome(got, want) {
				t.Fatalf("Serve %+v\nRoundTrip %+v", got, want)
			}
			if wantCommits := commitsOf(want); s.commits != wantCommits {
				t.Fatalf("%d commits, want %d", s.commits, wantCommits)
			}
		})
	}
}

// commitsOf is how many Commit calls an outcome implies: none when the
// handler failed before its headers.
func commitsOf(o outcome) int {
	if o.status == 0 {
		return 0
	}
	return 1
}

func TestServePanicBeforeHeadersWrapsValue(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { panic(http.ErrAbortHandler) })
	got, s := viaServe(t, h, "GET", "http://x.inproc/", nil)
	if !errors.Is(got.err, http.ErrAbortHandler) || s.commits != 0 {
		t.Fatalf("error %v, %d commits", got.err, s.commits)
	}
}

func TestServeOverrunAndSinkErrorsReachHandler(t *testing.T) {
	errs := make(chan error, 2)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "3")
		_, err := io.WriteString(w, "abc")
		errs <- err
		_, err = io.WriteString(w, "d")
		errs <- err
	})
	got, _ := viaServe(t, h, "GET", "http://x.inproc/", nil)
	if got.err != nil || got.body != "abc" {
		t.Fatalf("outcome %+v", got)
	}
	if err1, err2 := <-errs, <-errs; err1 != nil || !errors.Is(err2, http.ErrContentLength) {
		t.Fatalf("writes: %v, %v", err1, err2)
	}

	werr := errors.New("client gone")
	h = func(w http.ResponseWriter, r *http.Request) {
		_, err := io.WriteString(w, "x")
		errs <- err
	}
	req, _ := http.NewRequest("GET", "http://x.inproc/", nil)
	if err := inproc.New(h).Serve(req, &sink{werr: werr}); err != nil {
		t.Fatalf("Serve: %v", err)
	}
	if err := <-errs; !errors.Is(err, werr) {
		t.Fatalf("handler write error %v", err)
	}
}

// TestServeServerSideRequest: the handler sees the same server-side request
// as through RoundTrip, and runs in the caller's goroutine with its context.
func TestServeServerSideRequest(t *testing.T) {
	type seen struct {
		method, uri, host, remote, proto, path, rawPath, rawQuery, scheme, cl, body, te, ua string
		length                                                                              int64
		val                                                                                 any
	}
	type ctxKey struct{}
	var got seen
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got = seen{method: r.Method, uri: r.RequestURI, host: r.Host, remote: r.RemoteAddr, proto: r.Proto,
			path: r.URL.Path, rawPath: r.URL.RawPath, rawQuery: r.URL.RawQuery, scheme: r.URL.Scheme,
			cl: r.Header.Get("Content-Length"), body: string(b), te: strings.Join(r.TransferEncoding, ","),
			ua: r.Header.Get("User-Agent"), length: r.ContentLength, val: r.Context().Value(ctxKey{})}
	})
	ctx := context.WithValue(context.Background(), ctxKey{}, "v")
	base := seen{remote: inproc.RemoteAddr, proto: "HTTP/1.1", ua: "Go-http-client/1.1", val: "v"}
	with := func(f func(*seen)) seen { s := base; f(&s); return s }
	cases := []struct {
		name string
		req  func() *http.Request
		want seen
	}{
		{"absolute URL", func() *http.Request {
			r, _ := http.NewRequestWithContext(ctx, "GET", "http://storage.inproc/o/b3%3Aab?x=1", nil)
			return r
		}, with(func(s *seen) {
			s.method, s.uri, s.host, s.path, s.rawPath, s.rawQuery = "GET", "/o/b3%3Aab?x=1", "storage.inproc", "/o/b3:ab", "/o/b3%3Aab", "x=1"
		})},
		{"origin-form URL and Host", func() *http.Request {
			r, _ := http.NewRequestWithContext(ctx, "GET", "/names/a%2Fb?v=2", nil)
			r.Host = "index.inproc"
			return r
		}, with(func(s *seen) {
			s.method, s.uri, s.host, s.path, s.rawPath, s.rawQuery = "GET", "/names/a%2Fb?v=2", "index.inproc", "/names/a/b", "/names/a%2Fb", "v=2"
		})},
		{"fragment is dropped", func() *http.Request {
			r, _ := http.NewRequestWithContext(ctx, "GET", "http://x.inproc/a#frag", nil)
			return r
		}, with(func(s *seen) { s.method, s.uri, s.host, s.path = "GET", "/a", "x.inproc", "/a" })},
		{"put known length", func() *http.Request {
			r, _ := http.NewRequestWithContext(ctx, "PUT", "http://index.inproc/names/a", strings.NewReader(`{"a":1}`))
			return r
		}, with(func(s *seen) {
			s.method, s.uri, s.host, s.path, s.cl, s.body, s.length = "PUT", "/names/a", "index.inproc", "/names/a", "7", `{"a":1}`, 7
		})},
		{"post unknown length", func() *http.Request {
			r, _ := http.NewRequestWithContext(ctx, "POST", "http://storage.inproc/o", iotest.HalfReader(strings.NewReader("data")))
			return r
		}, with(func(s *seen) {
			s.method, s.uri, s.host, s.path, s.body, s.te, s.length = "POST", "/o", "storage.inproc", "/o", "data", "chunked", -1
		})},
		{"post empty", func() *http.Request {
			r, _ := http.NewRequestWithContext(ctx, "POST", "http://storage.inproc/o", nil)
			return r
		}, with(func(s *seen) { s.method, s.uri, s.host, s.path, s.cl = "POST", "/o", "storage.inproc", "/o", "0" })},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got = seen{}
			if err := inproc.New(h).Serve(tc.req(), &sink{}); err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Fatalf("handler saw %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func TestServeBadRequestURI(t *testing.T) {
	called := false
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { called = true })
	req := &http.Request{Method: "GET", URL: &url.URL{Opaque: "::bad"}}
	if err := inproc.New(h).Serve(req, &sink{}); err == nil || called {
		t.Fatalf("error %v, handler called %v", err, called)
	}
}

func TestServeClosesBodyAfterHandler(t *testing.T) {
	body := &closeCounter{Reader: strings.NewReader("abc"), closed: make(chan struct{})}
	closedEarly := false
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = r.Body.Close() // the handler's Close does not close the caller's body
		select {
		case <-body.closed:
			closedEarly = true
		default:
		}
		_, _ = io.Copy(w, r.Body)
	})
	got, _ := viaServe(t, h, "POST", "http://x.inproc/", body)
	if got.err != nil || got.body != "abc" || closedEarly {
		t.Fatalf("outcome %+v, closed early %v", got, closedEarly)
	}
	select {
	case <-body.closed:
	default:
		t.Fatal("caller's body not closed when Serve returned")
	}
}

// TestServeContextEnded: a context that ends while the handler runs makes
// its later writes fail and Serve report the context's error, never a
// clean end.
func TestServeContextEnded(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var lateErr error
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "early")
		cancel()
		_, lateErr = io.WriteString(w, "late")
	})
	req, _ := http.NewRequestWithContext(ctx, "GET", "http://x.inproc/", nil)
	s := &sink{}
	err := inproc.New(h).Serve(req, s)
	if !errors.Is(err, context.Canceled) || !errors.Is(lateErr, context.Canceled) || s.body.String() != "early" {
		t.Fatalf("Serve %v, late write %v, body %q", err, lateErr, s.body.String())
	}
}

func TestServeResponseControllerDeadlinesUnsupported(t *testing.T) {
	var got []error
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rc := http.NewResponseController(w)
		got = []error{rc.SetReadDeadline(time.Time{}), rc.SetWriteDeadline(time.Now())}
	})
	if out, _ := viaServe(t, h, "GET", "http://x.inproc/", nil); out.err != nil {
		t.Fatal(out.err)
	}
	for i, err := range got {
		if !errors.Is(err, http.ErrNotSupported) {
			t.Errorf("call %d: %v, want ErrNotSupported", i, err)
		}
	}
}

// TestServeWriterStartsClean: every Serve starts with an empty header and
// a fresh status, whatever the previous ones left (writers are recycled).
func TestServeWriterStartsClean(t *testing.T) {
	first := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-First", "1")
		w.Header().Set("Content-Length", "2")
		w.WriteHeader(http.StatusAccepted)
		_, _ = io.WriteString(w, "ab")
	})
	second := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if len(w.Header()) != 0 {
			panic("header not empty")
		}
		_, _ = io.WriteString(w, "xyz")
	})
	for range 3 {
		if got, _ := viaServe(t, first, "GET", "http://x.inproc/", nil); got.err != nil || got.status != 202 || got.body != "ab" {
			t.Fatalf("first: %+v", got)
		}
		got, _ := viaServe(t, second, "GET", "http://x.inproc/", nil)
		if got.err != nil || got.status != 200 || got.body != "xyz" || got.header.Get("X-First") != "" || got.header.Get("Content-Length") != "" {
			t.Fatalf("second: %+v", got)
		}
	}
}
