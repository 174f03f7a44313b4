package api

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"

	"github.com/oklog/ulid/v2"

	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/roles/registry/descriptor"
)

// LocalClient is the in-process implementation of Client, for callers in
// the registry's own process. It runs the handlers' code (the API's do*
// methods and the hub), so it answers like HTTPClient: the same checks and
// *httpx.Error values, details normalised to their JSON form (numbers are
// float64, as a decoded envelope has them). It needs no token: in-process
// callers are trusted. Each write gets a fresh ULID corr id.
type LocalClient struct {
	a *API
}

var _ Client = (*LocalClient)(nil)

// NewLocalClient returns a client of a.
func NewLocalClient(a *API) *LocalClient { return &LocalClient{a: a} }

// Head implements Client.
func (l *LocalClient) Head(ctx context.Context) (Head, error) {
	if err := ctx.Err(); err != nil {
		return Head{}, localError(ctx, err)
	}
	return l.a.doHead(), nil
}

// Get implements Client like GET /registry/{version}.
func (l *LocalClient) Get(ctx context.Context, v uint64) (descriptor.Artifact, []byte, error) {
	body, err := l.a.doGet(v)
	if err != nil {
		return descriptor.Artifact{}, nil, localError(ctx, err)
	}
	art, err := checkArtifact(v, body)
	return art, body, localError(ctx, err)
}

// Watch implements Client over the hub: above stream_max_clients it is
// 429 busy, after the hub's Close 503 draining. One goroutine
// (registry-watch-local) per call serves the subscription until ctx ends
// or the hub closes, then closes the channel.
func (l *LocalClient) Watch(ctx context.Context, since *uint64) (<-chan Update, error) {
	h := l.a.hub
	if h.isClosed() {
		return nil, localError(ctx, errDraining())
	}
	if !h.acquire(l.a.settings().StreamMaxClients) {
		l.a.m.busy(endpointStream)
		return nil, localError(ctx, errBusy("too many registry streams"))
	}
	var last *uint64
	if since != nil {
		v := *since
		last = &v
	}
	out := make(chan Update, watchBuffer)
	go func() { // registry-watch-local: owned by ctx and the hub
		defer close(out)
		defer h.release()
		h.serve(ctx, chanSink{out: out}, last)
	}()
	return out, nil
}

// chanSink delivers a local subscription's updates to its channel,
// dropping the oldest when the consumer lags; comments are not delivered.
type chanSink struct{ out chan Update }

func (s chanSink) event(u Update) error {
	push(s.out, u)
	return nil
}

func (s chanSink) comment(string) error { return nil }

// Propose implements Client like POST /registry/proposals.
func (l *LocalClient) Propose(ctx context.Context, req descriptor.ProposeRequest) (Proposed, error) {
	body, err := encodePropose(req)
	if err != nil {
		return Proposed{}, localError(ctx, err)
	}
	return l.ProposeRaw(ctx, body)
}

// ProposeRaw implements Client like POST /registry/proposals.
func (l *LocalClient) ProposeRaw(ctx context.Context, body []byte) (Proposed, error) {
	p, err := l.a.doPropose(ctx, body, ulid.Make().String())
	return p, localError(ctx, err)
}

// Proposals implements Client like GET /registry/proposals.
func (l *LocalClient) Proposals(ctx context.Context) ([]ProposalSummary, error) {
	if err := ctx.Err(); err != nil {
		return nil, localError(ctx, err)
	}
	return l.a.c.OpenProposals(), nil
}

// Proposal implements Client like GET /registry/proposals/{id}.
func (l *LocalClient) Proposal(ctx context.Context, id string) (Proposal, error) {
	v, err := l.a.c.Proposal(id)
	if err != nil {
		return Proposal{}, localError(ctx, err)
	}
	return proposalOf(v), nil
}

// Approve implements Client like POST /registry/approvals/{id}.
func (l *LocalClient) Approve(ctx context.Context, id string, ap descriptor.Approval) (ApprovalResult, error) {
	body, err := encodeApproval(ap)
	if err != nil {
		return ApprovalResult{}, localError(ctx, err)
	}
	res, err := l.a.doApprove(ctx, id, body, ulid.Make().String())
	return res, localError(ctx, err)
}

// Commit implements Client like POST /registry/commit/{id}.
func (l *LocalClient) Commit(ctx context.Context, id string) (Committed, error) {
	cm, err := l.a.doCommit(ctx, id, ulid.Make().String())
	return cm, localError(ctx, err)
}

// localError turns err into the *httpx.Error HTTPClient would return: ctx
// ending maps as the HTTP client maps it (503 upstream_unavailable on
// cancel, 504 timeout on deadline) unless err already is an envelope,
// anything else is 500 internal, and details go through JSON so they
// compare equal to decoded ones.
func localError(ctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	var he *httpx.Error
	switch {
	case errors.As(err, &he):
	case errors.Is(ctx.Err(), context.Canceled):
		he = httpx.NewError(http.StatusServiceUnavailable, httpx.CodeUpstreamUnavailable, "request canceled")
	case ctx.Err() != nil:
		he = httpx.NewError(http.StatusGatewayTimeout, httpx.CodeTimeout, "upstream timed out")
	default:
		he = httpx.AsError(err)
	}
	c := *he
	if c.Details != nil {
		b, mErr := json.Marshal(c.Details)
		var d map[string]any
		if mErr == nil && json.Unmarshal(b, &d) == nil {
			c.Details = d
		}
	}
	return &c
}
