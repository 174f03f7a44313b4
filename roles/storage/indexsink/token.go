package indexsink

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/ronhq/ron/httpx/auth"
	"github.com/ronhq/ron/roles/index"
)

// Minted index tokens (spec/storage.md §5): index:write, 10 minutes, renewed
// when less than tokenRenew of their life is left.
const (
	tokenTTL   = 10 * time.Minute
	tokenRenew = 2 * time.Minute
)

// ErrNoKey is returned by MintToken's function when there is no root key.
var ErrNoKey = errors.New("indexsink: no root key to mint an index token")

// MintToken returns a token source for Options.Token: index:write tokens
// minted from the root key keys, valid 10 minutes, cached and renewed 2
// minutes before they expire. It is safe for concurrent use; minting does
// no I/O. A nil keys makes every call fail with ErrNoKey.
func MintToken(keys *auth.Keyring) func(ctx context.Context) (string, error) {
	m := &minter{keys: keys}
	return m.token
}

// minter caches the current token.
type minter struct {
	keys    *auth.Keyring
	mu      sync.Mutex
	tok     string
	expires time.Time
}

func (m *minter) token(context.Context) (string, error) {
	if m.keys == nil {
		return "", ErrNoKey
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	now := time.Now()
	if m.tok != "" && now.Before(m.expires.Add(-tokenRenew)) {
		return m.tok, nil
	}
	tok, _, err := m.keys.Mint(auth.MintOptions{Scopes: []string{index.ScopeWrite}, TTL: tokenTTL, Now: now})
	if err != nil {
		return "", err
	}
	m.tok, m.expires = tok, now.Add(tokenTTL).Truncate(time.Second)
	return tok, nil
}
