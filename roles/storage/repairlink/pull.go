package repairlink

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/ronhq/ron/roles/index/indexapi"
	"github.com/ronhq/ron/roles/storage/repair"
	"github.com/ronhq/ron/runtime/cluster"
	"github.com/ronhq/ron/runtime/cluster/placement"
	"github.com/ronhq/ron/store"
	"github.com/ronhq/ron/store/verified/vfetch"
)

// Provider lookups of repair pulls.
const (
	// providerLookups is how many index members a pull asks for providers.
	providerLookups = 2
	// providerLookupTimeout bounds one GET /providers/{b3}.
	providerLookupTimeout = 5 * time.Second
	// maxProvidersReply bounds its answer.
	maxProvidersReply = 256 << 10
	// repairUserAgent names repair's requests.
	repairUserAgent = "ron-storage-repair"
)

// Pull fetches id with the verified transfer of docs/storage.md §4 (every
// 64 KiB group proven against the id) from the index's providers, then
// from sources (T, then the other alive members), skipping this node, and
// commits it as a normal write (announced). An id
// held again by the time the pull runs moves nothing.
func (l *Link) Pull(ctx context.Context, id store.ID, sources []string, m repair.Meter) error {
	if held, err := l.opt.Engine.Has(ctx, []store.ID{id}); err == nil && held[0] {
		return nil // restored meanwhile (a holder's push)
	}
	v := l.opt.Members.View()
	self, _ := v.Member(v.Self)
	candidates := dedupe(append(l.providerURLs(ctx, v, id), sources...), self.URL(placement.Role))
	last := errors.New("no other holder is known")
	for _, base := range candidates {
		err := l.pullFrom(ctx, base, id, m)
		if err == nil {
			return nil
		}
		var fail *repair.Failure
		if ctx.Err() != nil || errors.As(err, &fail) {
			return err
		}
		last = fmt.Errorf("%s: %w", base, err)
	}
	return repair.Fail(reasonSource, last)
}

// dedupe drops repeats and skip from urls, keeping the first order.
func dedupe(urls []string, skip string) []string {
	seen := map[string]bool{skip: true, "": true}
	out := make([]string, 0, len(urls))
	for _, u := range urls {
		if !seen[u] {
			seen[u] = true
			out = append(out, u)
		}
	}
	return out
}

// requester is the verified transfer's client for repair pulls: the node
// token, replica_stall_timeout per phase.
func (l *Link) requester() *vfetch.Requester {
	return &vfetch.Requester{HTTP: l.http, Timeout: l.opt.Stall(), UserAgent: repairUserAgent, Prepare: l.bearer}
}

// bearer adds the node token to a node-to-node request (none when it
// cannot be had: the peer then answers 401, which fails that source).
func (l *Link) bearer(req *http.Request) {
	if l.opt.Token == nil {
		return
	}
	if tok, err := l.opt.Token(req.Context()); err == nil && tok != "" {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
}

// pullFrom fetches id from base: the outboard, then the whole body, every
// 64 KiB group verified against the id before the engine sees it, paced by
// m, into the engine. A source without outboards (a ron from before
// verified streaming) fails with vfetch.ErrNoOutboard. A failure to store
// it is a *repair.Failure (no other source would help).
func (l *Link) pullFrom(ctx context.Context, base string, id store.ID, m repair.Meter) error {
	req := l.requester()
	t, err := req.Outboard(ctx, base, id)
	if err != nil {
		return err
	}
	body := io.Reader(http.NoBody)
	ctype := ""
	if t.Size > 0 {
		b, err := req.Open(ctx, base, t, 0, t.Count()-1)
		if err != nil {
			return err
		}
		defer b.Close()
		body, ctype = m.Reader(ctx, t.Size, b), b.ContentType
	}
	info, _, err := l.opt.Engine.Put(ctx, body, store.PutOptions{Want: &id, Meta: store.Meta{ContentType: ctype},
		MaxBytes: l.opt.MaxObjectBytes()})
	if err != nil {
		if isCommitError(err) {
			return repair.Fail(reasonCommit, err)
		}
		return err
	}
	l.opt.Announce(info)
	return nil
}

// isCommitError reports a failure of this node's store rather than of the
// source's bytes.
func isCommitError(err error) bool {
	return errors.Is(err, store.ErrNoSpace) || errors.Is(err, store.ErrTooLarge) || errors.Is(err, store.ErrClosed) ||
		errors.Is(err, store.ErrBadMeta)
}

// providerURLs asks up to providerLookups alive index members, owners of
// id's provider records first, for its providers (GET /providers/{b3});
// the first answer counts, failures give none.
func (l *Link) providerURLs(ctx context.Context, v *cluster.View, id store.ID) []string {
	members := placement.Ranked(v.Alive(indexapi.RoleName), id)
	for i, m := range members {
		if i == providerLookups || ctx.Err() != nil {
			break
		}
		if urls, err := l.lookupProviders(ctx, m.URL(indexapi.RoleName), id); err == nil {
			return urls
		}
	}
	return nil
}

// lookupProviders is one GET {index}/providers/{b3}: the providers' base
// URLs in the index's order; 404 is an empty answer.
func (l *Link) lookupProviders(ctx context.Context, base string, id store.ID) ([]string, error) {
	if base == "" {
		return nil, errors.New("no index URL")
	}
	ctx, cancel := context.WithTimeout(ctx, providerLookupTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/providers/"+id.String()+"?limit=20", nil)
	if err != nil {
		return nil, err
	}
	l.bearer(req)
	resp, err := l.http.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusNotFound {
		return nil, nil
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("index answered %d", resp.StatusCode)
	}
	return indexapi.DecodeProviderAddrs(resp.Body, maxProvidersReply)
}
