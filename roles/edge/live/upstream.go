package live

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"time"

	"github.com/ronhq/ron/roles/edge/fillq"
	"github.com/ronhq/ron/roles/edge/httpcache"
	"github.com/ronhq/ron/runtime"
)

// viaValue is this hop's Via member (docs/edge.md §7.5).
const viaValue = "1.1 ron-edge"

// peer is the client as the origin learns of it.
type peer struct {
	addr    string // the client's IP ("" in-process)
	trusted bool   // loopback, in-process or a trusted proxy: its X-Forwarded-For is kept
}

// peerOf reads the peer of r.
func peerOf(r *http.Request, trusted []netip.Prefix) peer {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	a, err := netip.ParseAddr(host)
	if err != nil {
		return peer{trusted: true} // in-process (the gateway): no socket address
	}
	a = a.Unmap()
	p := peer{addr: a.String(), trusted: a.IsLoopback()}
	for _, pre := range trusted {
		p.trusted = p.trusted || pre.Contains(a)
	}
	return p
}

// forwardHeader is the header sent to origin o for a client header in
// (docs/edge.md §7.5): its end-to-end fields without Authorization (unless
// forward_authorization), X-Ron-*, Expect and Content-Length; Via and
// X-Forwarded-For appended; no default User-Agent added.
func forwardHeader(in http.Header, o Origin, p peer) http.Header {
	h := httpcache.EndToEnd(in)
	for k := range h {
		if strings.HasPrefix(k, "X-Ron-") {
			delete(h, k)
		}
	}
	if !o.ForwardAuthorization {
		h.Del("Authorization")
	}
	h.Del("Host")
	h.Del("Expect")
	h.Del("Content-Length")
	h["Via"] = append(h["Via"], viaValue)
	xff := strings.Join(h.Values("X-Forwarded-For"), ", ")
	switch {
	case p.addr == "":
	case xff != "" && p.trusted:
		h.Set("X-Forwarded-For", xff+", "+p.addr)
	default:
		h.Set("X-Forwarded-For", p.addr)
	}
	if _, ok := h["User-Agent"]; !ok {
		h["User-Agent"] = []string{""} // net/http then sends none
	}
	return h
}

// newRequest builds a request to u; the caller's ctx is added per attempt.
func newRequest(method string, u *url.URL, h http.Header) *http.Request {
	return &http.Request{Method: method, URL: u, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: h, Host: u.Host, Body: http.NoBody}
}

// tryPlan bounds the attempts of one upstream GET or HEAD.
type tryPlan struct {
	tries    int
	timeout  time.Duration
	deadline time.Time // client deadline; zero = none
	interim  func(int, http.Header)
}

// roundTrip sends req with retries (docs/edge.md §7.5): on an attempt timeout or a 503
// or 504, up to p.tries attempts, sleeping the backoff before each retry
// while the client deadline allows it. The last response or error is
// returned.
func (l *Live) roundTrip(ctx context.Context, req *http.Request, p tryPlan) (*upstreamResp, error) {
	for n := 0; ; n++ {
		u, err := l.attempt(ctx, req, p.timeout, p.interim)
		if !retryable(u, err) || n+1 >= p.tries {
			return u, err
		}
		delay := fillq.RetryDelay(n)
		if !p.deadline.IsZero() && time.Until(p.deadline) <= delay {
			return u, err
		}
		if u != nil {
			u.Close()
		}
		l.met.retries.Inc()
		if !runtime.Sleep(ctx, delay) {
			return nil, ctx.Err()
		}
	}
}

// retryable: an attempt timeout, or a 503 or 504 answer.
func retryable(u *upstreamResp, err error) bool {
	if err != nil {
		return errors.Is(err, errFillTimeout)
	}
	return u.status() == http.StatusServiceUnavailable || u.status() == http.StatusGatewayTimeout
}

// failureOf classifies an exchange error for stale serving (docs/edge.md §7.4): the
// origin could not be reached (connect error, timeout, closed connection).
func failureOf(err error) httpcache.Failure {
	if err == nil || errors.Is(err, context.Canceled) {
		return 0
	}
	return httpcache.FailureUnreachable
}
