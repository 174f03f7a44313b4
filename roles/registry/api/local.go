package api

import (
	"context"

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
		return Head{}, httpx.LocalError(ctx, err)
	}
	return l.a.doHead(), nil
}

// Get implements Client like GET /registry/{version}.
func (l *LocalClient) Get(ctx context.Context, v uint64) (descriptor.Artifact, []byte, error) {
	body, err := l.a.doGet(v)
	if err != nil {
		return descriptor.Artifact{}, nil, httpx.LocalError(ctx, err)
	}
	art, err := checkArtifact(v, body)
	return art, body, httpx.LocalError(ctx, err)
}

// Watch implements Client over the hub: above stream_max_clients it is
// 429 busy, after the hub's Close 503 draining. One goroutine
// (registry-watch-local) per call serves the subscription until ctx ends
// or the hub closes, then closes the channel.
func (l *LocalClient) Watch(ctx context.Context, since *uint64) (<-chan Update, error) {
	h := l.a.hub
	if h.isClosed() {
		return nil, httpx.LocalError(ctx, errDraining())
	}
	if !h.acquire(l.a.settings().StreamMaxClients) {
		l.a.m.busy(endpointStream)
		return nil, httpx.LocalError(ctx, errBusy("too many registry streams"))
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
		return Proposed{}, httpx.LocalError(ctx, err)
	}
	return l.ProposeRaw(ctx, body)
}

// ProposeRaw implements Client like POST /registry/proposals.
func (l *LocalClient) ProposeRaw(ctx context.Context, body []byte) (Proposed, error) {
	p, err := l.a.doPropose(ctx, body, ulid.Make().String())
	return p, httpx.LocalError(ctx, err)
}

// Proposals implements Client like GET /registry/proposals.
func (l *LocalClient) Proposals(ctx context.Context) ([]ProposalSummary, error) {
	if err := ctx.Err(); err != nil {
		return nil, httpx.LocalError(ctx, err)
	}
	return l.a.c.OpenProposals(), nil
}

// Proposal implements Client like GET /registry/proposals/{id}.
func (l *LocalClient) Proposal(ctx context.Context, id string) (Proposal, error) {
	v, err := l.a.c.Proposal(id)
	if err != nil {
		return Proposal{}, httpx.LocalError(ctx, err)
	}
	return proposalOf(v), nil
}

// Approve implements Client like POST /registry/approvals/{id}.
func (l *LocalClient) Approve(ctx context.Context, id string, ap descriptor.Approval) (ApprovalResult, error) {
	body, err := encodeApproval(ap)
	if err != nil {
		return ApprovalResult{}, httpx.LocalError(ctx, err)
	}
	res, err := l.a.doApprove(ctx, id, body, ulid.Make().String())
	return res, httpx.LocalError(ctx, err)
}

// Commit implements Client like POST /registry/commit/{id}.
func (l *LocalClient) Commit(ctx context.Context, id string) (Committed, error) {
	cm, err := l.a.doCommit(ctx, id, ulid.Make().String())
	return cm, httpx.LocalError(ctx, err)
}
