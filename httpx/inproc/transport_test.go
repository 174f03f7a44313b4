package inproc_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/labstack/echo/v4"
	"go.uber.org/goleak"

	"github.com/ronhq/ron/httpx/inproc"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// roundTrip sends method url with body through h.
func roundTrip(t *testing.T, ctx context.Context, h http.Handler, method, url string, body io.Reader) (*http.Response, error) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, method, url, body)
	if err != nil {
		t.Fatal(err)
	}
	return inproc.New(h).RoundTrip(req)
}

func mustRoundTrip(t *testing.T, h http.Handler, method, url string, body io.Reader) *http.Response {
	t.Helper()
	resp, err := roundTrip(t, context.Background(), h, method, url, body)
	if err != nil {
		t.Fatalf("RoundTrip: %v", err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

func readAll(t *testing.T, resp *http.Response) string {
	t.Helper()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("read body: %v", err)
	}
	return string(b)
}

func TestStatusHeadersBody(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.Header().Add("Set-Cookie", "a=1")
		w.Header().Add("Set-Cookie", "b=2")
		w.Header().Set("Content-Length", "5")
		w.WriteHeader(http.StatusCreated)
		w.Header().Set("X-Late", "ignored") // after the snapshot
		w.WriteHeader(http.StatusTeapot)    // superfluous: ignored
		_, _ = io.WriteString(w, "hello")
	})
	resp := mustRoundTrip(t, h, http.MethodGet, "http://storage.inproc/o/x", nil)
	if resp.StatusCode != http.StatusCreated || resp.Status != "201 Created" {
		t.Fatalf("status %d %q", resp.StatusCode, resp.Status)
	}
	if resp.Proto != "HTTP/1.1" || resp.ProtoMajor != 1 || resp.ProtoMinor != 1 || resp.Request == nil {
		t.Fatalf("proto/request: %+v", resp)
	}
	if got := resp.Header.Values("Set-Cookie"); len(got) != 2 || got[0] != "a=1" || got[1] != "b=2" {
		t.Fatalf("Set-Cookie = %q", got)
	}
	if resp.Header.Get("X-Late") != "" {
		t.Fatal("header changed after WriteHeader leaked into the response")
	}
	if resp.ContentLength != 5 {
		t.Fatalf("ContentLength = %d", resp.ContentLength)
	}
	if got := readAll(t, resp); got != "hello" {
		t.Fatalf("body %q", got)
	}
}

func TestContentLengthAndSniffing(t *testing.T) {
	cases := []struct {
		name       string
		handler    http.HandlerFunc
		method     string
		status     int
		length     int64
		lengthHdr  string
		ctype      string
		body       string
		readErrIs  error
		noBodyType bool
	}{
		{name: "implicit 200 sniffs html", method: "GET", status: 200, length: -1, ctype: "text/html; charset=utf-8", body: "<html>hi",
			handler: func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, "<html>hi") }},
		{name: "empty return is 200 with length 0", method: "GET", status: 200, length: 0, lengthHdr: "0",
			handler: func(w http.ResponseWriter, r *http.Request) {}},
		{name: "empty HEAD return has no length", method: "HEAD", status: 200, length: -1, noBodyType: true,
			handler: func(w http.ResponseWriter, r *http.Request) {}},
		{name: "invalid length header", method: "GET", status: 200, length: -1, body: "ab",
			handler: func(w http.ResponseWriter, r *http.Request) {
				w.Header()["Content-Length"] = []string{"2", "3"}
				w.Header().Set("Content-Type", "x/y")
				_, _ = io.WriteString(w, "ab")
			}},
		{name: "short body aborts", method: "GET", status: 200, length: 10, readErrIs: io.ErrUnexpectedEOF,
			handler: func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Length", "10")
				_, _ = io.WriteString(w, "abc")
			}},
		{name: "304 keeps header, no body", method: "GET", status: 304, length: 0, lengthHdr: "7", noBodyType: true,
			handler: func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Length", "7")
				w.WriteHeader(http.StatusNotModified)
				if _, err := io.WriteString(w, "nope"); !errors.Is(err, http.ErrBodyNotAllowed) {
					panic("write on 304 did not fail")
				}
			}},
		{name: "204", method: "DELETE", status: 204, length: 0, noBodyType: true,
			handler: func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) }},
		{name: "HEAD discards writes", method: "HEAD", status: 200, length: 4, lengthHdr: "4", noBodyType: true,
			handler: func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Length", "4")
				if n, err := io.WriteString(w, "abcd"); n != 4 || err != nil {
					panic("HEAD write failed")
				}
			}},
		{name: "1xx is dropped", method: "GET", status: 200, length: -1, body: "x",
			handler: func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(http.StatusEarlyHints)
				w.Header().Set("Content-Type", "x/y")
				_, _ = io.WriteString(w, "x")
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			resp := mustRoundTrip(t, tc.handler, tc.method, "http://x.inproc/", nil)
			if resp.StatusCode != tc.status || resp.ContentLength != tc.length {
				t.Fatalf("status %d length %d, want %d %d", resp.StatusCode, resp.ContentLength, tc.status, tc.length)
			}
			if got := resp.Header.Get("Content-Length"); tc.lengthHdr != "" && got != tc.lengthHdr {
				t.Fatalf("Content-Length header %q, want %q", got, tc.lengthHdr)
			}
			if tc.ctype != "" && resp.Header.Get("Content-Type") != tc.ctype {
				t.Fatalf("Content-Type %q", resp.Header.Get("Content-Type"))
			}
			if tc.noBodyType && resp.Body != http.NoBody {
				t.Fatalf("body %T, want http.NoBody", resp.Body)
			}
			b, err := io.ReadAll(resp.Body)
			if tc.readErrIs != nil {
				if !errors.Is(err, tc.readErrIs) {
					t.Fatalf("read error %v, want %v", err, tc.readErrIs)
				}
				return
			}
			if err != nil || string(b) != tc.body {
				t.Fatalf("body %q, %v", b, err)
			}
		})
	}
}

func TestContentLengthOverrun(t *testing.T) {
	errc := make(chan error, 1)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "3")
		_, _ = io.WriteString(w, "abc")
		_, err := io.WriteString(w, "d")
		errc <- err
	})
	resp := mustRoundTrip(t, h, http.MethodGet, "http://x.inproc/", nil)
	if got := readAll(t, resp); got != "abc" {
		t.Fatalf("body %q", got)
	}
	if err := <-errc; !errors.Is(err, http.ErrContentLength) {
		t.Fatalf("overrun write error %v", err)
	}
}

func TestServerSideRequest(t *testing.T) {
	type seen struct {
		method, uri, host, remote, proto, path, rawQuery, scheme, cl, body, te, ua string
		length                                                                     int64
		val                                                                        any
	}
	type ctxKey struct{}
	got := make(chan seen, 1)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got <- seen{method: r.Method, uri: r.RequestURI, host: r.Host, remote: r.RemoteAddr, proto: r.Proto,
			path: r.URL.Path, rawQuery: r.URL.RawQuery, scheme: r.URL.Scheme, cl: r.Header.Get("Content-Length"),
			body: string(b), te: strings.Join(r.TransferEncoding, ","), ua: r.Header.Get("User-Agent"),
			length: r.ContentLength, val: r.Context().Value(ctxKey{})}
	})
	ctx := context.WithValue(context.Background(), ctxKey{}, "v")
	cases := []struct {
		name   string
		method string
		url    string
		body   io.Reader
		want   seen
	}{
		{"get", "GET", "http://storage.inproc/o/b3%3Aab?x=1", nil,
			seen{method: "GET", uri: "/o/b3%3Aab?x=1", host: "storage.inproc", remote: inproc.RemoteAddr, proto: "HTTP/1.1",
				path: "/o/b3:ab", rawQuery: "x=1", ua: "Go-http-client/1.1", val: "v"}},
		{"put known length", "PUT", "http://index.inproc/names/a", strings.NewReader(`{"a":1}`),
			seen{method: "PUT", uri: "/names/a", host: "index.inproc", remote: inproc.RemoteAddr, proto: "HTTP/1.1",
				path: "/names/a", cl: "7", body: `{"a":1}`, ua: "Go-http-client/1.1", length: 7, val: "v"}},
		{"post unknown length", "POST", "http://storage.inproc/o", iotest.HalfReader(strings.NewReader("data")),
			seen{method: "POST", uri: "/o", host: "storage.inproc", remote: inproc.RemoteAddr, proto: "HTTP/1.1",
				path: "/o", body: "data", te: "chunked", ua: "Go-http-client/1.1", length: -1, val: "v"}},
		{"post empty", "POST", "http://storage.inproc/o", nil,
			seen{method: "POST", uri: "/o", host: "storage.inproc", remote: inproc.RemoteAddr, proto: "HTTP/1.1",
				path: "/o", cl: "0", ua: "Go-http-client/1.1", val: "v"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			resp, err := roundTrip(t, ctx, h, tc.method, tc.url, tc.body)
			if err != nil {
				t.Fatal(err)
			}
			readAll(t, resp)
			resp.Body.Close()
			if s := <-got; s != tc.want {
				t.Fatalf("handler saw %+v\nwant %+v", s, tc.want)
			}
		})
	}
}

func TestRequestHostOverridesURL(t *testing.T) {
	hosts := make(chan string, 1)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hosts <- r.Host })
	req, _ := http.NewRequest(http.MethodGet, "http://a.inproc/", nil)
	req.Host = "b.example"
	resp, err := inproc.New(h).RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if got := <-hosts; got != "b.example" {
		t.Fatalf("Host %q", got)
	}
}

// closeCounter records Close calls on a request body.
type closeCounter struct {
	io.Reader
	closed chan struct{}
}

func (c *closeCounter) Close() error { close(c.closed); return nil }

func TestRequestBodyClosedAfterHandler(t *testing.T) {
	body := &closeCounter{Reader: strings.NewReader("abc"), closed: make(chan struct{})}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = r.Body.Close() // the handler's Close does not close the caller's body
		select {
		case <-body.closed:
			panic("caller's body closed by the handler")
		default:
		}
		_, _ = io.Copy(w, r.Body)
	})
	resp := mustRoundTrip(t, h, http.MethodPost, "http://x.inproc/", body)
	if got := readAll(t, resp); got != "abc" {
		t.Fatalf("echo %q", got)
	}
	<-body.closed
}

func TestStreamingBeforeHandlerReturns(t *testing.T) {
	next := make(chan struct{})
	done := make(chan struct{})
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer close(done)
		_, _ = io.WriteString(w, "part1;")
		<-next
		_, _ = io.WriteString(w, "part2")
	})
	resp := mustRoundTrip(t, h, http.MethodGet, "http://x.inproc/", nil)
	buf := make([]byte, 6)
	if _, err := io.ReadFull(resp.Body, buf); err != nil || string(buf) != "part1;" {
		t.Fatalf("first piece %q, %v", buf, err)
	}
	select {
	case <-done:
		t.Fatal("handler returned before the second piece")
	default:
	}
	close(next)
	if got := readAll(t, resp); got != "part2" {
		t.Fatalf("rest %q", got)
	}
	<-done
}

func TestEarlyCloseCancelsHandler(t *testing.T) {
	result := make(chan error, 1)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		chunk := []byte(strings.Repeat("x", 1024))
		var err error
		for err == nil {
			_, err = w.Write(chunk)
		}
		<-r.Context().Done()
		result <- err
	})
	resp := mustRoundTrip(t, h, http.MethodGet, "http://x.inproc/", nil)
	if _, err := io.ReadFull(resp.Body, make([]byte, 10)); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if err := <-result; !errors.Is(err, io.ErrClosedPipe) && !errors.Is(err, context.Canceled) {
		t.Fatalf("handler write error %v", err)
	}
	if _, err := resp.Body.Read(make([]byte, 1)); err == nil || err.Error() != "http: read on closed response body" {
		t.Fatalf("read after close: %v", err)
	}
	if err := resp.Body.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}

func TestContextCancelBeforeHeaders(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	entered, exited := make(chan struct{}), make(chan error, 1)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(entered)
		<-r.Context().Done()
		exited <- r.Context().Err()
	})
	go func() { <-entered; cancel() }()
	_, err := roundTrip(t, ctx, h, http.MethodGet, "http://x.inproc/", nil)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("RoundTrip error %v", err)
	}
	if err := <-exited; !errors.Is(err, context.Canceled) {
		t.Fatalf("handler ctx %v", err)
	}
}

func TestContextCancelAfterHeaders(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	exited := make(chan error, 1)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.(http.Flusher).Flush()
		<-r.Context().Done()
		_, err := io.WriteString(w, "late")
		exited <- err
	})
	resp, err := roundTrip(t, ctx, h, http.MethodGet, "http://x.inproc/", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	cancel()
	if _, err := io.ReadAll(resp.Body); !errors.Is(err, context.Canceled) {
		t.Fatalf("body read error %v", err)
	}
	if err := <-exited; err == nil {
		t.Fatal("handler write after cancel succeeded")
	}
}

func TestPanics(t *testing.T) {
	cases := []struct {
		name  string
		value any
		after bool
	}{
		{"abort before headers", http.ErrAbortHandler, false},
		{"string before headers", "boom", false},
		{"abort after headers", http.ErrAbortHandler, true},
		{"string after body bytes", "boom", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if tc.after {
					_, _ = io.WriteString(w, "partial")
				}
				panic(tc.value)
			})
			resp, err := roundTrip(t, context.Background(), h, http.MethodGet, "http://x.inproc/", nil)
			if !tc.after {
				if err == nil {
					resp.Body.Close()
					t.Fatal("RoundTrip succeeded")
				}
				if pe, ok := tc.value.(error); ok && !errors.Is(err, pe) {
					t.Fatalf("error %v does not wrap %v", err, pe)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			b, err := io.ReadAll(resp.Body)
			if string(b) != "partial" || !errors.Is(err, io.ErrUnexpectedEOF) || !errors.Is(err, inproc.ErrAborted) {
				t.Fatalf("body %q, err %v", b, err)
			}
		})
	}
}

func TestInvalidStatusPanicsIntoError(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(42) })
	if _, err := roundTrip(t, context.Background(), h, http.MethodGet, "http://x.inproc/", nil); err == nil {
		t.Fatal("invalid status accepted")
	}
}

func TestSSEFlushWithEcho(t *testing.T) {
	e := echo.New()
	release := make(chan struct{})
	e.GET("/registry/stream", func(c echo.Context) error {
		c.Response().Header().Set("Content-Type", "text/event-stream")
		c.Response().WriteHeader(http.StatusOK)
		for i := range 2 {
			if _, err := io.WriteString(c.Response(), "data: "+string(rune('a'+i))+"\n\n"); err != nil {
				return err
			}
			c.Response().Flush()
			if i == 0 {
				<-release
			}
		}
		return nil
	})
	resp := mustRoundTrip(t, e, http.MethodGet, "http://registry.inproc/registry/stream", nil)
	if resp.Header.Get("Content-Type") != "text/event-stream" || resp.ContentLength != -1 {
		t.Fatalf("headers %v length %d", resp.Header, resp.ContentLength)
	}
	br := bufio.NewReader(resp.Body)
	if line, err := br.ReadString('\n'); err != nil || line != "data: a\n" {
		t.Fatalf("first event %q, %v", line, err)
	}
	close(release)
	rest, err := io.ReadAll(br)
	if err != nil || string(rest) != "\ndata: b\n\n" {
		t.Fatalf("rest %q, %v", rest, err)
	}
}

func TestResponseControllerDeadlinesUnsupported(t *testing.T) {
	errc := make(chan []error, 1)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rc := http.NewResponseController(w)
		_, _, herr := rc.Hijack()
		errc <- []error{rc.SetReadDeadline(time.Time{}), rc.SetWriteDeadline(time.Now()), herr, rc.Flush()}
	})
	resp := mustRoundTrip(t, h, http.MethodGet, "http://x.inproc/", nil)
	readAll(t, resp)
	got := <-errc
	for i, err := range got[:3] {
		if !errors.Is(err, http.ErrNotSupported) {
			t.Errorf("call %d: %v, want ErrNotSupported", i, err)
		}
	}
	if got[3] != nil {
		t.Errorf("Flush: %v", got[3])
	}
}

func TestNilHeaderAndHostHeader(t *testing.T) {
	hosts := make(chan []string, 1)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hosts <- []string{r.Host, r.Header.Get("Host")} })
	req := &http.Request{Method: "GET", URL: &url.URL{Scheme: "http", Host: "a.inproc", Path: "/"}}
	resp, err := inproc.New(h).RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if got := <-hosts; got[0] != "a.inproc" || got[1] != "" {
		t.Fatalf("host %q", got)
	}
	if _, err := inproc.New(h).RoundTrip(&http.Request{Method: "GET"}); err == nil {
		t.Fatal("request without URL accepted")
	}
}
