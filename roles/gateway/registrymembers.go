package gateway

import (
	"context"
	"slices"

	"github.com/ronhq/ron/roles/registry/registryapi"
	"github.com/ronhq/ron/roles/registry/registryapi/descriptor"
	"github.com/ronhq/ron/runtime/topology"
)

// registryMembers is the registryapi.Client over a cluster's alive registry
// members: each call goes to the members in ranked order, falling back to
// the next on a failure another member may not have (topology.ReadAgain;
// Approve, the one call that is not idempotent, only when the member was
// unreachable). A Watch follows the member that accepted it and ends (its
// channel closes) when that member leaves the pool, so the caller's
// reconnection reaches an alive one.
type registryMembers struct {
	pool *topology.Pool[*registryapi.HTTPClient]
}

var _ registryapi.Client = (*registryMembers)(nil)

// Head implements registryapi.Client.
func (r *registryMembers) Head(ctx context.Context) (registryapi.Head, error) {
	return topology.Try(ctx, r.pool, nil, topology.ReadAgain, func(c *registryapi.HTTPClient) (registryapi.Head, error) {
		return c.Head(ctx)
	})
}

// artifact is Get's two results.
type artifact struct {
	art  descriptor.Artifact
	body []byte
}

// Get implements registryapi.Client.
func (r *registryMembers) Get(ctx context.Context, v uint64) (descriptor.Artifact, []byte, error) {
	a, err := topology.Try(ctx, r.pool, nil, topology.ReadAgain, func(c *registryapi.HTTPClient) (artifact, error) {
		art, body, err := c.Get(ctx, v)
		return artifact{art, body}, err
	})
	return a.art, a.body, err
}

// Watch implements registryapi.Client: the first member accepting the watch
// serves it until it leaves the pool or ctx ends. One goroutine per call
// (owned by the call, ending with it) cancels the watch when its member
// leaves.
func (r *registryMembers) Watch(ctx context.Context, since *uint64) (<-chan registryapi.Update, error) {
	wctx, cancel := context.WithCancel(ctx)
	var used *registryapi.HTTPClient
	ch, err := topology.Try(wctx, r.pool, nil, topology.ReadAgain, func(c *registryapi.HTTPClient) (<-chan registryapi.Update, error) {
		used = c
		return c.Watch(wctx, since)
	})
	if err != nil {
		cancel()
		return nil, err
	}
	go r.follow(wctx, cancel, used) // registry-member-watch: ends with wctx
	return ch, nil
}

// follow cancels a watch once its member's client is no longer in the pool
// (or ctx ended).
func (r *registryMembers) follow(ctx context.Context, cancel context.CancelFunc, member *registryapi.HTTPClient) {
	defer cancel()
	r.pool.WaitFor(ctx, func(es []topology.Entry[*registryapi.HTTPClient]) bool {
		return !slices.ContainsFunc(es, func(e topology.Entry[*registryapi.HTTPClient]) bool { return e.Value == member })
	})
}

// Propose implements registryapi.Client (idempotent).
func (r *registryMembers) Propose(ctx context.Context, req descriptor.ProposeRequest) (registryapi.Proposed, error) {
	return topology.Try(ctx, r.pool, nil, topology.ReadAgain, func(c *registryapi.HTTPClient) (registryapi.Proposed, error) {
		return c.Propose(ctx, req)
	})
}

// ProposeRaw implements registryapi.Client (idempotent).
func (r *registryMembers) ProposeRaw(ctx context.Context, body []byte) (registryapi.Proposed, error) {
	return topology.Try(ctx, r.pool, nil, topology.ReadAgain, func(c *registryapi.HTTPClient) (registryapi.Proposed, error) {
		return c.ProposeRaw(ctx, body)
	})
}

// Proposals implements registryapi.Client.
func (r *registryMembers) Proposals(ctx context.Context) ([]registryapi.ProposalSummary, error) {
	return topology.Try(ctx, r.pool, nil, topology.ReadAgain, func(c *registryapi.HTTPClient) ([]registryapi.ProposalSummary, error) {
		return c.Proposals(ctx)
	})
}

// Proposal implements registryapi.Client.
func (r *registryMembers) Proposal(ctx context.Context, id string) (registryapi.Proposal, error) {
	return topology.Try(ctx, r.pool, nil, topology.ReadAgain, func(c *registryapi.HTTPClient) (registryapi.Proposal, error) {
		return c.Proposal(ctx, id)
	})
}

// Approve implements registryapi.Client (another member only when unreachable).
func (r *registryMembers) Approve(ctx context.Context, id string, ap descriptor.Approval) (registryapi.ApprovalResult, error) {
	return topology.Try(ctx, r.pool, nil, topology.WriteAgain, func(c *registryapi.HTTPClient) (registryapi.ApprovalResult, error) {
		return c.Approve(ctx, id, ap)
	})
}

// Commit implements registryapi.Client (idempotent).
func (r *registryMembers) Commit(ctx context.Context, id string) (registryapi.Committed, error) {
	return topology.Try(ctx, r.pool, nil, topology.ReadAgain, func(c *registryapi.HTTPClient) (registryapi.Committed, error) {
		return c.Commit(ctx, id)
	})
}
