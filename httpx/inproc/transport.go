// Package inproc is an http.RoundTripper that serves requests through an
// http.Handler of this process, so that a co-located role is called exactly
// as over HTTP (same handler chain, status, headers and error envelopes)
// without a socket. Transport.Serve is the synchronous variant: the handler
// runs in the caller's goroutine and its answer goes straight to a Sink,
// without the goroutine, pipe and copy of RoundTrip.
//
// The handler sees a server-side request: RequestURI set, URL holding only
// the path and query, Host from the request (else its URL), Proto HTTP/1.1,
// RemoteAddr RemoteAddr (loopback), Content-Length / Transfer-Encoding as a
// server would report them, and the caller's context plus a cancel of its
// own. The response is returned as soon as the handler commits its headers;
// the body streams through a pipe with no buffering.
//
// Differences from a real server, by design: 1xx informational answers are
// dropped; trailers are not supported; Content-Type is sniffed only when the
// first Write commits the headers (as an explicit WriteHeader commits them at
// once); no Content-Length is computed for small bodies; the connection can
// be neither hijacked nor given read/write deadlines (http.ResponseController
// answers http.ErrNotSupported for those).
package inproc

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// RemoteAddr is the RemoteAddr of every request served in-process: loopback,
// port 0 (no connection exists).
const RemoteAddr = "127.0.0.1:0"

// Transport is an http.RoundTripper that serves each request through an
// http.Handler in this process. It is safe for concurrent use.
type Transport struct {
	h http.Handler
}

// New returns a Transport serving every request with h.
func New(h http.Handler) *Transport { return &Transport{h: h} }

// RoundTrip serves r with the handler in a goroutine owned by this call: it
// ends when the handler returns. The response is returned once the handler
// commits its headers (WriteHeader, first Write, Flush, or return); its body
// then streams from the handler's writes. Closing the body early, or r's
// context ending, cancels the handler's context and fails its pending and
// later writes. A handler panic before the headers makes RoundTrip fail;
// after them, the body read fails with an error wrapping
// io.ErrUnexpectedEOF (as a connection dropped mid-body). r.Body is closed
// once the handler returns.
func (t *Transport) RoundTrip(r *http.Request) (*http.Response, error) {
	sreq, cancel, err := serverRequest(r)
	if err != nil {
		closeBody(r)
		return nil, err
	}
	pr, pw := io.Pipe()
	ready := make(chan head, 1)
	o := &pipeOut{pw: pw, ready: ready}
	w := newWriter(sreq.Context(), r.Method, o)
	go t.serve(sreq, w, o, cancel, r)
	select {
	case h := <-ready:
		if h.err != nil {
			return nil, h.err
		}
		return newResponse(r, h, pr, cancel), nil
	case <-r.Context().Done():
		cancel()
		pr.CloseWithError(r.Context().Err())
		return nil, r.Context().Err()
	}
}

// serve runs the handler and finishes the response; it never lets a panic
// escape.
func (t *Transport) serve(req *http.Request, w *writer, o *pipeOut, cancel context.CancelFunc, orig *http.Request) {
	defer cancel()
	defer closeBody(orig)
	o.end(run(t.h, w, req))
}

// run serves req with h through w and returns how the response ended (see
// writer.finish and writer.panicked); it never lets a panic escape.
func run(h http.Handler, w *writer, req *http.Request) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = w.panicked(p)
		}
	}()
	h.ServeHTTP(w, req)
	return w.finish()
}

func closeBody(r *http.Request) {
	if r.Body != nil {
		_ = r.Body.Close()
	}
}

// serverRequest builds the request the handler sees and its cancel.
func serverRequest(r *http.Request) (*http.Request, context.CancelFunc, error) {
	if r.URL == nil {
		return nil, nil, fmt.Errorf("inproc: request without URL")
	}
	ctx, cancel := context.WithCancel(r.Context())
	req := r.Clone(ctx)
	if err := toServer(req, r.Body, ctx); err != nil {
		cancel()
		return nil, nil, err
	}
	return req, cancel, nil
}

// toServer turns req, in place, into the request a server would hand the
// handler; body is the caller's body, read under ctx.
func toServer(req *http.Request, body io.Reader, ctx context.Context) error {
	if req.URL == nil {
		return fmt.Errorf("inproc: request without URL")
	}
	u, uri, err := originForm(req.URL)
	if err != nil {
		return err
	}
	host := req.Host
	if host == "" {
		host = req.URL.Host
	}
	req.URL, req.RequestURI, req.RemoteAddr, req.Host = u, uri, RemoteAddr, host
	req.Proto, req.ProtoMajor, req.ProtoMinor = "HTTP/1.1", 1, 1
	req.Close, req.GetBody, req.TLS, req.Response = false, nil, nil, nil
	if req.Method == "" {
		req.Method = http.MethodGet
	}
	if req.Header == nil {
		req.Header = http.Header{}
	}
	req.Header.Del("Host") // a server reports it in req.Host only
	if _, ok := req.Header["User-Agent"]; !ok {
		req.Header.Set("User-Agent", "Go-http-client/1.1")
	}
	setBody(req, body, req.ContentLength, ctx)
	return nil
}

// originForm returns the URL and request URI a server would see for the
// client URL cu. A URL of a path and query only is kept as it is, one that
// also has a scheme and host is copied without them; any other is parsed
// again from its request URI.
func originForm(cu *url.URL) (*url.URL, string, error) {
	uri := cu.RequestURI()
	if cu.Opaque == "" && cu.User == nil && cu.Fragment == "" && cu.RawFragment == "" &&
		!cu.ForceQuery && !cu.OmitHost && strings.HasPrefix(cu.Path, "/") {
		if cu.Scheme == "" && cu.Host == "" {
			return cu, uri, nil
		}
		u := *cu
		u.Scheme, u.Host = "", ""
		return &u, uri, nil
	}
	u, err := url.ParseRequestURI(uri)
	if err != nil {
		return nil, "", fmt.Errorf("inproc: request URI: %w", err)
	}
	return u, uri, nil
}

// setBody gives req the framing a server reports for a caller's body of
// length n: no body → http.NoBody and length 0; unknown length → -1 and
// chunked; otherwise the declared length, also as a Content-Length header.
func setBody(req *http.Request, body io.Reader, n int64, ctx context.Context) {
	req.TransferEncoding = nil
	req.Header.Del("Transfer-Encoding")
	if body == nil || body == http.NoBody {
		req.Body, req.ContentLength = http.NoBody, 0
		if sendsZeroLength(req.Method) {
			req.Header.Set("Content-Length", "0")
		}
		return
	}
	if n <= 0 {
		n = -1
	}
	req.Body, req.ContentLength = &requestBody{r: body, ctx: ctx}, n
	if n < 0 {
		req.TransferEncoding = []string{"chunked"}
		req.Header.Del("Content-Length")
		return
	}
	req.Header.Set("Content-Length", strconv.FormatInt(n, 10))
}

// sendsZeroLength reports whether Go's client sends "Content-Length: 0" for
// a bodiless request with this method.
func sendsZeroLength(method string) bool {
	switch strings.ToUpper(method) {
	case http.MethodPost, http.MethodPut, http.MethodPatch:
		return true
	}
	return false
}

// requestBody is the handler's view of the caller's body: reads fail once
// the handler's context has ended; Close is left to the transport.
type requestBody struct {
	r   io.Reader
	ctx context.Context
}

func (b *requestBody) Read(p []byte) (int, error) {
	if err := b.ctx.Err(); err != nil {
		return 0, err
	}
	return b.r.Read(p)
}

// Close does nothing: the transport closes the caller's body once the
// handler has returned.
func (b *requestBody) Close() error { return nil }
