package auth

import (
	"context"
	"fmt"
	"time"
)

// principalKey is the context key of a link principal. Being unexported, only
// code in this process can set it.
type principalKey struct{}

// WithClaims returns a context carrying c as the link principal: Check (and so
// Require) accepts a request whose context carries claims without looking at
// its Authorization header. It is for in-process calls between co-located
// roles (the gateway's in-process upstreams): the principal travels with the
// context, so anything served with a context derived from it acts as c. The
// claims are shared, never copied: treat them as read-only. A nil c returns
// ctx unchanged.
func WithClaims(ctx context.Context, c *Claims) context.Context {
	if c == nil {
		return ctx
	}
	return context.WithValue(ctx, principalKey{}, c)
}

// ClaimsFromContext returns the link principal WithClaims put in ctx, or nil.
func ClaimsFromContext(ctx context.Context) *Claims {
	c, _ := ctx.Value(principalKey{}).(*Claims)
	return c
}

// checkClaims authorizes a link principal: an Expires that is set and not
// after now → KindExpired; claims lacking scope → KindScope.
func checkClaims(c *Claims, scope string, now time.Time) (*Claims, error) {
	if !c.Expires.IsZero() && !now.Before(c.Expires) {
		ae := newAuthError(KindExpired, scope, fmt.Errorf("principal expired at %s", c.Expires.Format(time.RFC3339)))
		ae.TokenID = c.ID
		return nil, ae
	}
	return Authorize(c, scope)
}
