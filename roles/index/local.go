package index

import (
	"context"
	"strconv"

	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/roles/index/indexdb"
	"github.com/ronhq/ron/store"
)

// LocalClient is the in-process implementation of Client, used when the
// index runs in its caller's process. It calls the same code as the HTTP
// handlers (the Handlers' do* methods), so it answers like HTTPClient: the
// same validation, limits and *httpx.Error values, with details normalised
// to their JSON form (numbers are float64, as a decoded envelope has them).
// Writes need no token: in-process callers are trusted.
type LocalClient struct {
	h *Handlers
}

var _ Client = (*LocalClient)(nil)

// NewLocalClient returns a client of h.
func NewLocalClient(h *Handlers) *LocalClient { return &LocalClient{h: h} }

// Announce implements Client like POST /providers.
func (l *LocalClient) Announce(ctx context.Context, recs []indexdb.Announcement) (int, int, error) {
	res, err := l.h.doAnnounce(ctx, recs)
	return res.Accepted, res.Withdrawn, httpx.LocalError(ctx, err)
}

// Providers implements Client like GET /providers/{b3}; region "" is the
// index's Zone, as when the query has no region.
func (l *LocalClient) Providers(ctx context.Context, id store.ID, region string, limit int) (ProviderList, error) {
	if region == "" {
		region = l.h.settings().Zone
	}
	out, err := l.h.lookupProviders(ctx, id, region, limit, resolveOpts{})
	return out, httpx.LocalError(ctx, err)
}

// GetName implements Client like GET /names/{name}.
func (l *LocalClient) GetName(ctx context.Context, name string) (NameRecord, error) {
	if err := checkName(name); err != nil {
		return NameRecord{}, httpx.LocalError(ctx, err)
	}
	rec, err := l.h.lookupName(ctx, name, resolveOpts{})
	return rec, httpx.LocalError(ctx, err)
}

// GetNameVersion implements Client like GET /names/{name}@{version}.
func (l *LocalClient) GetNameVersion(ctx context.Context, name string, version uint64) (NameRecord, error) {
	if err := checkName(name); err != nil {
		return NameRecord{}, httpx.LocalError(ctx, err)
	}
	rec, err := l.h.lookupName(ctx, name+"@"+strconv.FormatUint(version, 10), resolveOpts{})
	return rec, httpx.LocalError(ctx, err)
}

// SetName implements Client like PUT /names/{name}.
func (l *LocalClient) SetName(ctx context.Context, name string, target store.ID, cond Cond) (NameRecord, error) {
	rec, err := l.h.doSet(ctx, name, target, cond)
	if err != nil {
		return NameRecord{}, httpx.LocalError(ctx, err)
	}
	return toRecordOut(rec), nil
}

// DeleteName implements Client like DELETE /names/{name}.
func (l *LocalClient) DeleteName(ctx context.Context, name string, cond Cond) (NameDeletion, error) {
	out, err := l.h.doDelete(ctx, name, cond)
	return out, httpx.LocalError(ctx, err)
}

// History implements Client like GET /names/{name}/versions.
func (l *LocalClient) History(ctx context.Context, name string) (NameHistory, error) {
	out, err := l.h.doHistory(ctx, name)
	return out, httpx.LocalError(ctx, err)
}

// Resolve implements Client like GET /resolve/{key}, over the handlers'
// own resolve path (budget, caches, peers).
func (l *LocalClient) Resolve(ctx context.Context, key string, noCache bool) (ResolveAnswer, error) {
	a, err := l.h.doResolve(ctx, key, resolveOpts{noCache: noCache})
	if err != nil {
		return ResolveAnswer{}, httpx.LocalError(ctx, err)
	}
	return a.decode()
}
