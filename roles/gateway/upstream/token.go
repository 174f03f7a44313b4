package upstream

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/ronhq/ron/httpx/auth"
)

// LinkTokenTTL is the lifetime of a minted link token; it is renewed at half
// of it.
const LinkTokenTTL = 10 * time.Minute

// LinkPrincipalID is the Claims.ID of LinkPrincipal (what logs show).
const LinkPrincipalID = "gateway-link"

// linkScopes are the scopes the gateway forwards under (spec/gateway.md §2).
func linkScopes(privateReads bool) []string {
	s := []string{"storage:write", "index:write"}
	if privateReads {
		s = append(s, "storage:read", "index:read", "edge:read", "registry:read")
	}
	return s
}

// MintLinkToken returns a Token function for HTTP links: a token minted from
// k with ONE scope caveat "storage:write index:write" (plus " storage:read
// index:read edge:read registry:read" when privateReads; separate caveats
// would intersect), valid LinkTokenTTL, minted on first use, cached and
// renewed once half its lifetime has passed. Minting does no I/O.
func MintLinkToken(k *auth.Keyring, privateReads bool) func(ctx context.Context) (string, error) {
	m := &minter{k: k, scopes: linkScopes(privateReads)}
	return m.token
}

type minter struct {
	k      *auth.Keyring
	scopes []string

	mu      sync.Mutex
	tok     string
	renewAt time.Time
}

func (m *minter) token(context.Context) (string, error) {
	if m.k == nil {
		return "", errors.New("upstream: link token: no root key")
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	now := time.Now()
	if m.tok != "" && now.Before(m.renewAt) {
		return m.tok, nil
	}
	tok, _, err := m.k.Mint(auth.MintOptions{Scopes: m.scopes, TTL: LinkTokenTTL, Now: now})
	if err != nil {
		return "", fmt.Errorf("upstream: link token: %w", err)
	}
	m.tok, m.renewAt = tok, now.Add(LinkTokenTTL/2)
	return tok, nil
}

// LinkPrincipal returns the claims in-process calls carry: the scopes of
// MintLinkToken(…, privateReads), no tenant, no expiry. The claims are
// shared by every call: treat them as read-only.
func LinkPrincipal(privateReads bool) *auth.Claims {
	return &auth.Claims{ID: LinkPrincipalID, Scopes: linkScopes(privateReads)}
}
