package index

import (
	"context"
	"strconv"

	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/roles/index/indexapi"
	"github.com/ronhq/ron/store"
)

// LocalClient is the in-process implementation of indexapi.Client, used when the
// index runs in its caller's process. It calls the same code as the HTTP
// handlers (the Handlers' do* methods), so it answers like indexapi.HTTPClient: the
// same validation, limits and *httpx.Error values, with details normalised
// to their JSON form (numbers are float64, as a decoded envelope has them).
// Writes need no token: in-process callers are trusted.
type LocalClient struct {
	h *Handlers
}

var _ indexapi.Client = (*LocalClient)(nil)

// NewLocalClient returns a client of h.
func NewLocalClient(h *Handlers) *LocalClient { return &LocalClient{h: h} }

// Announce implements indexapi.Client like POST /providers.
func (l *LocalClient) Announce(ctx context.Context, recs []indexapi.Announcement) (int, int, error) {
	res, err := l.h.doAnnounce(ctx, recs)
	return res.Accepted, res.Withdrawn, httpx.LocalError(ctx, err)
}

// Providers implements indexapi.Client like GET /providers/{b3}; region "" is the
// index's Zone, as when the query has no region.
func (l *LocalClient) Providers(ctx context.Context, id store.ID, region string, limit int) (indexapi.ProviderList, error) {
	if region == "" {
		region = l.h.settings().Zone
	}
	out, err := l.h.lookupProviders(ctx, id, region, limit, resolveOpts{})
	return out, httpx.LocalError(ctx, err)
}

// GetName implements indexapi.Client like GET /names/{name}.
func (l *LocalClient) GetName(ctx context.Context, name string) (indexapi.NameRecord, error) {
	if err := indexapi.CheckName(name); err != nil {
		return indexapi.NameRecord{}, httpx.LocalError(ctx, err)
	}
	rec, err := l.h.lookupName(ctx, name, resolveOpts{})
	return rec, httpx.LocalError(ctx, err)
}

// GetNameVersion implements indexapi.Client like GET /names/{name}@{version}.
func (l *LocalClient) GetNameVersion(ctx context.Context, name string, version uint64) (indexapi.NameRecord, error) {
	if err := indexapi.CheckName(name); err != nil {
		return indexapi.NameRecord{}, httpx.LocalError(ctx, err)
	}
	rec, err := l.h.lookupName(ctx, name+"@"+strconv.FormatUint(version, 10), resolveOpts{})
	return rec, httpx.LocalError(ctx, err)
}

// SetName implements indexapi.Client like PUT /names/{name}.
func (l *LocalClient) SetName(ctx context.Context, name string, target store.ID, cond indexapi.Cond) (indexapi.NameRecord, error) {
	rec, err := l.h.doSet(ctx, name, target, cond)
	if err != nil {
		return indexapi.NameRecord{}, httpx.LocalError(ctx, err)
	}
	return toRecordOut(rec), nil
}

// DeleteName implements indexapi.Client like DELETE /names/{name}.
func (l *LocalClient) DeleteName(ctx context.Context, name string, cond indexapi.Cond) (indexapi.NameDeletion, error) {
	out, err := l.h.doDelete(ctx, name, cond)
	return out, httpx.LocalError(ctx, err)
}

// History implements indexapi.Client like GET /names/{name}/versions.
func (l *LocalClient) History(ctx context.Context, name string) (indexapi.NameHistory, error) {
	out, err := l.h.doHistory(ctx, name)
	return out, httpx.LocalError(ctx, err)
}

// Resolve implements indexapi.Client like GET /resolve/{key}, over the handlers'
// own resolve path (budget, caches, peers).
func (l *LocalClient) Resolve(ctx context.Context, key string, noCache bool) (indexapi.ResolveAnswer, error) {
	a, err := l.h.doResolve(ctx, key, resolveOpts{noCache: noCache})
	if err != nil {
		return indexapi.ResolveAnswer{}, httpx.LocalError(ctx, err)
	}
	return a.decode()
}
