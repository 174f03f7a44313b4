package vfetch

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/ronhq/ron/store"
	"github.com/ronhq/ron/store/storetest"
	"github.com/ronhq/ron/store/verified/vfetch/vfetchtest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const cs = store.ChunkSize

// pattern returns n test bytes (no two chunks alike) and their id.
func pattern(n int) ([]byte, store.ID) {
	d := storetest.Pattern(n)
	return d, store.Sum(d)
}

// responder answers one request of a fake source; nil refuses the
// connection.
type responder func(r *http.Request) *http.Response

// fakeNet is an in-memory transport (no sockets: testing/synctest bubbles
// can go idle) that records every request.
type fakeNet struct {
	answer responder
	mu     sync.Mutex
	reqs   []*http.Request
}

func (n *fakeNet) RoundTrip(r *http.Request) (*http.Response, error) {
	n.mu.Lock()
	n.reqs = append(n.reqs, r)
	n.mu.Unlock()
	resp := n.answer(r)
	if resp == nil {
		return nil, errors.New("connection refused")
	}
	if resp == stallHeaders {
		<-r.Context().Done() // the headers never come
		return nil, r.Context().Err()
	}
	resp.Request = r
	return resp, nil
}

// requests returns the requests seen so far.
func (n *fakeNet) requests() []*http.Request {
	n.mu.Lock()
	defer n.mu.Unlock()
	return append([]*http.Request(nil), n.reqs...)
}

// requester returns a Requester over n with a 5 s timeout and, as callers
// reading untrusted URLs do, no redirects followed.
func (n *fakeNet) requester() *Requester {
	noRedirects := func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &Requester{HTTP: &http.Client{Transport: n, CheckRedirect: noRedirects}, Timeout: DefaultTimeout, UserAgent: "test"}
}

// stallHeaders is the answer of a source whose headers never arrive.
var stallHeaders = &http.Response{}

// answer builds a response: status, body, Content-Length cl (-1: none)
// and header pairs.
func answer(status int, body io.Reader, cl int64, hdr ...string) *http.Response {
	h := http.Header{}
	for i := 0; i+1 < len(hdr); i += 2 {
		h.Set(hdr[i], hdr[i+1])
	}
	if cl >= 0 {
		h.Set("Content-Length", strconv.FormatInt(cl, 10))
	}
	return &http.Response{StatusCode: status, Header: h, ContentLength: cl, Body: io.NopCloser(body)}
}

// whole answers data whole, with its length.
func whole(data []byte, hdr ...string) *http.Response {
	return answer(http.StatusOK, bytes.NewReader(data), int64(len(data)), hdr...)
}

// stalling is a body that sends head, then blocks until ctx ends.
type stalling struct {
	ctx  context.Context
	head *bytes.Reader
}

func (s *stalling) Read(p []byte) (int, error) {
	if s.head.Len() > 0 {
		return s.head.Read(p)
	}
	<-s.ctx.Done()
	return 0, s.ctx.Err()
}

// source serves an honest object: its outboard at /outboard, Range
// through http.ServeContent's rules, HEAD with its length.
func source(data []byte, ctype string) responder { return serve(vfetchtest.Honest(data), ctype) }

// serve answers as a source of o: its outboard (404 when it has none),
// the body with Range through http.ServeContent's rules, HEAD with its
// length.
func serve(o vfetchtest.Object, ctype string) responder {
	obj := "/o/" + o.ID.String()
	return func(r *http.Request) *http.Response {
		switch {
		case r.URL.Path == obj+"/outboard" && o.Outboard == nil:
			return answer(http.StatusNotFound, bytes.NewReader(nil), 0)
		case r.URL.Path == obj+"/outboard":
			return answer(http.StatusOK, bytes.NewReader(o.Outboard), int64(len(o.Outboard)), "Content-Type", OctetStream)
		case r.URL.Path != obj:
			return answer(http.StatusNotFound, bytes.NewReader(nil), 0)
		case r.Method == http.MethodHead:
			return answer(http.StatusOK, bytes.NewReader(nil), int64(len(o.Data)), "Content-Type", ctype)
		}
		rec := httptest.NewRecorder()
		rec.Header().Set("Content-Type", ctype)
		http.ServeContent(rec, r, "", time.Time{}, bytes.NewReader(o.Data))
		return rec.Result()
	}
}
