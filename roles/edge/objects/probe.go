package objects

import (
	"context"
	"fmt"
	"time"

	"github.com/ronhq/ron/store"
	"github.com/ronhq/ron/store/verified"
	"github.com/ronhq/ron/store/verified/vfetch"
)

// probe is what a source told about an object before its body: the size
// and, over HTTP, the chunk list; in-process, the open whole-body answer.
type probe struct {
	req  *vfetch.Requester
	base string
	id   store.ID
	size int64
	list *verified.List
	b    *vfetch.Body // in-process: the whole-body answer until whole takes it
}

// probe asks src about id: GET {base}/o/{b3}/chunks over HTTP; in-process
// GET /o/{b3} itself, whose Content-Length gives the size.
func (o *Objects) probe(ctx context.Context, src *Source, id store.ID, timeout time.Duration) (*probe, error) {
	p := &probe{req: o.req(src, timeout), base: src.BaseURL, id: id}
	if !src.InProcess {
		l, err := p.req.List(ctx, p.base, id)
		if err != nil {
			return nil, err
		}
		p.list, p.size = &l, l.Size
		return p, nil
	}
	b, size, err := p.req.OpenWhole(ctx, p.base, id)
	if err != nil {
		return nil, err
	}
	p.b, p.size = b, size
	return p, nil
}

// close releases the in-process answer when whole did not take it.
func (p *probe) close() {
	if p.b != nil {
		p.b.Close()
		p.b = nil
	}
}

// whole opens the whole body: in-process the answer probe opened, hashed
// whole; over HTTP GET /o/{b3}, verified chunk by chunk against the list
// and by the whole hash.
func (p *probe) whole(ctx context.Context) (*vfetch.Body, error) {
	if p.b != nil {
		b := p.b
		p.b = nil
		return b, nil
	}
	if p.list == nil {
		return nil, fmt.Errorf("%w: the in-process answer was already read", vfetch.ErrProtocol)
	}
	return p.open(ctx, 0, p.list.Count()-1)
}

// span opens chunks first..last of the object (the whole body when they
// cover it). In-process, the chunk list is fetched first.
func (p *probe) span(ctx context.Context, first, last int) (*vfetch.Body, error) {
	if err := p.ensureList(ctx); err != nil {
		return nil, err
	}
	return p.open(ctx, first, last)
}

// ensureList fetches the chunk list when the probe has none (in-process),
// releasing the whole-body answer.
func (p *probe) ensureList(ctx context.Context) error {
	if p.list != nil {
		return nil
	}
	p.close()
	l, err := p.req.List(ctx, p.base, p.id)
	if err != nil {
		return err
	}
	if l.Size != p.size {
		return fmt.Errorf("%w: chunk list of %d bytes for a body of %d", vfetch.ErrProtocol, l.Size, p.size)
	}
	p.list = &l
	return nil
}

// open requests chunks first..last of the list: without Range for the
// whole object (200, whole hash checked), else the chunk-aligned Range (206
// with exactly that Content-Range).
func (p *probe) open(ctx context.Context, first, last int) (*vfetch.Body, error) {
	return p.req.Open(ctx, p.base, p.id, *p.list, first, last)
}
