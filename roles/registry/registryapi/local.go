package registryapi

import "net/http"

// Local is the registry role as the roles of its own process see it.
type Local interface {
	// Handler is the registry's HTTP handler (its routes behind the shared
	// middleware chain), for in-process forwarding; nil before Start.
	Handler() http.Handler
	// LocalClient is the in-process Client (no tokens, no HTTP).
	LocalClient() Client
}
