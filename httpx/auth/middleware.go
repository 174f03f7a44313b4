package auth

import (
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/labstack/echo/v4"
)

const (
	headerCorrID = "X-Corr-ID"
	claimsKey    = "ron.auth.claims"
)

// FromRequest returns the token of an "Authorization: Bearer <token>" header
// (scheme case-insensitive). ok is false when there is no such header, when it
// is repeated, or when it uses another scheme or an empty token.
func FromRequest(r *http.Request) (token string, ok bool) {
	vals := r.Header.Values("Authorization")
	if len(vals) != 1 {
		return "", false
	}
	scheme, tok, found := strings.Cut(vals[0], " ")
	if !found || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	tok = strings.TrimSpace(tok)
	return tok, tok != ""
}

// Check authenticates r and authorizes scope at time now.
//
// A link principal in r's context (WithClaims) is used first: its claims are
// returned when they allow scope (KindScope otherwise; KindExpired when their
// Expires is set and not after now) and the Authorization header is ignored.
// Only in-process code can put a value in a request's context, so a remote
// client can never present a link principal.
//
// Otherwise the Authorization header is checked: none → KindMissing; a
// header that is not a usable Bearer token or a token that fails Verify →
// KindInvalid / KindExpired; claims lacking scope → KindScope. An empty scope
// only authenticates. Errors are *AuthError.
func Check(k *Keyring, r *http.Request, scope string, now time.Time) (*Claims, error) {
	if c := ClaimsFromContext(r.Context()); c != nil {
		return checkClaims(c, scope, now)
	}
	tok, ok := FromRequest(r)
	if !ok {
		if len(r.Header.Values("Authorization")) == 0 {
			return nil, newAuthError(KindMissing, scope, nil)
		}
		return nil, newAuthError(KindInvalid, scope, errors.New("not a bearer token"))
	}
	claims, err := k.Verify(tok, now)
	if err != nil {
		return nil, err
	}
	return Authorize(claims, scope)
}

// Authorize checks already verified claims against scope (empty:
// authentication only): nil claims → KindMissing, claims lacking scope →
// KindScope. Errors are *AuthError.
func Authorize(claims *Claims, scope string) (*Claims, error) {
	if claims == nil {
		return nil, newAuthError(KindMissing, scope, nil)
	}
	if scope != "" && !claims.Allows(scope) {
		ae := newAuthError(KindScope, scope, nil)
		ae.TokenID = claims.ID
		return nil, ae
	}
	return claims, nil
}

// Require returns echo middleware that runs Check with time.Now(). On success
// it stores the claims (see ClaimsFrom) and calls next; on failure it calls
// onFail(kind) when onFail is non-nil, writes the envelope with WriteError
// (corr id from the X-Corr-ID response header, else the request's) and does
// not call next.
func Require(k *Keyring, scope string, onFail func(kind string)) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			claims, err := Check(k, c.Request(), scope, time.Now())
			if err != nil {
				if onFail != nil {
					onFail(KindOf(err))
				}
				WriteError(c.Response(), corrID(c), err)
				return nil
			}
			c.Set(claimsKey, claims)
			return next(c)
		}
	}
}

// ClaimsFrom returns the claims Require stored in c, or nil.
func ClaimsFrom(c echo.Context) *Claims {
	claims, _ := c.Get(claimsKey).(*Claims)
	return claims
}

func corrID(c echo.Context) string {
	if id := c.Response().Header().Get(headerCorrID); id != "" {
		return id
	}
	return c.Request().Header.Get(headerCorrID)
}
