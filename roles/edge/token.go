package edge

import (
	"context"

	"github.com/rs/zerolog"

	"github.com/ronhq/ron/httpx/auth"
)

// LinkTokenTTL is the lifetime of a minted source token; it is renewed at
// half of it.
const LinkTokenTTL = auth.MintedTTL

// minter mints the bearer token of HTTP sources from the node's root key:
// auth.TokenSource with ONE scope caveat "storage:read index:read" (two
// caveats would intersect), valid LinkTokenTTL, renewed at half life.
// Minting does no I/O. Safe for concurrent use.
type minter struct {
	source func(context.Context) (string, error)
	log    zerolog.Logger
}

func newMinter(k *auth.Keyring, log zerolog.Logger) *minter {
	return &minter{source: auth.TokenSource(k, linkScopes...), log: log}
}

// token returns the cached or a fresh token; "" when there is no root key
// or minting fails (logged): the request then goes without one.
func (m *minter) token() string {
	tok, err := m.source(context.Background())
	if err != nil && err != auth.ErrNoKey {
		m.log.Warn().Err(err).Msg("source token: mint failed")
	}
	return tok
}
