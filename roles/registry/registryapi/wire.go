package registryapi

// RoleName is the registry's role label (metrics, log lines, client
// options).
const RoleName = "registry"

// Capability scopes (docs/architecture.md §6, docs/registry.md §2).
const (
	ScopePropose = "registry:propose"
	ScopeApprove = "registry:approve"
	ScopeCommit  = "registry:commit"
	ScopeRead    = "registry:read"
)

// Route templates of docs/registry.md §2 in echo syntax (also the
// endpoint/route labels of the metrics).
const (
	RouteHead       = "/registry/head"
	RouteVersion    = "/registry/:version"
	RouteProposals  = "/registry/proposals"
	RouteProposal   = "/registry/proposals/:id"
	RouteApprove    = "/registry/approvals/:id"
	RouteCommit     = "/registry/commit/:id"
	RouteStream     = "/registry/stream"
	RouteStatus     = "/registry/status"
	RouteCheckpoint = "/registry/log/checkpoint"
	RouteTile       = "/registry/log/tile/*"
	RouteKey        = "/registry/log/key"
)

// GET /registry/stream framing (docs/registry.md §2).
const (
	// MediaTypeSSE is the stream's Content-Type.
	MediaTypeSSE = "text/event-stream"
	// EventUpdate is the SSE event type of every update.
	EventUpdate = "registry.update"
)
