package registryapi

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"

	"github.com/ronhq/ron/httpx/client"
	"github.com/ronhq/ron/roles/registry/registryapi/descriptor"
)

// Client talks to a registry (docs/registry.md §9). HTTPClient is the HTTP
// implementation and roles/registry/httpapi's LocalClient the in-process
// one; both fail with *httpx.Error values carrying the same status,
// envelope code and details.
type Client interface {
	// Head returns the committed HEAD.
	Head(ctx context.Context) (Head, error)
	// Get returns version v's SignedArtifact and its canonical bytes after
	// checking that it is version v and that its payload hashes to its
	// payload_b3 (500 corrupt otherwise); 404 above HEAD, 410 pruned.
	Get(ctx context.Context, v uint64) (descriptor.Artifact, []byte, error)
	// Watch streams committed versions in increasing order, resuming after
	// *since (nil: HEAD first). The channel holds 64 updates; when the
	// consumer falls behind, the oldest queued ones are dropped (sets are
	// full snapshots: apply the newest). It is closed when ctx ends (and,
	// for LocalClient, when the hub closes).
	Watch(ctx context.Context, since *uint64) (<-chan Update, error)
	// Propose submits req (its canonical JSON) as a proposal.
	Propose(ctx context.Context, req descriptor.ProposeRequest) (Proposed, error)
	// ProposeRaw submits body, a POST /registry/proposals body, as is.
	ProposeRaw(ctx context.Context, body []byte) (Proposed, error)
	// Proposals lists the open proposals, oldest first.
	Proposals(ctx context.Context) ([]ProposalSummary, error)
	// Proposal returns proposal id: 404 unknown or deleted, 410 expired.
	Proposal(ctx context.Context, id string) (Proposal, error)
	// Approve adds approval ap to proposal id.
	Approve(ctx context.Context, id string, ap descriptor.Approval) (ApprovalResult, error)
	// Commit commits proposal id; a retry after success returns the same.
	Commit(ctx context.Context, id string) (Committed, error)
}

// maxResponse bounds a JSON or artifact response body.
const maxResponse = 1 << 20

// HTTPClient is the HTTP implementation of Client.
type HTTPClient struct {
	c *client.Client
}

var _ Client = (*HTTPClient)(nil)

// NewHTTPClient returns a client of the registry listener at baseURL;
// token supplies capability tokens (registry:propose, :approve, :commit,
// and :read when reads are private); nil sends none. GETs, propose and
// commit (both idempotent) are retried per opt; approve never is.
func NewHTTPClient(baseURL string, token func(context.Context) (string, error), opt client.Options) *HTTPClient {
	opt.BaseURL, opt.Token = baseURL, token
	if opt.Role == "" {
		opt.Role = RoleName
	}
	return &HTTPClient{c: client.New(opt)}
}

// Close releases idle connections.
func (h *HTTPClient) Close() { h.c.Close() }

// Head implements Client with GET /registry/head.
func (h *HTTPClient) Head(ctx context.Context) (Head, error) {
	var out Head
	err := h.send(ctx, &client.Request{Path: "/registry/head", Op: "GET " + RouteHead}, nil, &out)
	return out, err
}

// Get implements Client with GET /registry/{version}.
func (h *HTTPClient) Get(ctx context.Context, v uint64) (descriptor.Artifact, []byte, error) {
	resp, err := h.c.Do(ctx, &client.Request{Path: "/registry/" + strconv.FormatUint(v, 10), Op: "GET /registry/{version}"})
	if err != nil {
		return descriptor.Artifact{}, nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxResponse))
	if err != nil {
		return descriptor.Artifact{}, nil, fmt.Errorf("registry client: read version %d: %w", v, err)
	}
	art, err := CheckArtifact(v, body)
	return art, body, err
}

// Propose implements Client with POST /registry/proposals.
func (h *HTTPClient) Propose(ctx context.Context, req descriptor.ProposeRequest) (Proposed, error) {
	body, err := ProposeBody(req)
	if err != nil {
		return Proposed{}, err
	}
	return h.ProposeRaw(ctx, body)
}

// ProposeRaw implements Client with POST /registry/proposals.
func (h *HTTPClient) ProposeRaw(ctx context.Context, body []byte) (Proposed, error) {
	var out Proposed
	err := h.send(ctx, &client.Request{Method: http.MethodPost, Path: "/registry/proposals",
		Retry: client.RetryIdempotent, Op: "POST " + RouteProposals}, body, &out)
	return out, err
}

// Proposals implements Client with GET /registry/proposals.
func (h *HTTPClient) Proposals(ctx context.Context) ([]ProposalSummary, error) {
	var out ProposalList
	err := h.send(ctx, &client.Request{Path: "/registry/proposals", Op: "GET " + RouteProposals}, nil, &out)
	return out.Proposals, err
}

// Proposal implements Client with GET /registry/proposals/{id}.
func (h *HTTPClient) Proposal(ctx context.Context, id string) (Proposal, error) {
	var out Proposal
	if err := descriptor.ParseProposalID(id); err != nil {
		return out, err
	}
	err := h.send(ctx, &client.Request{Path: "/registry/proposals/" + id, Op: "GET /registry/proposals/{id}"}, nil, &out)
	return out, err
}

// Approve implements Client with POST /registry/approvals/{id} (one try).
func (h *HTTPClient) Approve(ctx context.Context, id string, ap descriptor.Approval) (ApprovalResult, error) {
	var out ApprovalResult
	if err := descriptor.ParseProposalID(id); err != nil {
		return out, err
	}
	body, err := ApprovalBody(ap)
	if err != nil {
		return out, err
	}
	err = h.send(ctx, &client.Request{Method: http.MethodPost, Path: "/registry/approvals/" + id,
		Retry: client.RetryNever, Op: "POST /registry/approvals/{id}"}, body, &out)
	return out, err
}

// Commit implements Client with POST /registry/commit/{id} (no body).
func (h *HTTPClient) Commit(ctx context.Context, id string) (Committed, error) {
	var out Committed
	if err := descriptor.ParseProposalID(id); err != nil {
		return out, err
	}
	err := h.send(ctx, &client.Request{Method: http.MethodPost, Path: "/registry/commit/" + id,
		Retry: client.RetryIdempotent, Op: "POST /registry/commit/{id}"}, nil, &out)
	return Committed{Version: out.Version, PayloadB3: out.PayloadB3, CommittedAt: out.CommittedAt}, err
}

// send makes req with body (JSON, when non-nil) and decodes the answer
// into out.
func (h *HTTPClient) send(ctx context.Context, req *client.Request, body []byte, out any) error {
	req.Header = http.Header{"Accept": {"application/json"}}
	if body != nil {
		req.Body = bytes.NewReader(body)
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := h.c.Do(ctx, req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(io.LimitReader(resp.Body, maxResponse)).Decode(out); err != nil {
		return fmt.Errorf("registry client: %s: decode response: %w", req.Op, err)
	}
	return nil
}
