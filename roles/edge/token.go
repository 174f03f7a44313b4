package edge

import (
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/ronhq/ron/httpx/auth"
)

// LinkTokenTTL is the lifetime of a minted source token; it is renewed at
// half of it.
const LinkTokenTTL = 10 * time.Minute

// minter mints the bearer token of HTTP sources from the node's root key:
// ONE scope caveat "storage:read index:read" (two caveats would intersect),
// valid LinkTokenTTL, minted on first use, cached and renewed once half its
// lifetime has passed. Minting does no I/O. Safe for concurrent use.
type minter struct {
	k   *auth.Keyring
	log zerolog.Logger

	mu      sync.Mutex
	tok     string
	renewAt time.Time
}

// token returns the cached or a fresh token; "" when there is no root key
// or minting fails (logged): the request then goes without one.
func (m *minter) token() string {
	if m.k == nil {
		return ""
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	now := time.Now()
	if m.tok != "" && now.Before(m.renewAt) {
		return m.tok
	}
	tok, _, err := m.k.Mint(auth.MintOptions{Scopes: linkScopes, TTL: LinkTokenTTL, Now: now})
	if err != nil {
		m.log.Warn().Err(err).Msg("source token: mint failed")
		return ""
	}
	m.tok, m.renewAt = tok, now.Add(LinkTokenTTL/2)
	return tok
}
