package hedge

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"syscall"

	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/httpx/client"
)

// ErrInvalidAnswer marks an answer that failed the docs/index.md §6 checks (not strict
// JSON, over 1 MiB, wrong key, expired records). It is a final failure.
var ErrInvalidAnswer = errors.New("hedge: invalid answer")

// errSkipped is recorded for a peer skipped because it was unavailable.
var errSkipped = errors.New("skipped: circuit breaker open")

// DefaultTransient is the default Options.Transient (docs/index.md §6 Retries): connection
// refused or reset, EOF, network errors, and 502/503/504 answers (envelope
// codes timeout, upstream_unavailable, busy-as-503) are transient. Context
// ends, an open breaker, ErrInvalidAnswer, 429 and other 4xx are final.
func DefaultTransient(err error) bool {
	switch {
	case err == nil, errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded),
		isSkip(err), errors.Is(err, ErrInvalidAnswer):
		return false
	case errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET),
		errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return true
	}
	var he *httpx.Error
	if errors.As(err, &he) {
		return transientStatus(he)
	}
	var ne net.Error
	return errors.As(err, &ne)
}

func transientStatus(he *httpx.Error) bool {
	switch he.Status {
	case http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return true
	case http.StatusTooManyRequests:
		return false
	}
	return he.Status == 0 && (he.Code == httpx.CodeTimeout || he.Code == httpx.CodeUpstreamUnavailable)
}

// DefaultNotFound is the default Options.NotFound: ErrNotFound or an
// *httpx.Error with status 404.
func DefaultNotFound(err error) bool {
	if errors.Is(err, ErrNotFound) {
		return true
	}
	var he *httpx.Error
	return errors.As(err, &he) && he.Status == http.StatusNotFound
}

// isSkip reports a leg refused by its peer's breaker (docs/index.md §6: skipped peers).
func isSkip(err error) bool {
	return errors.Is(err, client.ErrBreakerOpen) || errors.Is(err, errSkipped)
}
