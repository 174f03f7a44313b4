package upstream

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"syscall"
	"testing"

	"github.com/ronhq/ron/runtime"
)

// pipeListener is an in-memory listener whose connections are net.Pipe
// pairs, so an httptest server and Go's HTTP client run inside a
// testing/synctest bubble.
type pipeListener struct {
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once
}

func newPipeListener() *pipeListener {
	return &pipeListener{conns: make(chan net.Conn), done: make(chan struct{})}
}

func (l *pipeListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *pipeListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return nil
}

func (l *pipeListener) Addr() net.Addr { return pipeAddr{} }

// dial connects to the listener; a closed listener refuses like a dead host.
func (l *pipeListener) dial(ctx context.Context, _, _ string) (net.Conn, error) {
	client, server := net.Pipe()
	select {
	case l.conns <- server:
		return client, nil
	case <-l.done:
	case <-ctx.Done():
	}
	client.Close()
	server.Close()
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	return nil, &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
}

type pipeAddr struct{}

func (pipeAddr) Network() string { return "pipe" }
func (pipeAddr) String() string  { return "upstream.test:80" }

// wiring builds a Link serving h either over HTTP or in-process.
type wiring struct {
	name string
	link func(t *testing.T, h http.Handler, opt Options) *Link
}

var wirings = []wiring{{"http", httpLink}, {"inproc", inprocLink}}

// httpLink serves h with an httptest server on a pipe listener.
func httpLink(t *testing.T, h http.Handler, opt Options) *Link {
	t.Helper()
	pl := newPipeListener()
	srv := &httptest.Server{Listener: pl, Config: &http.Server{Handler: h}}
	srv.Start()
	tr := &http.Transport{DialContext: pl.dial, DisableCompression: true}
	opt.BaseURL, opt.Transport = srv.URL, tr
	t.Cleanup(func() {
		tr.CloseIdleConnections()
		srv.Close()
	})
	return mustLink(t, opt)
}

func inprocLink(t *testing.T, h http.Handler, opt Options) *Link {
	t.Helper()
	opt.Handler = h
	return mustLink(t, opt)
}

func mustLink(t *testing.T, opt Options) *Link {
	t.Helper()
	if opt.Name == "" {
		opt.Name = "storage"
	}
	if opt.Metrics == nil {
		opt.Metrics = runtime.NewMetrics(nil)
	}
	l, err := New(opt)
	if err != nil {
		t.Fatal(err)
	}
	l.rnd = func() float64 { return 0 } // pauses of exactly RetryBase·2^(n−1)
	return l
}

// metric returns one series of l's metrics set.
func metric(l *Link, series string) float64 {
	return l.met.m.Values()[series]
}

func body(t *testing.T, resp *http.Response) string {
	t.Helper()
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("read body: %v", err)
	}
	return string(b)
}
