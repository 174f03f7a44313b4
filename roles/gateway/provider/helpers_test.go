package provider

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/runtime"
	"github.com/ronhq/ron/store"
	"github.com/ronhq/ron/store/storetest"
	"github.com/ronhq/ron/store/verified/vfetch/vfetchtest"
)

const cs = store.ChunkSize

// fakeProvider is a storage node as the gateway sees it: GET/HEAD /o/{b3}
// (Range via http.ServeContent) and GET /o/{b3}/outboard (404 when it has
// none: a ron before verified streaming), with knobs to misbehave. It
// records every request.
type fakeProvider struct {
	id             store.ID
	data           []byte // the body it serves
	outboard       []byte // the outboard it serves
	ctype          string
	outboardStatus int // non-zero: answer /outboard with this status
	bodyStatus     int // non-zero: answer GET/HEAD /o/{b3} with this status
	ignoreRange    bool

	mu   sync.Mutex
	reqs []*http.Request
}

// serving is a provider of o.
func serving(o vfetchtest.Object) *fakeProvider {
	return &fakeProvider{id: o.ID, data: o.Data, outboard: o.Outboard, ctype: "text/plain; charset=utf-8"}
}

// honest serves data truthfully.
func honest(data []byte) *fakeProvider { return serving(vfetchtest.Honest(data)) }

// corrupt serves id's true outboard with wrong bytes at offset off.
func corrupt(data []byte, off int) *fakeProvider { return serving(vfetchtest.Corrupt(data, off)) }

// selfConsistent serves wrong bytes with the outboard of those bytes, under
// the true id: no group verifies.
func selfConsistent(data []byte, off int) *fakeProvider {
	return serving(vfetchtest.SelfConsistent(data, off))
}

func (p *fakeProvider) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	p.reqs = append(p.reqs, r.Clone(r.Context()))
	p.mu.Unlock()
	obj := "/o/" + p.id.String()
	switch {
	case r.URL.Path == obj+"/outboard" && p.outboardStatus != 0:
		w.WriteHeader(p.outboardStatus)
	case r.URL.Path == obj+"/outboard" && p.outboard == nil:
		http.NotFound(w, r)
	case r.URL.Path == obj+"/outboard":
		w.Header().Set("Content-Type", "application/octet-stream")
		_, _ = w.Write(p.outboard)
	case r.URL.Path == obj && p.bodyStatus != 0:
		w.WriteHeader(p.bodyStatus)
	case r.URL.Path == obj:
		w.Header().Set("Content-Type", p.ctype)
		if p.ignoreRange {
			r.Header.Del("Range")
		}
		http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(p.data))
	default:
		http.NotFound(w, r)
	}
}

// requests returns the recorded requests.
func (p *fakeProvider) requests() []*http.Request {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]*http.Request(nil), p.reqs...)
}

// start serves p over HTTP until the test ends and returns its base URL.
func start(t *testing.T, p http.Handler) string {
	t.Helper()
	srv := httptest.NewServer(p)
	t.Cleanup(srv.Close)
	return srv.URL
}

// newClient returns a client with its own transport, closed at the end.
func newClient(t *testing.T) *http.Client {
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr}
}

// newFetcher returns a Fetcher over its own transport and metrics.
func newFetcher(t *testing.T, opt Options) (*Fetcher, *runtime.Metrics) {
	if opt.HTTP == nil {
		opt.HTTP = newClient(t)
	}
	if opt.Metrics == nil {
		opt.Metrics = runtime.NewMetrics(nil)
	}
	return New(opt), opt.Metrics
}

// gateway serves f.Serve for id over HTTP, as the gateway's handler does:
// errors become envelopes, ErrAbortHandler reaches net/http.
func gateway(t *testing.T, f *Fetcher, id store.ID, providers []string, set http.Header) string {
	return start(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := f.Serve(r.Context(), w, r, id, providers, set); err != nil {
			httpx.WriteError(w, "", err)
		}
	}))
}

// get sends method to url with headers and reads the whole body; readErr
// is the body's read error (an aborted response).
func get(t *testing.T, c *http.Client, method, url string, hdr map[string]string) (resp *http.Response, body []byte, readErr error) {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err = c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, readErr = io.ReadAll(resp.Body)
	return resp, body, readErr
}

// envelope decodes an error answer.
func envelope(t *testing.T, status int, body []byte) *httpx.Error {
	t.Helper()
	return httpx.DecodeError(status, body)
}

// metric returns a series' value ("" labels: exact name).
func metric(m *runtime.Metrics, name string) float64 { return m.Values()[name] }

const (
	mismatchSeries = `ron_gateway_hash_mismatch_total{role="gateway"}`
	timeoutSeries  = `ron_io_timeouts_total{role="gateway",op="provider"}`
)

func breakerSeries(state string) string {
	return `ron_breaker_state{role="gateway",state="` + state + `",target="provider"}`
}

func requestsSeries(code string) string {
	return `ron_gateway_upstream_requests_total{role="gateway",code="` + code + `",upstream="provider"}`
}

// pattern returns n test bytes and their id.
func pattern(n int) ([]byte, store.ID) {
	d := storetest.Pattern(n)
	return d, store.Sum(d)
}

// httptestServer returns a started server the caller closes.
func httptestServer(t *testing.T) *httptest.Server {
	t.Helper()
	return httptest.NewServer(http.NotFoundHandler())
}
