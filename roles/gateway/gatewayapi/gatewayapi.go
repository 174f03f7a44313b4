// Package gatewayapi is the gateway role's contract (docs/gateway.md §2):
// its name and the headers it sets on every request it forwards, which the
// upstream roles read (the edge builds TileJSON URLs from the forwarded
// host, protocol and prefix). It imports only httpx, store and runtime; any
// package may import it, and no package outside roles/gateway imports
// anything else of the gateway.
package gatewayapi

// RoleName is the gateway role's name: in config (roles = […]), metrics,
// cluster metadata and logs.
const RoleName = "gateway"

// Headers of a forwarded request (docs/gateway.md §2). The gateway removes
// any the client sent and sets its own; an upstream honours the forwarded
// ones only from a trusted peer.
const (
	HeaderTenant         = "X-Ron-Tenant"
	HeaderForwardedFor   = "X-Forwarded-For"
	HeaderForwardedProto = "X-Forwarded-Proto"
	HeaderForwardedHost  = "X-Forwarded-Host"
	HeaderForwardedPfx   = "X-Forwarded-Prefix"
	HeaderRequestTimeout = "Request-Timeout"
)
