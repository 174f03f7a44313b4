package auth

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/zeebo/blake3"
)

// Minted link tokens (node-to-node calls, announcing, trusted upstreams) live
// MintedTTL and are renewed at half life.
const MintedTTL = 10 * time.Minute

// ErrNoKey is returned by a TokenSource built without a root key.
var ErrNoKey = errors.New("auth: no root key to mint a token")

// DeriveKey returns BLAKE3.DeriveKey(context, root key): a 32-byte key for
// another purpose (the cluster's gossip key) that reveals nothing about the
// root key.
func (k *Keyring) DeriveKey(context string) []byte {
	out := make([]byte, KeySize)
	blake3.DeriveKey(context, k.key, out)
	return out
}

// TokenSource returns a function yielding a token minted from keys with one
// scope caveat listing scopes (they add up, docs/architecture.md §6), valid
// MintedTTL, cached and renewed once half its life has passed. It is safe for
// concurrent use; minting does no I/O. A nil keys makes every call fail with
// ErrNoKey.
func TokenSource(keys *Keyring, scopes ...string) func(context.Context) (string, error) {
	m := &minter{keys: keys, scopes: scopes}
	return m.token
}

// minter caches the current token.
type minter struct {
	keys    *Keyring
	scopes  []string
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
	if m.tok != "" && now.Before(m.expires.Add(-MintedTTL/2)) {
		return m.tok, nil
	}
	tok, _, err := m.keys.Mint(MintOptions{Scopes: m.scopes, TTL: MintedTTL, Now: now})
	if err != nil {
		return "", err
	}
	m.tok, m.expires = tok, now.Add(MintedTTL).Truncate(time.Second)
	return tok, nil
}
