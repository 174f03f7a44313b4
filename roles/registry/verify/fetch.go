package verify

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"

	"golang.org/x/mod/sumdb/tlog"

	"github.com/ronhq/ron/httpx"
)

// Response size caps: nothing the registry serves legitimately is larger.
const (
	maxSmall    = 64 << 10                  // checkpoint, key, head
	maxStatus   = 1 << 20                   // /registry/status
	maxTile     = tileWidth * tlog.HashSize // one full hash tile
	maxBundle   = tileWidth * (2 + maxLeaf) // 256 u16-prefixed leaves
	maxArtifact = maxLeaf                   // one artifact
)

// fetcher performs the verifier's GETs against one registry.
type fetcher struct {
	base string
	hc   *http.Client
	opt  Options
}

// get fetches base+path and returns the body of a 200 answer. A non-200
// answer becomes its *httpx.Error envelope; a dial failure an
// *UnreachableError; a body over limit an error.
func (f *fetcher) get(ctx context.Context, path string, limit int64) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, f.opt.RequestTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, f.base+path, nil)
	if err != nil {
		return nil, fmt.Errorf("verify: GET %s: %w", path, err)
	}
	resp, err := f.hc.Do(req)
	if err != nil {
		if isDialError(err) {
			return nil, &UnreachableError{URL: f.base, Err: err}
		}
		return nil, fmt.Errorf("verify: GET %s: %w", path, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return nil, fmt.Errorf("verify: GET %s: %w", path, err)
	}
	if resp.StatusCode != http.StatusOK {
		he := httpx.DecodeError(resp.StatusCode, body)
		return nil, he.WithDetails(withPath(he.Details, path))
	}
	if int64(len(body)) > limit {
		return nil, fmt.Errorf("verify: GET %s: body larger than %d bytes", path, limit)
	}
	return body, nil
}

// withPath adds the request path to an error's details.
func withPath(d map[string]any, path string) map[string]any {
	out := make(map[string]any, len(d)+1)
	for k, v := range d {
		out[k] = v
	}
	out["path"] = path
	return out
}

// isDialError reports whether err means the server could not be reached:
// the connection was never established.
func isDialError(err error) bool {
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return true
	}
	var dns *net.DNSError
	return errors.As(err, &dns)
}

// isGone reports whether err is a 410 answer.
func isGone(err error) bool {
	var he *httpx.Error
	return errors.As(err, &he) && he.Status == http.StatusGone
}
