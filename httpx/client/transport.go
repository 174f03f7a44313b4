package client

import (
	"net"
	"net/http"
	"time"

	"github.com/ronhq/ron/httpx/safedial"
)

// Base is the transport a TransportOptions starts from.
type Base int

// The bases of NewTransport.
const (
	// BaseDefault is Go's http.DefaultTransport: proxy from the
	// environment, 30 s dials with 30 s keep-alives, HTTP/2, 100 idle
	// connections (2 a host), 90 s idle, 10 s TLS handshakes, 1 s
	// expect-continue.
	BaseDefault Base = iota
	// BaseBare is a zero http.Transport: no proxy (node-to-node and
	// benchmark traffic never goes through one), the system dialer, no
	// HTTP/2 attempt over a custom dialer, no idle-pool or timeout limits.
	BaseBare
)

// keepAlive is the TCP keep-alive of a dialer with a DialTimeout.
const keepAlive = 30 * time.Second

// TransportOptions describe an outbound transport: its Base, then every
// non-zero field replaces the base's value.
type TransportOptions struct {
	Base Base
	// DialTimeout bounds each dial (with 30 s TCP keep-alives).
	DialTimeout            time.Duration
	TLSHandshakeTimeout    time.Duration
	ForceAttemptHTTP2      bool
	MaxIdleConns           int
	MaxIdleConnsPerHost    int
	IdleConnTimeout        time.Duration
	ResponseHeaderTimeout  time.Duration
	ExpectContinueTimeout  time.Duration
	MaxResponseHeaderBytes int64
	DisableCompression     bool // bytes pass through as received
	DisableKeepAlives      bool
	// Untrusted dials through httpx/safedial: a host that resolves to a
	// link-local, multicast or unspecified address is refused (provider
	// URLs from the index).
	Untrusted bool
}

// NewTransport returns the transport opt describes: the one place ron
// builds an http.Transport.
func NewTransport(opt TransportOptions) *http.Transport {
	t := &http.Transport{}
	if opt.Base == BaseDefault {
		t = http.DefaultTransport.(*http.Transport).Clone()
	}
	if opt.DialTimeout > 0 {
		t.DialContext = (&net.Dialer{Timeout: opt.DialTimeout, KeepAlive: keepAlive}).DialContext
	}
	setIf(&t.TLSHandshakeTimeout, opt.TLSHandshakeTimeout)
	setIf(&t.MaxIdleConns, opt.MaxIdleConns)
	setIf(&t.MaxIdleConnsPerHost, opt.MaxIdleConnsPerHost)
	setIf(&t.IdleConnTimeout, opt.IdleConnTimeout)
	setIf(&t.ResponseHeaderTimeout, opt.ResponseHeaderTimeout)
	setIf(&t.ExpectContinueTimeout, opt.ExpectContinueTimeout)
	setIf(&t.MaxResponseHeaderBytes, opt.MaxResponseHeaderBytes)
	t.ForceAttemptHTTP2 = t.ForceAttemptHTTP2 || opt.ForceAttemptHTTP2
	t.DisableCompression = t.DisableCompression || opt.DisableCompression
	t.DisableKeepAlives = t.DisableKeepAlives || opt.DisableKeepAlives
	if opt.Untrusted {
		t = safedial.Guard(t)
	}
	return t
}

// setIf sets *dst to v when v is not zero.
func setIf[T int | int64 | time.Duration](dst *T, v T) {
	if v != 0 {
		*dst = v
	}
}

// NoRedirects is the http.Client CheckRedirect of every call to a peer or
// a provider: a redirect is the answer and is never followed (following it
// would send the call, and its bearer, to a host the caller did not pick).
func NoRedirects(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
