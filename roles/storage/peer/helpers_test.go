package peer

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"go.uber.org/goleak"

	"github.com/ronhq/ron/internal/pipenet"
	"github.com/ronhq/ron/runtime"
	"github.com/ronhq/ron/store"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// fixture is a Client wired to one in-memory target server.
type fixture struct {
	c    *Client
	base string
	pl   *pipenet.Listener
	read *atomic.Int64 // bytes the server read from its connections
	m    *runtime.Metrics
}

// serve starts h on an in-memory listener (usable inside a synctest bubble)
// and returns a Client that dials it. Both close at the end of the test.
func serve(t *testing.T, h http.Handler, opt Options) *fixture {
	t.Helper()
	pl := pipenet.New("peer.test:80")
	cl := &countingListener{Listener: pl, n: new(atomic.Int64)}
	srv := &httptest.Server{Listener: cl, Config: &http.Server{Handler: h}}
	srv.Start()
	if opt.Metrics == nil {
		opt.Metrics = runtime.NewMetrics(nil)
	}
	c := New(opt)
	c.tr.DialContext = pl.DialContext
	t.Cleanup(func() {
		c.Close()
		srv.Close()
	})
	return &fixture{c: c, base: srv.URL, pl: pl, read: cl.n, m: opt.Metrics}
}

// countingListener counts the bytes the server reads from every connection.
type countingListener struct {
	net.Listener
	n *atomic.Int64
}

func (l *countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &countingConn{Conn: c, n: l.n}, nil
}

type countingConn struct {
	net.Conn
	n *atomic.Int64
}

func (c *countingConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.n.Add(int64(n))
	return n, err
}

// countingReader counts the bytes a client took from a body.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// failingReader returns n bytes of 'x', then err.
type failingReader struct {
	n   int
	err error
}

func (f *failingReader) Read(p []byte) (int, error) {
	if f.n == 0 {
		return 0, f.err
	}
	k := min(len(p), f.n)
	for i := range p[:k] {
		p[i] = 'x'
	}
	f.n -= k
	return k, nil
}

func staticToken(tok string) func(context.Context) (string, error) {
	return func(context.Context) (string, error) { return tok, nil }
}

func failToken(context.Context) (string, error) { return "", errors.New("no key") }

// payload returns n bytes and their id.
func payload(n int) ([]byte, store.ID) {
	b := bytes.Repeat([]byte("ron!"), n/4+1)[:n]
	return b, store.Sum(b)
}

// putErr asserts err is a *PutError with status and reason.
func putErr(t *testing.T, err error, status int, reason string) *PutError {
	t.Helper()
	var pe *PutError
	if !errors.As(err, &pe) {
		t.Fatalf("err = %v (%T), want *PutError", err, err)
	}
	if pe.Status != status || pe.Reason != reason {
		t.Fatalf("PutError{%d, %q, %v}, want {%d, %q}", pe.Status, pe.Reason, pe.Err, status, reason)
	}
	return pe
}
