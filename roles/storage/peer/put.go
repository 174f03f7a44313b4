package peer

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/ronhq/ron/store"
)

// SourceError marks a PutReplica that failed because reading body failed
// (for a coordinator: its own verified read), not because of the target.
// It is the Err of a *PutError with Reason "connection".
type SourceError struct{ Err error }

func (e *SourceError) Error() string { return "reading the local copy: " + e.Err.Error() }

// Unwrap returns the body's error.
func (e *SourceError) Unwrap() error { return e.Err }

// PutReplica streams size bytes of body to PUT {base}/o/{id} with
// X-Ron-Replica: 1, Expect: 100-continue, Content-Length: size and, when
// contentType is not empty, Content-Type. existing reports that the target
// already held id: it answered 200 (before any body byte was sent when it
// answered within ExpectContinueTimeout); 201 and other 2xx answers are new
// copies. Failures are *PutError: Reason "stall" when no body byte was taken
// (or no answer came) for Options.Stall, "connection" when there was no HTTP
// answer (Err is a *SourceError when body itself failed), otherwise the
// mapping of the status (507, 429, 5xx, 409, other).
func (c *Client) PutReplica(ctx context.Context, base string, id store.ID, size int64, contentType string, body io.Reader) (existing bool, err error) {
	target, err := endpoint(base, "/o/"+id.String())
	if err != nil {
		return false, &PutError{Reason: ReasonConnection, Err: err}
	}
	ctx, wd := watch(ctx, c.opt.Stall)
	defer wd.stop()
	pr := &progressReader{r: body, w: wd}
	req, err := c.putRequest(ctx, target, size, contentType, pr)
	if err != nil {
		return false, &PutError{Reason: ReasonConnection, Err: err}
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		if src := pr.sourceErr(); src != nil {
			return false, &PutError{Reason: ReasonConnection, Err: &SourceError{src}}
		}
		return false, c.transportError(ctx, err)
	}
	wd.kick()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		defer discard(resp.Body, maxReplyBytes)
		return false, statusError(resp)
	}
	discard(resp.Body, maxReplyBytes)
	return resp.StatusCode == http.StatusOK, nil
}

// putRequest builds the replica PUT. An empty object is sent with
// http.NoBody so that Content-Length: 0 goes out (not chunked).
func (c *Client) putRequest(ctx context.Context, target string, size int64, contentType string, body io.Reader) (*http.Request, error) {
	if size < 0 {
		return nil, fmt.Errorf("peer: replica size %d is negative", size)
	}
	var rd io.Reader = body
	if size == 0 {
		rd = http.NoBody
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, target, rd)
	if err != nil {
		return nil, err
	}
	req.ContentLength = size
	req.Header.Set(HeaderReplica, replicaValue)
	if size > 0 {
		req.Header.Set("Expect", "100-continue")
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if err := c.authorize(ctx, req); err != nil {
		return nil, fmt.Errorf("peer: node token: %w", err)
	}
	return req, nil
}

// endpoint joins a storage base URL (http or https, no query) and a path.
func endpoint(base, path string) (string, error) {
	u, err := url.Parse(base)
	if err != nil {
		return "", fmt.Errorf("peer: base URL: %w", err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return "", fmt.Errorf("peer: base URL %q: want http(s)://host[:port][/path]", base)
	}
	return strings.TrimSuffix(base, "/") + path, nil
}
