package httpx

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/rs/zerolog"
)

// opConn is a net.Conn that records the operations a coalescing connection
// makes on it.
type opConn struct {
	net.Conn // nil: only the methods below are used
	ops      []string
	out      bytes.Buffer
	err      error // returned by Write when set
}

func (c *opConn) Write(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	c.ops = append(c.ops, "write "+strconv.Itoa(len(p)))
	return c.out.Write(p)
}

func (c *opConn) SetWriteDeadline(time.Time) error {
	c.ops = append(c.ops, "deadline")
	return nil
}

func (c *opConn) SetDeadline(time.Time) error {
	c.ops = append(c.ops, "deadlines")
	return nil
}

func (c *opConn) Close() error {
	c.ops = append(c.ops, "close")
	return nil
}

func (c *opConn) CloseWrite() error {
	c.ops = append(c.ops, "closewrite")
	return nil
}

// TestCoalesceConnOps: which operation sends held bytes, in which order.
func TestCoalesceConnOps(t *testing.T) {
	small, hold, big := bytes.Repeat([]byte("s"), 100), bytes.Repeat([]byte("h"), coalesceHold), bytes.Repeat([]byte("b"), 6000)
	rows := []struct {
		name  string
		armed bool
		run   func(c *coalesceConn)
		ops   string
		out   string
	}{
		{"unarmed writes go through", false, func(c *coalesceConn) { _, _ = c.Write(small) }, "write 100", "s"},
		{"armed small write held", true, func(c *coalesceConn) { _, _ = c.Write(small) }, "", ""},
		{"held, then the next write: both at once", true, func(c *coalesceConn) {
			_, _ = c.Write(hold)
			_, _ = c.Write(big)
		}, "write 4096,write 6000", "hb"},
		{"a write over the hold size goes through", true, func(c *coalesceConn) { _, _ = c.Write(big) }, "write 6000", "b"},
		{"deadline sends first", true, func(c *coalesceConn) {
			_, _ = c.Write(small)
			_ = c.SetWriteDeadline(time.Time{})
		}, "write 100,deadline", "s"},
		{"deadlines send first", true, func(c *coalesceConn) {
			_, _ = c.Write(small)
			_ = c.SetDeadline(time.Time{})
		}, "write 100,deadlines", "s"},
		{"idle ends the response", true, func(c *coalesceConn) {
			_, _ = c.Write(small)
			connStateHook(c, http.StateIdle)
			_, _ = c.Write(small) // disarmed: through at once
		}, "write 100,write 100", "s"},
		{"hijacked ends the response", true, func(c *coalesceConn) {
			_, _ = c.Write(small)
			connStateHook(c, http.StateHijacked)
		}, "write 100", "s"},
		{"active keeps holding", true, func(c *coalesceConn) {
			_, _ = c.Write(small)
			connStateHook(c, http.StateActive)
		}, "", ""},
		{"close drops what is held", true, func(c *coalesceConn) {
			_, _ = c.Write(small)
			_ = c.Close()
		}, "close", ""},
		{"close write sends first", true, func(c *coalesceConn) {
			_, _ = c.Write(small)
			_ = c.CloseWrite()
		}, "write 100,closewrite", "s"},
		{"read from sends first", true, func(c *coalesceConn) {
			_, _ = c.Write(small)
			_, _ = c.ReadFrom(strings.NewReader("xyz"))
		}, "write 100,write 3", "sxyz"},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			oc := &opConn{}
			c := &coalesceConn{Conn: oc, armed: row.armed}
			row.run(c)
			if got := strings.Join(oc.ops, ","); got != row.ops {
				t.Fatalf("ops %q, want %q", got, row.ops)
			}
			if got := squeeze(oc.out.String()); got != row.out {
				t.Fatalf("bytes %q, want %q", got, row.out)
			}
		})
	}
}

// squeeze keeps the first byte of every run of equal bytes.
func squeeze(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if i == 0 || s[i] != s[i-1] {
			b.WriteByte(s[i])
		}
	}
	return b.String()
}

// TestCoalesceFailedFlushCloses: held bytes that cannot be sent close the
// connection, since no caller can be told.
func TestCoalesceFailedFlushCloses(t *testing.T) {
	oc := &opConn{}
	c := &coalesceConn{Conn: oc, armed: true}
	_, _ = c.Write([]byte("x"))
	oc.err = errors.New("broken pipe")
	_ = c.SetWriteDeadline(time.Time{})
	if got := strings.Join(oc.ops, ","); got != "close,deadline" {
		t.Fatalf("ops %q", got)
	}
	if c.n != 0 || c.held != nil {
		t.Fatal("held bytes kept after the failed send")
	}
}

// TestCoalesceResponseArms: only a body-less request received by a
// Server's listener arms its connection.
func TestCoalesceResponseArms(t *testing.T) {
	cc := &coalesceConn{Conn: &opConn{}}
	ctx := withConn(context.Background(), cc)
	rows := []struct {
		name string
		req  *http.Request
		want bool
	}{
		{"no connection", httptest.NewRequest(http.MethodGet, "/", nil), false},
		{"a body", httptest.NewRequestWithContext(ctx, http.MethodPost, "/", strings.NewReader("x")), false},
		{"no body", httptest.NewRequestWithContext(ctx, http.MethodGet, "/", http.NoBody), true},
	}
	for _, row := range rows {
		cc.armed = false
		CoalesceResponse(row.req)
		if cc.armed != row.want {
			t.Errorf("%s: armed %v, want %v", row.name, cc.armed, row.want)
		}
	}
	if withConn(context.Background(), &opConn{}).Value(connCtxKey{}) != nil {
		t.Error("a plain connection recorded")
	}
}

// coalesceServer serves the handlers of TestCoalesceOverTCP on a Server's
// listener.
func coalesceServer(t *testing.T, routes map[string]echo.HandlerFunc) string {
	t.Helper()
	s := NewServer(ServerOptions{Role: "test", Addr: "127.0.0.1:0", Log: zerolog.Nop(),
		Streaming: func(string, string) bool { return true }})
	for path, h := range routes {
		s.Echo().GET(path, h)
	}
	if err := s.Listen(); err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- s.Serve() }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		s.Shutdown(ctx)
		if err := <-served; err != nil {
			t.Error(err)
		}
	})
	return "http://" + s.Addr()
}

// TestCoalesceOverTCP: coalesced responses arrive whole over real
// connections (kept alive, closed, sent with sendfile), a stream that is
// not coalesced still delivers what it flushed before it waits, and an
// aborted response ends its connection.
func TestCoalesceOverTCP(t *testing.T) {
	big := bytes.Repeat([]byte("0123456789"), 1000)
	file := filepath.Join(t.TempDir(), "body")
	if err := os.WriteFile(file, big, 0o600); err != nil {
		t.Fatal(err)
	}
	release := make(chan struct{})
	base := coalesceServer(t, map[string]echo.HandlerFunc{
		"/big": func(c echo.Context) error {
			CoalesceResponse(c.Request())
			return c.Blob(http.StatusOK, "application/octet-stream", big)
		},
		"/file": func(c echo.Context) error {
			f, err := os.Open(file)
			if err != nil {
				return err
			}
			defer f.Close()
			CoalesceResponse(c.Request())
			w := c.Response()
			w.Header().Set("Content-Length", strconv.Itoa(len(big)))
			w.WriteHeader(http.StatusOK)
			w.Flush()
			_, err = w.Writer.(io.ReaderFrom).ReadFrom(&io.LimitedReader{R: f, N: int64(len(big))})
			return err
		},
		"/stream": func(c echo.Context) error {
			w := c.Response()
			w.WriteHeader(http.StatusOK)
			_, _ = w.Write([]byte("first"))
			w.Flush()
			<-release
			_, err := w.Write([]byte("second"))
			return err
		},
		"/abort": func(c echo.Context) error {
			CoalesceResponse(c.Request())
			w := c.Response()
			w.Header().Set("Content-Length", "100000")
			w.WriteHeader(http.StatusOK)
			_, _ = w.Write(big[:3000])
			w.Flush()
			panic(http.ErrAbortHandler)
		},
	})
	client := &http.Client{Timeout: 10 * time.Second}
	defer client.CloseIdleConnections()
	for _, path := range []string{"/big", "/big", "/file", "/file"} {
		if body := get(t, client, base+path, nil); !bytes.Equal(body, big) {
			t.Fatalf("%s: %d bytes, want %d", path, len(body), len(big))
		}
	}
	if body := get(t, client, base+"/big", http.Header{"Connection": {"close"}}); !bytes.Equal(body, big) {
		t.Fatalf("/big with Connection: close: %d bytes", len(body))
	}

	resp, err := client.Get(base + "/stream")
	if err != nil {
		t.Fatal(err)
	}
	first := make([]byte, 5)
	if _, err := io.ReadFull(resp.Body, first); err != nil || string(first) != "first" {
		t.Fatalf("flushed part: %q, %v", first, err)
	}
	close(release)
	rest, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || string(rest) != "second" {
		t.Fatalf("rest: %q, %v", rest, err)
	}

	if resp, err := client.Get(base + "/abort"); err == nil {
		_, err = io.ReadAll(resp.Body)
		resp.Body.Close()
		if err == nil {
			t.Fatal("aborted response read as complete")
		}
	}
}

// get returns the body of a 200 answer to GET url.
func get(t *testing.T, client *http.Client, url string, h http.Header) []byte {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range h {
		req.Header[k] = v
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d, %v", url, resp.StatusCode, err)
	}
	return body
}

// TestCoalesceEmptySection: headers sent with MSG_MORE before a body
// section that turns out empty are pushed out at once, not held until
// the next write.
func TestCoalesceEmptySection(t *testing.T) {
	empty := filepath.Join(t.TempDir(), "empty")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	seen := make(chan struct{})
	base := coalesceServer(t, map[string]echo.HandlerFunc{
		"/late": func(c echo.Context) error {
			f, err := os.Open(empty)
			if err != nil {
				return err
			}
			defer f.Close()
			CoalesceResponse(c.Request())
			w := c.Response()
			w.Header().Set("Content-Length", "5")
			w.WriteHeader(http.StatusOK)
			w.Flush()
			if n, err := w.Writer.(io.ReaderFrom).ReadFrom(&io.LimitedReader{R: f, N: 5}); n != 0 || err != nil {
				return errors.Join(err, errors.New("empty file gave bytes"))
			}
			<-seen // the client has the headers
			_, err = w.Write([]byte("hello"))
			return err
		},
	})
	client := &http.Client{Timeout: 10 * time.Second}
	defer client.CloseIdleConnections()
	resp, err := client.Get(base + "/late")
	if err != nil {
		t.Fatal(err)
	}
	close(seen)
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || string(body) != "hello" {
		t.Fatalf("body %q, %v", body, err)
	}
}
