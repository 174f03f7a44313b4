// Package storageapi is the storage role's contract (docs/storage.md §2):
// the Client interface other roles and the CLI use, its HTTP
// implementation, the wire types of its answers (and of its repair routes
// and status on the admin listener, docs/cluster.md §9) and the scopes the
// role checks. It imports only httpx, store and runtime; any package may
// import it, and no package outside roles/storage imports anything else of
// storage.
package storageapi

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"

	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/httpx/client"
	"github.com/ronhq/ron/store"
)

// RoleName is the storage role's name: in config (roles = […]), metrics,
// cluster metadata and logs.
const RoleName = "storage"

// Scopes the storage role checks (docs/architecture.md §6).
const (
	ScopeRead      = "storage:read"
	ScopeWrite     = "storage:write"
	ScopeAdmin     = "storage:admin"
	ScopeInventory = "storage:read_inventory"
	// ScopeReplicate is node-only: X-Ron-Replica is honoured only with it or
	// admin (docs/cluster.md §2).
	ScopeReplicate = "storage:replicate"
)

// PutResult is a write's answer.
type PutResult struct {
	CID     string `json:"cid"`
	Size    int64  `json:"size"`
	Created bool   `json:"created"`
}

// ObjectInfo is what a HEAD tells about an object.
type ObjectInfo struct {
	ID          store.ID
	Size        int64
	ContentType string
}

// Client talks to a storage role. Other roles and the CLI depend on this
// interface; HTTPClient is its HTTP implementation and LocalClient the
// in-process one (roles/storage.LocalClient). Both behave alike: failures are *httpx.Error values with
// the status, code and details of docs/storage.md (e.g. 404 not_found with
// details.reason "quarantined", 409 hash_mismatch, 413, 429, 503, 507).
type Client interface {
	// Put stores body (size bytes, -1 when unknown); want, when set, is the
	// id the body must hash to. contentType is stored as metadata ("" none).
	Put(ctx context.Context, body io.Reader, size int64, want *store.ID, contentType string) (PutResult, error)
	// Get streams the whole object; the caller must Close the body and
	// should still hash it (HTTP: the server verifies chunks, but a stream
	// cut short by corruption only ends early).
	Get(ctx context.Context, id store.ID) (io.ReadCloser, ObjectInfo, error)
	// Stat describes an object without its body.
	Stat(ctx context.Context, id store.ID) (ObjectInfo, error)
	// Outboard returns the object's Bao outboard (GET /o/{b3}/outboard),
	// unverified: the caller proves the data against the id with it. At
	// most MaxOutboardBytes are read.
	Outboard(ctx context.Context, id store.ID) ([]byte, error)
}

// HTTPClient is the HTTP implementation of Client.
type HTTPClient struct {
	c *client.Client
}

var _ Client = (*HTTPClient)(nil)

// NewHTTPClient returns a client of the storage listener at baseURL; token
// supplies capability tokens for writes (nil: none).
func NewHTTPClient(baseURL string, token func(context.Context) (string, error), opt client.Options) *HTTPClient {
	opt.BaseURL, opt.Token = baseURL, token
	if opt.Role == "" {
		opt.Role = RoleName
	}
	return &HTTPClient{c: client.New(opt)}
}

// Close releases idle connections.
func (h *HTTPClient) Close() { h.c.Close() }

// GetFrom starts GET /o/{b3} at byte off: the whole object when off is 0,
// else a Range request from off to the end. Only a 2xx status is checked:
// the caller checks the status and Content-Range it needs and verifies the
// body against the id.
func (h *HTTPClient) GetFrom(ctx context.Context, id store.ID, off int64) (*http.Response, error) {
	req := &client.Request{Path: "/o/" + id.String(), Op: "get", Header: http.Header{}}
	if off > 0 {
		req.Header.Set("Range", "bytes="+strconv.FormatInt(off, 10)+"-")
	}
	return h.c.Do(ctx, req)
}

// Put implements Client with POST /o, or PUT /o/{b3} when want is set.
func (h *HTTPClient) Put(ctx context.Context, body io.Reader, size int64, want *store.ID, contentType string) (PutResult, error) {
	req := &client.Request{Method: http.MethodPost, Path: "/o", Body: body, ContentLength: size, Op: "put", Header: http.Header{}}
	if want != nil {
		req.Method, req.Path = http.MethodPut, "/o/"+want.String()
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := h.c.Do(ctx, req)
	if err != nil {
		return PutResult{}, err
	}
	defer resp.Body.Close()
	var out PutResult
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<16)).Decode(&out); err != nil {
		return PutResult{}, fmt.Errorf("storage: invalid put reply: %w", err)
	}
	return out, nil
}

// Get implements Client with GET /o/{b3}.
func (h *HTTPClient) Get(ctx context.Context, id store.ID) (io.ReadCloser, ObjectInfo, error) {
	resp, err := h.c.Do(ctx, &client.Request{Method: http.MethodGet, Path: "/o/" + id.String(), Op: "get"})
	if err != nil {
		return nil, ObjectInfo{}, err
	}
	return resp.Body, infoFrom(id, resp), nil
}

// Stat implements Client with HEAD /o/{b3}. A HEAD error has no body, so a
// 404 is followed by GET /o/{b3}/outboard (the same lookup) to return the
// envelope with its details (reason "quarantined"), as LocalClient does.
func (h *HTTPClient) Stat(ctx context.Context, id store.ID) (ObjectInfo, error) {
	resp, err := h.c.Do(ctx, &client.Request{Method: http.MethodHead, Path: "/o/" + id.String(), Op: "stat"})
	if IsNotFound(err) {
		if _, cerr := h.Outboard(ctx, id); IsNotFound(cerr) {
			err = cerr
		}
	}
	if err != nil {
		return ObjectInfo{}, err
	}
	resp.Body.Close()
	return infoFrom(id, resp), nil
}

// MaxOutboardBytes bounds the outboard a client reads: 64 MiB, the
// outboard of a 64 GiB object.
const MaxOutboardBytes = 64 << 20

// Outboard implements Client with GET /o/{b3}/outboard.
func (h *HTTPClient) Outboard(ctx context.Context, id store.ID) ([]byte, error) {
	resp, err := h.c.Do(ctx, &client.Request{Method: http.MethodGet, Path: "/o/" + id.String() + "/outboard", Op: "outboard"})
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.ContentLength > MaxOutboardBytes {
		return nil, fmt.Errorf("storage: outboard of %d bytes is larger than %d", resp.ContentLength, MaxOutboardBytes)
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, MaxOutboardBytes+1))
	switch {
	case err != nil:
		return nil, fmt.Errorf("storage: read outboard: %w", err)
	case len(b) > MaxOutboardBytes:
		return nil, fmt.Errorf("storage: outboard larger than %d bytes", MaxOutboardBytes)
	}
	return b, nil
}

func infoFrom(id store.ID, resp *http.Response) ObjectInfo {
	size, err := strconv.ParseInt(resp.Header.Get("Content-Length"), 10, 64)
	if err != nil {
		size = -1
	}
	return ObjectInfo{ID: id, Size: size, ContentType: resp.Header.Get("Content-Type")}
}

// IsNotFound reports a 404 from storage.
func IsNotFound(err error) bool {
	return err != nil && httpx.AsError(err).Status == http.StatusNotFound
}

// Local is the storage role as the roles of its own process see it.
type Local interface {
	// Handler is storage's HTTP handler (its routes behind the shared
	// middleware chain), for in-process forwarding; nil before Start.
	Handler() http.Handler
	// AdvertiseURL is the base URL storage announces to the index:
	// advertise_url, else http://<bound listener> (valid after Start).
	AdvertiseURL() string
}
