package node

import (
	"fmt"
	"time"

	"github.com/ronhq/ron/httpx/auth"
)

// maxTokenTTL caps tokens minted through the admin API and the CLI.
const maxTokenTTL = 365 * 24 * time.Hour

// MintToken mints a token with the given scopes, optional tenant and TTL
// ("" = 24h). It is shared by `ron token mint` and POST /api/v1/tokens.
func MintToken(keys *auth.Keyring, scopes []string, tenant, ttl string) (TokenReply, error) {
	d := 24 * time.Hour
	if ttl != "" {
		var err error
		if d, err = time.ParseDuration(ttl); err != nil || d <= 0 || d > maxTokenTTL {
			return TokenReply{}, fmt.Errorf("ttl %q must be a positive Go duration up to %s", ttl, maxTokenTTL)
		}
	}
	now := time.Now()
	tok, id, err := keys.Mint(auth.MintOptions{Scopes: scopes, Tenant: tenant, TTL: d, Now: now})
	if err != nil {
		return TokenReply{}, err
	}
	return TokenReply{Token: tok, ID: id, Expires: now.Add(d).UTC().Truncate(time.Second)}, nil
}
