package provider

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/ronhq/ron/store"
	"github.com/ronhq/ron/store/verified"
	"github.com/ronhq/ron/store/verified/vfetch/vfetchtest"
)

// In-memory providers for tests under testing/synctest, where real sockets
// would keep the bubble from ever going idle.

// roundTrip adapts a function to http.RoundTripper.
type roundTrip func(*http.Request) (*http.Response, error)

func (f roundTrip) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// memNet routes requests by host: a handler answers through a recorder; a
// responder builds the response itself (streaming bodies, stalls). Unknown
// hosts refuse the connection.
type memNet struct {
	handlers   map[string]http.Handler
	responders map[string]func(*http.Request) (*http.Response, error)
}

func newMemNet() *memNet {
	return &memNet{handlers: map[string]http.Handler{}, responders: map[string]func(*http.Request) (*http.Response, error){}}
}

func (n *memNet) client() *http.Client { return &http.Client{Transport: roundTrip(n.roundTrip)} }

func (n *memNet) roundTrip(r *http.Request) (*http.Response, error) {
	if f, ok := n.responders[r.URL.Host]; ok {
		return f(r)
	}
	h, ok := n.handlers[r.URL.Host]
	if !ok {
		return nil, errors.New("connection refused")
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, r)
	if err := r.Context().Err(); err != nil {
		return nil, err
	}
	resp := rec.Result()
	resp.Request = r
	return resp, nil
}

// stallHeaders never answers; it returns when the request is cancelled.
func stallHeaders(r *http.Request) (*http.Response, error) {
	<-r.Context().Done()
	return nil, r.Context().Err()
}

// streamBody answers a provider's requests for data: the outboard at
// /outboard, else a 200 body that yields data group by group, sleeping
// pause before each group, and stalls (until cancelled) after stallAfter
// bytes.
func streamBody(data []byte, pause time.Duration, stallAfter int) func(*http.Request) (*http.Response, error) {
	tr := verified.TreeOf(data)
	return func(r *http.Request) (*http.Response, error) {
		if r.URL.Path == "/o/"+tr.ID.String()+"/outboard" {
			return &http.Response{StatusCode: 200, Header: http.Header{}, ContentLength: -1, Request: r,
				Body: io.NopCloser(bytes.NewReader(tr.Outboard))}, nil
		}
		return &http.Response{StatusCode: 200, Header: http.Header{"Content-Length": {strconv.Itoa(len(data))}},
			ContentLength: int64(len(data)), Request: r,
			Body: &vfetchtest.Paced{Ctx: r.Context(), Data: data, Pause: pause, StallAfter: stallAfter}}, nil
	}
}

// serveRec runs f.Serve into a recorder, catching the abort panic.
func serveRec(f *Fetcher, ctx context.Context, r *http.Request, id store.ID, providers []string) (rec *httptest.ResponseRecorder, err error, aborted bool) {
	rec = httptest.NewRecorder()
	defer func() {
		if v := recover(); v != nil {
			if v != http.ErrAbortHandler {
				panic(v)
			}
			aborted = true
		}
	}()
	err = f.Serve(ctx, rec, r.WithContext(ctx), id, providers, nil)
	return rec, err, false
}

func getReq(t *testing.T, hdr ...string) *http.Request {
	r := httptest.NewRequest(http.MethodGet, "/o/x", nil)
	for i := 0; i+1 < len(hdr); i += 2 {
		r.Header.Set(hdr[i], hdr[i+1])
	}
	return r
}
