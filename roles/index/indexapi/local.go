package indexapi

import "net/http"

// RoleName is the index role's name: in config (roles = […]), metrics,
// cluster metadata and logs.
const RoleName = "index"

// Local is the index role as the roles of its own process see it.
type Local interface {
	// Handler is the index's HTTP handler (its routes behind the shared
	// middleware chain), for in-process forwarding; nil before Start.
	Handler() http.Handler
	// LocalClient is the in-process Client (no tokens, no HTTP); before
	// the index has started, every call answers 503 not_ready.
	LocalClient() Client
}
