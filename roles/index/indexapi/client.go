package indexapi

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"

	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/httpx/client"
	"github.com/ronhq/ron/store"
)

// Client talks to an index role (docs/index.md §3, §4). Storage announces
// through it, the CLI manages names and other roles look up providers.
// HTTPClient is the HTTP implementation and LocalClient (roles/index) the
// in-process one; both fail with *httpx.Error values carrying the same
// status, code and details (400 bad_request, 412 precondition_failed with
// details.current_version, 404 not_found with details.reason, 400 with
// details.index and details.field for a bad provider record).
type Client interface {
	// Announce sends one batch of 1–1000 provider records, all or nothing;
	// a record with TTL 0 withdraws (b3, node). TTLs are whole seconds.
	Announce(ctx context.Context, recs []Announcement) (accepted, withdrawn int, err error)
	// Providers lists the live providers of id: records in region first
	// ("" = the index's own zone), at most limit (0 = 20, else 1–64).
	Providers(ctx context.Context, id store.ID, region string, limit int) (ProviderList, error)
	// GetName returns the live record of name; a tombstone is 404 with
	// details.reason "deleted".
	GetName(ctx context.Context, name string) (NameRecord, error)
	// GetNameVersion returns name@version.
	GetNameVersion(ctx context.Context, name string, version uint64) (NameRecord, error)
	// SetName points name at target under cond (the zero Cond: always).
	SetName(ctx context.Context, name string, target store.ID, cond Cond) (NameRecord, error)
	// DeleteName writes a tombstone under cond (IfAbsent is a 400).
	DeleteName(ctx context.Context, name string, cond Cond) (NameDeletion, error)
	// History returns the kept versions of name, newest first.
	History(ctx context.Context, name string) (NameHistory, error)
	// Resolve answers key (a name, name@version or b3 id) with its target
	// and providers (docs/index.md §5); noCache bypasses the index's caches. A malformed
	// key is 400, an unknown or deleted name and a b3 id without providers
	// 404, a found name without providers 200 with an empty list.
	Resolve(ctx context.Context, key string, noCache bool) (ResolveAnswer, error)
}

// HTTPClient is the HTTP implementation of Client.
type HTTPClient struct {
	c *client.Client
}

var _ Client = (*HTTPClient)(nil)

// NewHTTPClient returns a client of the index listener at baseURL; token
// supplies capability tokens with index:write for writes (nil: none).
func NewHTTPClient(baseURL string, token func(context.Context) (string, error), opt client.Options) *HTTPClient {
	opt.BaseURL, opt.Token = baseURL, token
	if opt.Role == "" {
		opt.Role = RoleName
	}
	return &HTTPClient{c: client.New(opt)}
}

// Close releases idle connections.
func (h *HTTPClient) Close() { h.c.Close() }

// Announce implements Client with POST /providers. Re-announcing replaces
// the same (b3, node) records with the same counts, so the call is retried
// like an idempotent one.
func (h *HTTPClient) Announce(ctx context.Context, recs []Announcement) (int, int, error) {
	if err := CheckWholeSeconds(recs); err != nil {
		return 0, 0, httpx.LocalError(ctx, err) // as the server would answer
	}
	in := NewAnnounceBody(recs)
	var out AnnounceReply
	err := h.send(ctx, &client.Request{Method: http.MethodPost, Path: "/providers",
		Retry: client.RetryIdempotent, Op: "POST /providers"}, in, &out)
	return out.Accepted, out.Withdrawn, err
}

// Providers implements Client with GET /providers/{b3}?limit=&region=.
func (h *HTTPClient) Providers(ctx context.Context, id store.ID, region string, limit int) (ProviderList, error) {
	q := url.Values{}
	if region != "" {
		q.Set("region", region)
	}
	if limit != 0 {
		q.Set("limit", strconv.Itoa(limit))
	}
	var out ProviderList
	err := h.send(ctx, &client.Request{Path: "/providers/" + id.String(), Query: q, Op: "GET /providers/{b3}"}, nil, &out)
	return out, err
}

// GetName implements Client with GET /names/{name}.
func (h *HTTPClient) GetName(ctx context.Context, name string) (NameRecord, error) {
	var out NameRecord
	if err := CheckName(name); err != nil {
		return out, err
	}
	err := h.send(ctx, &client.Request{Path: "/names/" + name, Op: "GET /names/{name}"}, nil, &out)
	return out, err
}

// GetNameVersion implements Client with GET /names/{name}@{version}.
func (h *HTTPClient) GetNameVersion(ctx context.Context, name string, version uint64) (NameRecord, error) {
	var out NameRecord
	if err := CheckName(name); err != nil {
		return out, err
	}
	err := h.send(ctx, &client.Request{Path: "/names/" + name + "@" + strconv.FormatUint(version, 10),
		Op: "GET /names/{name}"}, nil, &out)
	return out, err
}

// SetName implements Client with PUT /names/{name}. Only a PUT that cannot
// apply twice (If-Match "<v>", If-None-Match *) is retried: every other
// successful PUT adds a version.
func (h *HTTPClient) SetName(ctx context.Context, name string, target store.ID, cond Cond) (NameRecord, error) {
	var out NameRecord
	if err := CheckName(name); err != nil {
		return out, err
	}
	req := &client.Request{Method: http.MethodPut, Path: "/names/" + name, Op: "PUT /names/{name}", Header: http.Header{}}
	if !retrySafe(cond) {
		req.Retry = client.RetryNever
	}
	if k, v := cond.Header(); k != "" {
		req.Header.Set(k, v)
	}
	err := h.send(ctx, req, map[string]string{"b3": target.String()}, &out)
	return out, err
}

// DeleteName implements Client with DELETE /names/{name}; a repeat after a
// lost success is a 404, never a second tombstone, so it is retried.
func (h *HTTPClient) DeleteName(ctx context.Context, name string, cond Cond) (NameDeletion, error) {
	var out NameDeletion
	if err := CheckName(name); err != nil {
		return out, err
	}
	req := &client.Request{Method: http.MethodDelete, Path: "/names/" + name, Op: "DELETE /names/{name}", Header: http.Header{}}
	if k, v := cond.Header(); k != "" {
		req.Header.Set(k, v)
	}
	err := h.send(ctx, req, nil, &out)
	return out, err
}

// History implements Client with GET /names/{name}/versions.
func (h *HTTPClient) History(ctx context.Context, name string) (NameHistory, error) {
	var out NameHistory
	if err := CheckName(name); err != nil {
		return out, err
	}
	err := h.send(ctx, &client.Request{Path: "/names/" + name + "/versions", Op: "GET /names/{name}/versions"}, nil, &out)
	return out, err
}

// Resolve implements Client with GET /resolve/{key}, sending
// Cache-Control: no-cache when noCache. The key is checked first, as the
// server would, so that no malformed key reaches another route.
func (h *HTTPClient) Resolve(ctx context.Context, key string, noCache bool) (ResolveAnswer, error) {
	var out ResolveAnswer
	if _, _, err := ParseResolveKey(key); err != nil {
		return out, err
	}
	req := &client.Request{Path: "/resolve/" + key, Op: "GET /resolve/{key}", Header: http.Header{}}
	if noCache {
		req.Header.Set("Cache-Control", "no-cache")
	}
	err := h.send(ctx, req, nil, &out)
	return out, err
}

// send completes req with in as its JSON body (when non-nil) and decodes
// the 2xx answer into out.
func (h *HTTPClient) send(ctx context.Context, req *client.Request, in, out any) error {
	if req.Header == nil {
		req.Header = http.Header{}
	}
	req.Header.Set("Accept", "application/json")
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return fmt.Errorf("index: encode request: %w", err)
		}
		req.Body = bytes.NewReader(b)
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := h.c.Do(ctx, req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(io.LimitReader(resp.Body, client.MaxJSONResponse)).Decode(out); err != nil {
		return fmt.Errorf("index: %s %s: decode response: %w", req.Method, req.Op, err)
	}
	return nil
}
