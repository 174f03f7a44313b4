package auth

import (
	"errors"
	"net/http"

	"github.com/ronhq/ron/httpx"
)

// Failure kinds, the values of the kind label of ron_<role>_auth_failures_total.
const (
	KindMissing = "missing" // no Authorization header
	KindInvalid = "invalid" // unparsable, badly signed, bad caveats, not a Bearer token
	KindExpired = "expired" // an expires caveat has passed
	KindScope   = "scope"   // valid token lacking the required scope
)

// AuthError is an authentication or authorization failure. It unwraps to the
// *httpx.Error envelope it answers with (so httpx.AsError and httpx.WriteError
// use it directly) and to its cause, which is for logs only and never sent.
type AuthError struct {
	Kind    string // one of the Kind constants
	Scope   string // the scope that was required, for KindScope
	TokenID string // the token's id when its signature verified (expired, scope), for logs
	Err     error  // cause (may be nil)
}

func newAuthError(kind, scope string, cause error) *AuthError {
	return &AuthError{Kind: kind, Scope: scope, Err: cause}
}

// Error returns the kind and the cause; it never contains the token.
func (e *AuthError) Error() string {
	msg := "auth: " + e.Kind
	if e.Scope != "" {
		msg += " (scope " + e.Scope + ")"
	}
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

// Unwrap returns the HTTP envelope and, when present, the cause.
func (e *AuthError) Unwrap() []error {
	if e.Err == nil {
		return []error{e.HTTP()}
	}
	return []error{e.HTTP(), e.Err}
}

// HTTP returns the envelope: 403 forbidden for KindScope, 401 unauthorized
// otherwise. The message names the kind and scope, never the cause.
func (e *AuthError) HTTP() *httpx.Error {
	switch e.Kind {
	case KindScope:
		return httpx.NewError(http.StatusForbidden, httpx.CodeForbidden, "token lacks scope %s", e.Scope)
	case KindMissing:
		return httpx.NewError(http.StatusUnauthorized, httpx.CodeUnauthorized, "missing bearer token")
	case KindExpired:
		return httpx.NewError(http.StatusUnauthorized, httpx.CodeUnauthorized, "token expired")
	}
	return httpx.NewError(http.StatusUnauthorized, httpx.CodeUnauthorized, "invalid token")
}

// KindOf returns the failure kind of err, or "" when err is not an *AuthError.
func KindOf(err error) string {
	var ae *AuthError
	if errors.As(err, &ae) {
		return ae.Kind
	}
	return ""
}

// WriteError writes err as the envelope via httpx.WriteError, adding
// "WWW-Authenticate: Bearer" when the answer is 401.
func WriteError(w http.ResponseWriter, corrID string, err error) {
	if httpx.AsError(err).Status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", "Bearer")
	}
	httpx.WriteError(w, corrID, err)
}
