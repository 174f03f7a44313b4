package objects

import (
	"context"
	"time"

	"github.com/ronhq/ron/store"
	"github.com/ronhq/ron/store/verified"
	"github.com/ronhq/ron/store/verified/vfetch"
)

// probe is what a source told about an object before its body: its Bao
// outboard, with the size the source claims (proven once the last group
// verified, or by proveSize).
type probe struct {
	req  *vfetch.Requester
	base string
	tree verified.Tree
}

// probe asks src for id's outboard: GET {base}/o/{b3}/outboard, the
// in-process storage included.
func (o *Objects) probe(ctx context.Context, src *Source, id store.ID, timeout time.Duration) (*probe, error) {
	p := &probe{req: o.req(src, timeout), base: src.BaseURL}
	t, err := p.req.Outboard(ctx, p.base, id)
	if err != nil {
		return nil, err
	}
	p.tree = t
	return p, nil
}

// size is the object's size as the outboard states it.
func (p *probe) size() int64 { return p.tree.Size }

// whole opens the whole body: GET /o/{b3}, every group verified against
// the id.
func (p *probe) whole(ctx context.Context) (*vfetch.Body, error) {
	return p.span(ctx, 0, p.tree.Count()-1)
}

// span opens groups first..last of the object: without Range when they
// cover it (200), else the group-aligned Range (206 with exactly that
// Content-Range).
func (p *probe) span(ctx context.Context, first, last int) (*vfetch.Body, error) {
	return p.req.Open(ctx, p.base, p.tree, first, last)
}

// proveSize proves the size the outboard states by reading the last group
// (vfetch.ProveSize; nothing when it is proven already).
func (p *probe) proveSize(ctx context.Context) error { return p.req.ProveSize(ctx, p.base, p.tree) }
