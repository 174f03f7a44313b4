package index

import (
	"context"
	"net/http"
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
	src func() *Handlers // nil handlers: the index has not started
}

var _ indexapi.Client = (*LocalClient)(nil)

// NewLocalClient returns a client of h.
func NewLocalClient(h *Handlers) *LocalClient {
	return &LocalClient{src: func() *Handlers { return h }}
}

// LocalClient is the in-process client of r (indexapi.Local). It follows
// r: before Start, and after a failed one, every call answers 503
// not_ready.
func (r *Role) LocalClient() indexapi.Client { return &LocalClient{src: r.Handlers} }

// errNotStarted is the answer of a LocalClient whose index has not started.
func errNotStarted() error {
	return httpx.NewError(http.StatusServiceUnavailable, httpx.CodeNotReady, "the local index has not started")
}

// Announce implements indexapi.Client like POST /providers.
func (l *LocalClient) Announce(ctx context.Context, recs []indexapi.Announcement) (int, int, error) {
	h := l.src()
	if h == nil {
		return 0, 0, errNotStarted()
	}
	res, err := h.doAnnounce(ctx, recs)
	return res.Accepted, res.Withdrawn, httpx.LocalError(ctx, err)
}

// Providers implements indexapi.Client like GET /providers/{b3}; region "" is the
// index's Zone, as when the query has no region.
func (l *LocalClient) Providers(ctx context.Context, id store.ID, region string, limit int) (indexapi.ProviderList, error) {
	h := l.src()
	if h == nil {
		return indexapi.ProviderList{}, errNotStarted()
	}
	if region == "" {
		region = h.settings().Zone
	}
	out, err := h.lookupProviders(ctx, id, region, limit, resolveOpts{})
	return out, httpx.LocalError(ctx, err)
}

// GetName implements indexapi.Client like GET /names/{name}.
func (l *LocalClient) GetName(ctx context.Context, name string) (indexapi.NameRecord, error) {
	h := l.src()
	if h == nil {
		return indexapi.NameRecord{}, errNotStarted()
	}
	if err := indexapi.CheckName(name); err != nil {
		return indexapi.NameRecord{}, httpx.LocalError(ctx, err)
	}
	rec, err := h.lookupName(ctx, name, resolveOpts{})
	return rec, httpx.LocalError(ctx, err)
}

// GetNameVersion implements indexapi.Client like GET /names/{name}@{version}.
func (l *LocalClient) GetNameVersion(ctx context.Context, name string, version uint64) (indexapi.NameRecord, error) {
	h := l.src()
	if h == nil {
		return indexapi.NameRecord{}, errNotStarted()
	}
	if err := indexapi.CheckName(name); err != nil {
		return indexapi.NameRecord{}, httpx.LocalError(ctx, err)
	}
	rec, err := h.lookupName(ctx, name+"@"+strconv.FormatUint(version, 10), resolveOpts{})
	return rec, httpx.LocalError(ctx, err)
}

// SetName implements indexapi.Client like PUT /names/{name}.
func (l *LocalClient) SetName(ctx context.Context, name string, target store.ID, cond indexapi.Cond) (indexapi.NameRecord, error) {
	h := l.src()
	if h == nil {
		return indexapi.NameRecord{}, errNotStarted()
	}
	rec, err := h.doSet(ctx, name, target, cond)
	if err != nil {
		return indexapi.NameRecord{}, httpx.LocalError(ctx, err)
	}
	return toRecordOut(rec), nil
}

// DeleteName implements indexapi.Client like DELETE /names/{name}.
func (l *LocalClient) DeleteName(ctx context.Context, name string, cond indexapi.Cond) (indexapi.NameDeletion, error) {
	h := l.src()
	if h == nil {
		return indexapi.NameDeletion{}, errNotStarted()
	}
	out, err := h.doDelete(ctx, name, cond)
	return out, httpx.LocalError(ctx, err)
}

// History implements indexapi.Client like GET /names/{name}/versions.
func (l *LocalClient) History(ctx context.Context, name string) (indexapi.NameHistory, error) {
	h := l.src()
	if h == nil {
		return indexapi.NameHistory{}, errNotStarted()
	}
	out, err := h.doHistory(ctx, name)
	return out, httpx.LocalError(ctx, err)
}

// Resolve implements indexapi.Client like GET /resolve/{key}, over the handlers'
// own resolve path (budget, caches, peers).
func (l *LocalClient) Resolve(ctx context.Context, key string, noCache bool) (indexapi.ResolveAnswer, error) {
	h := l.src()
	if h == nil {
		return indexapi.ResolveAnswer{}, errNotStarted()
	}
	a, err := h.doResolve(ctx, key, resolveOpts{noCache: noCache})
	if err != nil {
		return indexapi.ResolveAnswer{}, httpx.LocalError(ctx, err)
	}
	return a.decode()
}
