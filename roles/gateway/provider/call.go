package provider

import (
	"net/http"

	"github.com/ronhq/ron/store/verified/vfetch"
)

// userAgent identifies the gateway's provider requests.
const userAgent = "ron-gateway"

// req is the requester of one provider request: the Fetcher's client, the
// Timeout in force now, no credentials or forwarded headers, the Fetcher's
// metrics (requests by code, phase timeouts) and its proven sizes.
func (f *Fetcher) req() *vfetch.Requester {
	return &vfetch.Requester{HTTP: f.http, Timeout: f.timeoutNow(), UserAgent: userAgent,
		OnTimeout: f.met.timeouts.Inc, OnStatus: f.met.request, Sizes: f.sizes}
}

// breakerFailure reports whether an answer's status counts against the
// provider's breaker: 500, 502, 503 and 504 do (docs/gateway.md §3.8).
func breakerFailure(code int) bool {
	switch code {
	case http.StatusInternalServerError, http.StatusBadGateway,
		http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return true
	}
	return false
}
