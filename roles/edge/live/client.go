package live

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptrace"
	"net/textproto"
	"sync"
	"time"

	"github.com/ronhq/ron/httpx/client"
)

// errFillTimeout: the origin did not deliver its headers, or the next
// 64 KiB of body, within fill_timeout (docs/edge.md §7.5).
var errFillTimeout = errors.New("live: origin fill timeout")

// bodyChunk is the unit of the per-chunk body deadline (docs/edge.md §7.5).
const bodyChunk = 64 << 10

// originClient returns the origin client: c with redirects never followed,
// or the docs/edge.md §7.1 client when c is nil.
func originClient(c *http.Client) *http.Client {
	if c == nil {
		c = &http.Client{Transport: newTransport()}
	}
	cc := *c
	cc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	cc.Timeout = 0 // attempts have their own deadlines (fill_timeout)
	return &cc
}

// newTransport: system TLS roots, no proxy, no transparent compression
// (bodies are stored and relayed exactly as received).
func newTransport() *http.Transport {
	return client.NewTransport(client.TransportOptions{
		Base:                   client.BaseBare,
		DialTimeout:            DefaultFillTimeout,
		ForceAttemptHTTP2:      true,
		DisableCompression:     true,
		MaxIdleConns:           256,
		MaxIdleConnsPerHost:    64,
		IdleConnTimeout:        60 * time.Second,
		TLSHandshakeTimeout:    DefaultFillTimeout,
		MaxResponseHeaderBytes: 64 << 10,
	})
}

// upstreamResp is an origin response whose body is read under the
// per-chunk deadline. Close releases it (idempotent).
type upstreamResp struct {
	resp              *http.Response
	body              *pacedBody
	reqTime, respTime time.Time // when the request was sent and its headers arrived
}

// Close closes the body and ends the attempt.
func (u *upstreamResp) Close() { u.body.Close() }

// status is the origin's status code.
func (u *upstreamResp) status() int { return u.resp.StatusCode }

// attempt sends req once: its headers must arrive within timeout, then
// every 64 KiB of body within timeout (errFillTimeout). interim, when set,
// gets the 1xx responses the origin sends first.
func (l *Live) attempt(ctx context.Context, req *http.Request, timeout time.Duration, interim func(int, http.Header)) (*upstreamResp, error) {
	actx, cancel := context.WithCancelCause(ctx)
	timer := time.AfterFunc(timeout, func() { cancel(errFillTimeout) })
	if interim != nil {
		actx = httptrace.WithClientTrace(actx, &httptrace.ClientTrace{Got1xxResponse: func(code int, h textproto.MIMEHeader) error {
			interim(code, http.Header(h))
			return nil
		}})
	}
	reqTime := l.now()
	resp, err := l.client.Do(req.WithContext(actx))
	timer.Stop()
	if err != nil {
		cause := context.Cause(actx)
		cancel(nil)
		if errors.Is(cause, errFillTimeout) {
			l.met.timeouts.Inc()
			return nil, errFillTimeout
		}
		return nil, err
	}
	b := &pacedBody{rc: resp.Body, ctx: actx, cancel: cancel, timer: timer, timeout: timeout, budget: timeout,
		timedOut: l.met.timeouts.Inc, counted: l.met.upstream.Add}
	return &upstreamResp{resp: resp, body: b, reqTime: reqTime, respTime: l.now()}, nil
}

// pacedBody enforces the per-64 KiB deadline while the body is read: the
// timer runs only inside Read, so a slow consumer does not count against
// the origin.
type pacedBody struct {
	rc       io.ReadCloser
	ctx      context.Context
	cancel   context.CancelCauseFunc
	timer    *time.Timer
	timeout  time.Duration
	budget   time.Duration // left for the current 64 KiB
	chunk    int64         // bytes of the current 64 KiB read so far
	timedOut func()
	counted  func(int)
	once     sync.Once
}

// Read reads under the remaining budget of the current chunk.
func (b *pacedBody) Read(p []byte) (int, error) {
	if b.budget <= 0 {
		return 0, errFillTimeout
	}
	start := time.Now()
	b.timer.Reset(b.budget)
	n, err := b.rc.Read(p)
	b.timer.Stop()
	b.budget -= time.Since(start)
	b.chunk += int64(n)
	if b.chunk >= bodyChunk {
		b.chunk %= bodyChunk
		b.budget = b.timeout
	}
	if n > 0 {
		b.counted(n)
	}
	if err != nil && !errors.Is(err, io.EOF) && errors.Is(context.Cause(b.ctx), errFillTimeout) {
		b.timedOut()
		return n, errFillTimeout
	}
	return n, err
}

// Close closes the body and ends its attempt. Idempotent.
func (b *pacedBody) Close() error {
	b.once.Do(func() {
		b.timer.Stop()
		b.rc.Close()
		b.cancel(nil)
	})
	return nil
}
