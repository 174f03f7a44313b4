package sites

import (
	"context"
	"errors"
	"net/http"

	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/roles/index/indexapi"
	"github.com/ronhq/ron/store"
)

// ErrTooLarge is wrapped by Objects.ReadAll when the object is larger than
// the limit it was given. Also understood as "too large": a *httpx.Error
// with status 413, or 502 malformed with details.reason "too_large" (what
// the gateway's storage and provider reads answer).
var ErrTooLarge = errors.New("sites: object larger than the limit")

// Objects is how sites reads object bytes; the gateway implements it with
// its /o read path (docs/gateway.md §4).
type Objects interface {
	// Head returns the object's stored Content-Type (parameters included)
	// or an *httpx.Error (404 not_found, 502, 503, 504 ...).
	Head(ctx context.Context, id store.ID) (contentType string, err error)
	// ReadAll returns the whole object if it is at most max bytes; a larger
	// object fails with an error wrapping ErrTooLarge (or another form
	// ErrTooLarge lists). The bytes need not be verified: sites checks them
	// against id.
	ReadAll(ctx context.Context, id store.ID, max int64) ([]byte, error)
	// Serve answers the GET or HEAD r with id's bytes exactly like
	// GET /o/{b3} (Range, conditionals), with the headers in set replacing
	// the generated ones (Content-Type, Cache-Control, ETag). It may write
	// the response; when it returns an error without writing, the caller
	// writes the error.
	Serve(w http.ResponseWriter, r *http.Request, id store.ID, set http.Header) error
}

// Resolver resolves a name or name@version to its target id.
type Resolver interface {
	// Resolve returns key's target. Unknown or deleted names fail with a
	// 404 *httpx.Error; the index's 503 and 504 pass through.
	Resolve(ctx context.Context, key string) (store.ID, error)
}

// IndexResolver adapts an indexapi.Client: Resolve(ctx, key, false), with the
// answer's target parsed as an id (a target that does not parse is 502
// upstream_unavailable). Errors of the client pass through unchanged.
func IndexResolver(c indexapi.Client) Resolver { return indexResolver{c: c} }

type indexResolver struct{ c indexapi.Client }

func (r indexResolver) Resolve(ctx context.Context, key string) (store.ID, error) {
	ans, err := r.c.Resolve(ctx, key, false)
	if err != nil {
		return store.ID{}, err
	}
	id, err := store.ParseID(ans.Target)
	if err != nil {
		return store.ID{}, httpx.NewError(http.StatusBadGateway, httpx.CodeUpstreamUnavailable,
			"index answered a malformed target").WithDetails(map[string]any{"reason": "bad_target"})
	}
	return id, nil
}

// upstreamError maps an error of Objects or Resolver onto the envelope: an
// *httpx.Error anywhere in the chain is returned as is, a deadline becomes
// 504 timeout, anything else 502 upstream_unavailable.
func upstreamError(err error) error {
	var he *httpx.Error
	switch {
	case errors.As(err, &he):
		return he
	case errors.Is(err, context.DeadlineExceeded):
		return httpx.NewError(http.StatusGatewayTimeout, httpx.CodeTimeout, "upstream timed out")
	}
	return httpx.NewError(http.StatusBadGateway, httpx.CodeUpstreamUnavailable, "upstream failed")
}

// isNotFound reports whether err is a 404 envelope (the only cached error).
func isNotFound(err error) bool {
	var he *httpx.Error
	return errors.As(err, &he) && he.Status == http.StatusNotFound
}

// isTooLarge reports whether a ReadAll error means "over the limit".
func isTooLarge(err error) bool {
	var he *httpx.Error
	switch {
	case errors.Is(err, ErrTooLarge):
		return true
	case !errors.As(err, &he):
		return false
	}
	return he.Status == http.StatusRequestEntityTooLarge ||
		(he.Status == http.StatusBadGateway && he.Code == httpx.CodeMalformed && he.Details["reason"] == "too_large")
}

// cloneError returns a shallow copy of a cached *httpx.Error, so that a
// caller setting fields on the error it got cannot change later answers.
func cloneError(err error) error {
	he, ok := err.(*httpx.Error)
	if !ok {
		return err
	}
	c := *he
	return &c
}
