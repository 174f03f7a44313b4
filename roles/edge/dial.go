package edge

import (
	"net/http"

	"github.com/ronhq/ron/httpx/safedial"
)

// providerTransport is the transport of provider reads. Provider URLs come
// from the index and are not trusted: a host that resolves to a
// link-local, multicast or unspecified address is refused when dialling
// (package safedial).
func providerTransport() *http.Transport { return safedial.Guard(newTransport()) }
