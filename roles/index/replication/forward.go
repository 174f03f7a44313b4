package replication

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"

	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/httpx/client"
	"github.com/ronhq/ron/httpx/client/hedge"
	"github.com/ronhq/ron/roles/index/indexapi"
	"github.com/ronhq/ron/roles/index/indexdb"
	"github.com/ronhq/ron/roles/index/ownership"
)

// Relayed is the leader's raw answer to a forwarded write.
type Relayed struct {
	status int
	header http.Header
	body   []byte
}

// relayHeaders are the leader's answer headers passed on to the client.
var relayHeaders = []string{"Content-Type", "ETag", "Cache-Control", "Retry-After", "WWW-Authenticate",
	"X-Content-Type-Options", indexapi.HeaderAppliedIndex, indexapi.HeaderKnownLeader, indexapi.HeaderLastContact}

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
			"the leader answered an invalid record: %v", err)
	}
	return rec, nil
}

// forward sends the write to the leader's index with this node's token,
// the same preconditions and X-Ron-Forwarded, and returns its answer raw;
// sent is false when the leader could not be reached at all (the answer is
// then 503 no_quorum, not_written).
func (n *Node) forward(ctx context.Context, leader string, w NameWrite, corrID string) (out Outcome, sent bool) {
	return n.send(ctx, leader, forwardRequest(w, n.ownership().Self(), corrID))
}

// send sends req to the leader's index under ownership.ForwardTimeout and
// returns its answer raw; sent is false when the leader could not be
// reached at all (not a member here, connection refused or timed out).
func (n *Node) send(ctx context.Context, leader string, req *client.Request) (out Outcome, sent bool) {
	c, err := n.peers.WriteClient(leader)
	if err != nil {
		return Outcome{Err: notSentError(leader)}, false
	}
	rl := &Relayed{}
	req.Validate = func(resp *http.Response) error {
		body, err := io.ReadAll(io.LimitReader(resp.Body, hedge.MaxAnswer))
		if err != nil {
			return fmt.Errorf("read the leader's answer: %w", err)
		}
		rl.status, rl.header, rl.body = resp.StatusCode, resp.Header.Clone(), body
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, ownership.ForwardTimeout)
	defer cancel()
	if _, err := c.Do(ctx, req); err != nil {
		if client.IsUnreachable(err) || errors.Is(err, client.ErrBreakerOpen) {
			return Outcome{Err: notSentError(leader)}, false
		}
		return Outcome{Err: errForward(leader, err)}, true
	}
	return Outcome{Relay: rl}, true
}

// ForwardRead sends a name read (u: its path and query, ?consistent=1
// included) to the leader's index with this node's token and
// X-Ron-Forwarded, and returns its answer raw (docs/cluster.md §14).
func (n *Node) ForwardRead(ctx context.Context, leader string, u *url.URL, corrID string) Outcome {
	hdr := http.Header{HeaderForwarded: {n.ownership().Self()}, "Accept": {"application/json"}}
	if corrID != "" {
		hdr.Set("X-Corr-ID", corrID)
	}
	out, _ := n.send(ctx, leader, &client.Request{Method: http.MethodGet, Path: u.Path, Query: u.Query(), Header: hdr,
		Retry: client.RetryNever, Op: "GET /names/{name}", AcceptStatus: relayStatuses})
	return out
}

// notSentError is the answer to a write the leader could not be sent (it
// was not reachable): 503 no_quorum, not_written; the client retries.
func notSentError(leader string) error {
	return httpx.NoQuorum(httpx.OutcomeNotWritten, leader,
		"the control-plane leader %s could not be reached; nothing was written, retry", leader)
}

// errForward is the answer to a forwarded write the leader did not answer
// (unreachable, timed out, breaker open): 503 no_quorum; the outcome may
// be unknown, so retry with If-Match (docs/cluster.md §14). A 503 of the
// client (its breaker's Retry-After) is kept.
func errForward(leader string, err error) error {
	if he := (*httpx.Error)(nil); errors.As(err, &he) && he.Status == http.StatusServiceUnavailable {
		return err
	}
	return httpx.NoQuorum(httpx.OutcomeUnknown, leader,
		"the control-plane leader %s did not answer; the write's outcome is unknown, retry with If-Match", leader)
}

// forwardRequest is the request forwarding w to the leader.
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
