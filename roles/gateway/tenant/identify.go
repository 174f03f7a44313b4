package tenant

import (
	"encoding/base64"
	"errors"
	"net/http"
	"net/netip"
	"strings"
	"time"

	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/httpx/auth"
	"gopkg.in/macaroon.v2"
)

// Identify returns the tenant of r (docs/gateway.md §3.3) and the verified
// claims of its token (nil without one, so that the capability check need
// not verify the token again). Without an
// Authorization header the tenant is Anon(ClientIP(peer, X-Forwarded-For,
// trusted)). With one, the bearer token must verify against keys at now:
// its tenant caveat is the tenant, none gives Default. Errors are
// *httpx.Error values (possibly wrapped): 401 unauthorized for a header that
// is not a usable bearer token, a token that fails verification, or a tenant
// caveat outside the id syntax or starting with "anon:"; 403 forbidden for an
// otherwise valid token carrying two different tenant caveats.
func Identify(r *http.Request, peer netip.Addr, keys *auth.Keyring, trusted []netip.Prefix, now time.Time) (ID, *auth.Claims, error) {
	claims, err := auth.Check(keys, r, "", now)
	switch {
	case auth.KindOf(err) == auth.KindMissing:
		return ID(Anon(ClientIP(peer, r.Header.Values("X-Forwarded-For"), trusted))), nil, nil
	case err != nil:
		return "", nil, conflictOr(r, err, now)
	case claims.Tenant == "":
		return Default, claims, nil
	case !ValidTokenTenant(claims.Tenant):
		return "", nil, httpx.NewError(http.StatusUnauthorized, httpx.CodeUnauthorized, "invalid tenant caveat")
	}
	return ID(claims.Tenant), claims, nil
}

// conflictOr turns a verification failure caused by two different tenant
// caveats into 403 when every other check passes; any other failure stays.
func conflictOr(r *http.Request, err error, now time.Time) error {
	var ae *auth.AuthError
	if !errors.As(err, &ae) || ae.Kind != auth.KindInvalid || !errors.Is(err, auth.ErrConflictingTenant) {
		return err
	}
	tok, _ := auth.FromRequest(r)
	conds, ok := signedConditions(tok)
	if !ok || !conditionsValid(conds, now) {
		return err
	}
	return httpx.NewError(http.StatusForbidden, httpx.CodeForbidden, "token names two different tenants")
}

// signedConditions decodes tok's first-party conditions. Call it only for a
// token whose signature verified.
func signedConditions(tok string) ([]string, bool) {
	b, err := base64.RawURLEncoding.Strict().DecodeString(tok)
	if err != nil {
		return nil, false
	}
	var m macaroon.Macaroon
	if err := m.UnmarshalBinary(b); err != nil {
		return nil, false
	}
	conds := make([]string, 0, len(m.Caveats()))
	for _, c := range m.Caveats() {
		if len(c.VerificationId) != 0 {
			return nil, false
		}
		conds = append(conds, string(c.Id))
	}
	return conds, true
}

// conditionsValid repeats the verification checks other than tenant
// agreement: known well-formed caveats, a scope, and an expiry after now.
func conditionsValid(conds []string, now time.Time) bool {
	var scoped, dated bool
	for _, cond := range conds {
		name, value, ok := strings.Cut(cond, " = ")
		switch {
		case !ok:
			return false
		case name == auth.CaveatScope:
			scoped = true
			if !validScopes(value) {
				return false
			}
		case name == auth.CaveatTenant:
			if !ValidTokenTenant(value) {
				return false
			}
		case name == auth.CaveatExpires:
			dated = true
			if t, err := time.Parse(time.RFC3339, value); err != nil || !now.Before(t) {
				return false
			}
		default:
			return false
		}
	}
	return scoped && dated
}

func validScopes(value string) bool {
	set := strings.Fields(value)
	for _, s := range set {
		if !auth.ValidScope(s) {
			return false
		}
	}
	return len(set) > 0
}
