package httpapi

import (
	"context"

	"github.com/oklog/ulid/v2"

	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/roles/registry/committer"
	"github.com/ronhq/ron/roles/registry/registryapi"
	"github.com/ronhq/ron/roles/registry/registryapi/descriptor"
)

// LocalClient is the in-process implementation of registryapi.Client, for
// callers in the registry's own process. It runs the handlers' code (the
// API's do* methods and the hub), so it answers like
// registryapi.HTTPClient: the same checks and *httpx.Error values, details
// normalised to their JSON form (numbers are float64, as a decoded
// envelope has them). It needs no token: in-process
// callers are trusted. Each write gets a fresh ULID corr id.
type LocalClient struct {
	a *API
}

var _ registryapi.Client = (*LocalClient)(nil)

// NewLocalClient returns a client of a.
func NewLocalClient(a *API) *LocalClient { return &LocalClient{a: a} }

// Head implements registryapi.Client.
func (l *LocalClient) Head(ctx context.Context) (registryapi.Head, error) {
	if err := ctx.Err(); err != nil {
		return registryapi.Head{}, httpx.LocalError(ctx, err)
	}
	return l.a.doHead()
}

// Get implements registryapi.Client like GET /registry/{version}.
func (l *LocalClient) Get(ctx context.Context, v uint64) (descriptor.Artifact, []byte, error) {
	body, err := l.a.doGet(v)
	if err != nil {
		return descriptor.Artifact{}, nil, httpx.LocalError(ctx, err)
	}
	art, err := registryapi.CheckArtifact(v, body)
	return art, body, httpx.LocalError(ctx, err)
}

// Watch implements registryapi.Client over the hub: above
// stream_max_clients it is 429 busy, after the hub's Close 503 draining. One goroutine
// (registry-watch-local) per call serves the subscription until ctx ends
// or the hub closes, then closes the channel.
func (l *LocalClient) Watch(ctx context.Context, since *uint64) (<-chan registryapi.Update, error) {
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
	out := make(chan registryapi.Update, registryapi.WatchBuffer)
	go func() { // registry-watch-local: owned by ctx and the hub
		defer close(out)
		defer h.release()
		h.serve(ctx, chanSink{out: out}, last)
	}()
	return out, nil
}

// chanSink delivers a local subscription's updates to its channel,
// dropping the oldest when the consumer lags; comments are not delivered.
type chanSink struct{ out chan registryapi.Update }

func (s chanSink) event(u registryapi.Update) error {
	registryapi.PushLatest(s.out, u)
	return nil
}

func (s chanSink) comment(string) error { return nil }

// Propose implements registryapi.Client like POST /registry/proposals.
func (l *LocalClient) Propose(ctx context.Context, req descriptor.ProposeRequest) (registryapi.Proposed, error) {
	body, err := registryapi.ProposeBody(req)
	if err != nil {
		return registryapi.Proposed{}, httpx.LocalError(ctx, err)
	}
	return l.ProposeRaw(ctx, body)
}

// ProposeRaw implements registryapi.Client like POST /registry/proposals.
func (l *LocalClient) ProposeRaw(ctx context.Context, body []byte) (registryapi.Proposed, error) {
	p, err := l.a.doPropose(ctx, body, ulid.Make().String())
	return p, httpx.LocalError(ctx, err)
}

// Proposals implements registryapi.Client like GET /registry/proposals.
func (l *LocalClient) Proposals(ctx context.Context) ([]registryapi.ProposalSummary, error) {
	if err := ctx.Err(); err != nil {
		return nil, httpx.LocalError(ctx, err)
	}
	return l.a.c.OpenProposals(), nil
}

// Proposal implements registryapi.Client like GET /registry/proposals/{id}.
func (l *LocalClient) Proposal(ctx context.Context, id string) (registryapi.Proposal, error) {
	v, err := l.a.c.Proposal(id)
	if err != nil {
		return registryapi.Proposal{}, httpx.LocalError(ctx, err)
	}
	return proposalOf(v), nil
}

// Approve implements registryapi.Client like POST /registry/approvals/{id}.
func (l *LocalClient) Approve(ctx context.Context, id string, ap descriptor.Approval) (registryapi.ApprovalResult, error) {
	body, err := registryapi.ApprovalBody(ap)
	if err != nil {
		return registryapi.ApprovalResult{}, httpx.LocalError(ctx, err)
	}
	res, err := l.a.doApprove(ctx, id, body, ulid.Make().String())
	return res, httpx.LocalError(ctx, err)
}

// Commit implements registryapi.Client like POST /registry/commit/{id}.
func (l *LocalClient) Commit(ctx context.Context, id string) (registryapi.Committed, error) {
	cm, err := l.a.doCommit(ctx, id, ulid.Make().String())
	return cm, httpx.LocalError(ctx, err)
}

// proposalOf converts the committer's view (same JSON members).
func proposalOf(v committer.ProposalView) registryapi.Proposal {
	return registryapi.Proposal{ProposalID: v.ProposalID, Status: v.Status, Payload: v.Payload, PayloadB3: v.PayloadB3,
		Approvals: v.Approvals, Quorum: v.Quorum, ProposedAt: v.ProposedAt, ExpiresAt: v.ExpiresAt,
		CommittedVersion: v.CommittedVersion}
}
