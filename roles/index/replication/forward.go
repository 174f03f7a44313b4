package replication

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"

	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/httpx/client"
	"github.com/ronhq/ron/httpx/client/hedge"
	"github.com/ronhq/ron/roles/index/indexdb"
	"github.com/ronhq/ron/roles/index/ownership"
	"github.com/ronhq/ron/runtime/cluster"
)

// Relayed is the primary's raw answer to a forwarded write.
type Relayed struct {
	status int
	header http.Header
	body   []byte
}

// relayHeaders are the primary's answer headers passed on to the client.
var relayHeaders = []string{"Content-Type", "ETag", "Cache-Control", "Retry-After", "WWW-Authenticate",
	"X-Content-Type-Options"}

// relayStatuses are the non-2xx statuses a forwarded write hands back as
// answers (every 3xx, 4xx and 5xx) instead of errors.
var relayStatuses = func() []int {
	out := make([]int, 0, 300)
	for s := 300; s < 600; s++ {
		out = append(out, s)
	}
	return out
}()

// Write sends the relayed answer to the client unchanged: its status, body
// and the headers of relayHeaders.
func (r *Relayed) Write(w http.ResponseWriter) error {
	hd := w.Header()
	for _, k := range relayHeaders {
		if v := r.header.Values(k); len(v) > 0 {
			hd[k] = v
		}
	}
	hd.Set("Content-Length", strconv.Itoa(len(r.body)))
	w.WriteHeader(r.status)
	_, err := w.Write(r.body)
	return err
}

// result decodes the relayed answer: a record (PUT) or deletion (DELETE)
// on 2xx (indexdb.Record's JSON form), else the envelope as an
// *httpx.Error.
func (r *Relayed) result() (indexdb.Record, error) {
	if r.status/100 != 2 {
		return indexdb.Record{}, httpx.DecodeError(r.status, r.body)
	}
	var rec indexdb.Record
	if err := json.Unmarshal(r.body, &rec); err != nil {
		return indexdb.Record{}, httpx.NewError(http.StatusBadGateway, httpx.CodeUpstreamUnavailable,
			"primary answered an invalid record: %v", err)
	}
	return rec, nil
}

// forward sends the write to the primary with this node's token, the
// same preconditions and X-Ron-Forwarded, and returns its answer raw.
func (n *Node) forward(ctx context.Context, primary cluster.Member, w NameWrite, corrID string) Outcome {
	c, err := n.peers.WriteClient(primary.ID)
	if err != nil {
		return Outcome{Err: err}
	}
	req := forwardRequest(w, n.ownership().Self(), corrID)
	rl := &Relayed{}
	req.Validate = func(resp *http.Response) error {
		body, err := io.ReadAll(io.LimitReader(resp.Body, hedge.MaxAnswer))
		if err != nil {
			return fmt.Errorf("read the primary's answer: %w", err)
		}
		rl.status, rl.header, rl.body = resp.StatusCode, resp.Header.Clone(), body
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, ownership.ForwardTimeout)
	defer cancel()
	if _, err := c.Do(ctx, req); err != nil {
		return Outcome{Err: errForward(primary.ID, err)}
	}
	return Outcome{Relay: rl}
}

// errForward is the answer to a forwarded write the primary did not answer
// (unreachable, timed out, breaker open): 503 upstream_unavailable, as
// every cluster name write that cannot confirm W_idx copies
// (docs/cluster.md §6; the outcome may be unknown, so retry with
// If-Match). A 503 of the client (its breaker's Retry-After) is kept.
func errForward(primary string, err error) error {
	if he := (*httpx.Error)(nil); errors.As(err, &he) && he.Status == http.StatusServiceUnavailable {
		return err
	}
	return httpx.NewError(http.StatusServiceUnavailable, httpx.CodeUpstreamUnavailable,
		"the name's primary %s did not answer; the write's outcome is unknown", primary).
		WithDetails(map[string]any{"primary": primary})
}

// forwardRequest is the request forwarding w to its primary.
func forwardRequest(w NameWrite, self, corrID string) *client.Request {
	hdr := http.Header{HeaderForwarded: {self}, "Accept": {"application/json"}}
	if corrID != "" {
		hdr.Set("X-Corr-ID", corrID)
	}
	if k, v := w.Cond.Header(); k != "" {
		hdr.Set(k, v)
	}
	req := &client.Request{Method: http.MethodDelete, Path: "/names/" + w.Name, Header: hdr,
		Retry: client.RetryNever, Op: "DELETE /names/{name}", AcceptStatus: relayStatuses}
	if !w.Delete {
		req.Method, req.Op = http.MethodPut, "PUT /names/{name}"
		req.Body = bytes.NewReader([]byte(`{"b3":"` + w.Target.String() + `"}`))
		hdr.Set("Content-Type", "application/json")
	}
	return req
}
