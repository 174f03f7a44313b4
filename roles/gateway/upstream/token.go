package upstream

import (
	"context"

	"github.com/ronhq/ron/httpx/auth"
)

// LinkTokenTTL is the lifetime of a minted link token; it is renewed at half
// of it.
const LinkTokenTTL = auth.MintedTTL

// LinkPrincipalID is the Claims.ID of LinkPrincipal (what logs show).
const LinkPrincipalID = "gateway-link"

// linkScopes are the scopes the gateway forwards under (docs/gateway.md §2).
func linkScopes(privateReads bool) []string {
	s := []string{"storage:write", "index:write"}
	if privateReads {
		s = append(s, "storage:read", "index:read", "edge:read", "registry:read")
	}
	return s
}

// MintLinkToken returns a Token function for HTTP links: auth.TokenSource
// over k with ONE scope caveat "storage:write index:write" (plus "
// storage:read index:read edge:read registry:read" when privateReads;
// separate caveats would intersect), valid LinkTokenTTL, renewed at half
// life. Minting does no I/O.
func MintLinkToken(k *auth.Keyring, privateReads bool) func(ctx context.Context) (string, error) {
	return auth.TokenSource(k, linkScopes(privateReads)...)
}

// LinkPrincipal returns the claims in-process calls carry: the scopes of
// MintLinkToken(…, privateReads), no tenant, no expiry. The claims are
// shared by every call: treat them as read-only.
func LinkPrincipal(privateReads bool) *auth.Claims {
	return &auth.Claims{ID: LinkPrincipalID, Scopes: linkScopes(privateReads)}
}
