package upstream

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/ronhq/ron/internal/pipenet"
	"github.com/ronhq/ron/runtime"
)

// wiring builds a Link serving h either over HTTP or in-process.
type wiring struct {
	name string
	link func(t *testing.T, h http.Handler, opt Options) *Link
}

var wirings = []wiring{{"http", httpLink}, {"inproc", inprocLink}}

// httpLink serves h with an httptest server on a pipe listener.
func httpLink(t *testing.T, h http.Handler, opt Options) *Link {
	t.Helper()
	pl := pipenet.New("upstream.test:80")
	srv := &httptest.Server{Listener: pl, Config: &http.Server{Handler: h}}
	srv.Start()
	tr := &http.Transport{DialContext: pl.DialContext, DisableCompression: true}
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
