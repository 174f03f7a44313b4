package indexsink

import (
	"context"

	"github.com/ronhq/ron/httpx/auth"
	"github.com/ronhq/ron/roles/index/indexapi"
)

// ErrNoKey is returned by MintToken's function when there is no root key.
var ErrNoKey = auth.ErrNoKey

// MintToken returns a token source for Options.Token: index:write tokens
// minted from the root key keys (auth.TokenSource: valid 10 minutes,
// renewed at half life). It is safe for concurrent use; minting does no I/O.
// A nil keys makes every call fail with ErrNoKey.
func MintToken(keys *auth.Keyring) func(ctx context.Context) (string, error) {
	return auth.TokenSource(keys, indexapi.ScopeWrite)
}
