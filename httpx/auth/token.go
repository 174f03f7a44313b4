package auth

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"gopkg.in/macaroon.v2"
)

// Location is the location every ron macaroon carries.
const Location = "ron"

// ScopeAdmin satisfies every scope, node-only ones included.
const ScopeAdmin = "admin"

// MaxTokenLen bounds the length of an encoded token Verify accepts.
const MaxTokenLen = 8192

// Caveat names (first-party caveats read "<name> = <value>").
const (
	CaveatScope   = "scope"
	CaveatTenant  = "tenant"
	CaveatExpires = "expires"
)

// nodeOnly lists scopes that a role's "<role>:admin" does not satisfy: only
// "admin" or the exact scope does.
var nodeOnly = map[string]bool{"storage:replicate": true, "index:replicate": true}

// NodeOnlyScopes returns the node-only scopes (a fresh slice).
func NodeOnlyScopes() []string {
	out := make([]string, 0, len(nodeOnly))
	for s := range nodeOnly {
		out = append(out, s)
	}
	slices.Sort(out)
	return out
}

// IsNodeOnly reports whether scope is node-only (not implied by "<role>:admin").
func IsNodeOnly(scope string) bool { return nodeOnly[scope] }

// MintOptions describes a token to mint. Scopes must be non-empty and each of
// the form "admin" or "<role>:<action>" (lowercase letters, digits, '_');
// TTL must be positive; Now defaults to time.Now().
type MintOptions struct {
	Scopes []string
	Tenant string
	TTL    time.Duration
	Now    time.Time
}

// Claims is what a verified token grants.
type Claims struct {
	// ID is the token's random id: the only part of a token fit for logs.
	ID string
	// Scopes are the effective scopes: those every scope caveat allows. Never
	// nil for a verified token (it may be empty when caveats are disjoint).
	Scopes []string
	// Tenant is the tenant caveat's value, "" when there is none.
	Tenant string
	// Expires is the earliest expires caveat.
	Expires time.Time
}

// Allows reports whether the claims satisfy scope: an exact match, "admin"
// (satisfies everything), or "<role>:admin" for any "<role>:*" scope that is
// not node-only. An empty scope is never allowed.
func (c *Claims) Allows(scope string) bool {
	if c == nil || scope == "" {
		return false
	}
	for _, have := range c.Scopes {
		if satisfies(have, scope) {
			return true
		}
	}
	return false
}

func satisfies(have, want string) bool {
	if have == want || have == ScopeAdmin {
		return true
	}
	role, action, ok := strings.Cut(have, ":")
	return ok && action == "admin" && strings.HasPrefix(want, role+":") && !nodeOnly[want]
}

// ValidScope reports whether s is "admin" or "<role>:<action>" with role and
// action made of lowercase letters, digits and '_' (starting with a letter).
func ValidScope(s string) bool {
	if s == ScopeAdmin {
		return true
	}
	role, action, ok := strings.Cut(s, ":")
	return ok && validName(role) && validName(action)
}

func validName(s string) bool {
	if len(s) == 0 || len(s) > 64 || s[0] < 'a' || s[0] > 'z' {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// ErrConflictingTenant is the cause of a verification failure for a token
// that carries two different tenant caveats (reported only after the
// signature verified; AuthError unwraps to it).
var ErrConflictingTenant = errors.New("conflicting tenant caveats")

// ValidTenant reports whether t is a usable tenant id: 1–128 characters from
// [A-Za-z0-9._:#/@-] (the registry's id alphabet).
func ValidTenant(t string) bool {
	if len(t) == 0 || len(t) > 128 {
		return false
	}
	for i := 0; i < len(t); i++ {
		c := t[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("._:#/@-", c) >= 0) {
			return false
		}
	}
	return true
}

// ScopeCaveat returns the condition "scope = s1 s2 …".
func ScopeCaveat(scopes ...string) string {
	return CaveatScope + " = " + strings.Join(scopes, " ")
}

// TenantCaveat returns the condition "tenant = t".
func TenantCaveat(t string) string { return CaveatTenant + " = " + t }

// ExpiresCaveat returns the condition "expires = <RFC3339 UTC>".
func ExpiresCaveat(t time.Time) string {
	return CaveatExpires + " = " + t.UTC().Format(time.RFC3339)
}

// Mint returns a new token (base64url without padding of the binary v2
// macaroon) and its id. Expiry is Now+TTL truncated to the second.
func (k *Keyring) Mint(opt MintOptions) (token, id string, err error) {
	conds, err := opt.conditions()
	if err != nil {
		return "", "", err
	}
	raw := make([]byte, 16)
	if _, err := rand.Read(raw); err != nil {
		return "", "", fmt.Errorf("auth: token id: %w", err)
	}
	id = hex.EncodeToString(raw)
	m, err := macaroon.New(k.key, []byte(id), Location, macaroon.V2)
	if err != nil {
		return "", "", fmt.Errorf("auth: mint: %w", err)
	}
	if err := addCaveats(m, conds); err != nil {
		return "", "", err
	}
	token, err = encode(m)
	return token, id, err
}

func (opt MintOptions) conditions() ([]string, error) {
	if len(opt.Scopes) == 0 {
		return nil, errors.New("auth: mint: no scope")
	}
	for _, s := range opt.Scopes {
		if !ValidScope(s) {
			return nil, fmt.Errorf("auth: mint: invalid scope %q", s)
		}
	}
	if opt.TTL <= 0 {
		return nil, errors.New("auth: mint: TTL must be positive")
	}
	now := opt.Now
	if now.IsZero() {
		now = time.Now()
	}
	conds := []string{ScopeCaveat(opt.Scopes...)}
	if opt.Tenant != "" {
		if !ValidTenant(opt.Tenant) {
			return nil, fmt.Errorf("auth: mint: invalid tenant %q", opt.Tenant)
		}
		conds = append(conds, TenantCaveat(opt.Tenant))
	}
	return append(conds, ExpiresCaveat(now.Add(opt.TTL))), nil
}

// Attenuate adds first-party caveats (conditions such as ScopeCaveat(...)) to a
// token without the root key, as any holder may. The result can only be
// narrower: Verify checks every caveat. Malformed tokens are rejected.
func Attenuate(token string, conditions ...string) (string, error) {
	m, err := decode(token)
	if err != nil {
		return "", err
	}
	if err := addCaveats(m, conditions); err != nil {
		return "", err
	}
	return encode(m)
}

func addCaveats(m *macaroon.Macaroon, conds []string) error {
	for _, c := range conds {
		if err := m.AddFirstPartyCaveat([]byte(c)); err != nil {
			return fmt.Errorf("auth: add caveat: %w", err)
		}
	}
	return nil
}

// Verify decodes token, checks its signature against the root key and every
// caveat, and returns its claims. Failures are *AuthError of kind KindInvalid
// (undecodable, bad signature, wrong key, unknown / malformed / conflicting
// caveats, no scope or no expires caveat, third-party caveats) or KindExpired
// (some expires caveat is not after now). Scopes are not checked here.
func (k *Keyring) Verify(token string, now time.Time) (*Claims, error) {
	if k == nil {
		return nil, newAuthError(KindInvalid, "", errors.New("no root key"))
	}
	m, err := decode(token)
	if err != nil {
		return nil, newAuthError(KindInvalid, "", err)
	}
	conds, err := m.VerifySignature(k.key, nil)
	if err != nil {
		return nil, newAuthError(KindInvalid, "", err)
	}
	c, err := parseConditions(conds)
	if err != nil {
		return nil, newAuthError(KindInvalid, "", err)
	}
	c.ID = string(m.Id())
	if !now.Before(c.Expires) {
		ae := newAuthError(KindExpired, "", fmt.Errorf("expired at %s", c.Expires.Format(time.RFC3339)))
		ae.TokenID = c.ID
		return nil, ae
	}
	return c, nil
}

func encode(m *macaroon.Macaroon) (string, error) {
	b, err := m.MarshalBinary()
	if err != nil {
		return "", fmt.Errorf("auth: encode token: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// decode parses a canonical v2 binary macaroon from base64url (no padding):
// other versions, trailing bytes and non-canonical encodings are rejected.
func decode(token string) (*macaroon.Macaroon, error) {
	if token == "" || len(token) > MaxTokenLen {
		return nil, fmt.Errorf("token length %d out of range", len(token))
	}
	b, err := base64.RawURLEncoding.Strict().DecodeString(token)
	if err != nil {
		return nil, errors.New("token is not base64url")
	}
	if len(b) == 0 || b[0] != byte(macaroon.V2) {
		return nil, errors.New("token is not a v2 macaroon")
	}
	var m macaroon.Macaroon
	if err := m.UnmarshalBinary(b); err != nil {
		return nil, fmt.Errorf("token: %w", err)
	}
	again, err := m.MarshalBinary()
	if err != nil || !bytes.Equal(again, b) {
		return nil, errors.New("token is not canonical")
	}
	return &m, nil
}

// caveats accumulates parsed conditions.
type caveats struct {
	sets    [][]string
	tenant  string
	expires time.Time
}

func parseConditions(conds []string) (*Claims, error) {
	var cv caveats
	for _, cond := range conds {
		if err := cv.add(cond); err != nil {
			return nil, err
		}
	}
	if len(cv.sets) == 0 {
		return nil, errors.New("no scope caveat")
	}
	if cv.expires.IsZero() {
		return nil, errors.New("no expires caveat")
	}
	return &Claims{Scopes: effectiveScopes(cv.sets), Tenant: cv.tenant, Expires: cv.expires}, nil
}

func (cv *caveats) add(cond string) error {
	name, value, ok := strings.Cut(cond, " = ")
	if !ok {
		return fmt.Errorf("malformed caveat %q", cond)
	}
	switch name {
	case CaveatScope:
		return cv.addScopes(value)
	case CaveatTenant:
		return cv.addTenant(value)
	case CaveatExpires:
		return cv.addExpires(value)
	}
	return fmt.Errorf("unknown caveat %q", name)
}

func (cv *caveats) addScopes(value string) error {
	set := strings.Fields(value)
	if len(set) == 0 {
		return errors.New("empty scope caveat")
	}
	for _, s := range set {
		if !ValidScope(s) {
			return fmt.Errorf("invalid scope %q", s)
		}
	}
	cv.sets = append(cv.sets, set)
	return nil
}

func (cv *caveats) addTenant(value string) error {
	if !ValidTenant(value) {
		return fmt.Errorf("invalid tenant %q", value)
	}
	if cv.tenant != "" && cv.tenant != value {
		return ErrConflictingTenant
	}
	cv.tenant = value
	return nil
}

func (cv *caveats) addExpires(value string) error {
	t, err := time.Parse(time.RFC3339, value)
	if err != nil {
		return fmt.Errorf("invalid expires %q", value)
	}
	if cv.expires.IsZero() || t.Before(cv.expires) {
		cv.expires = t
	}
	return nil
}

// effectiveScopes intersects scope caveats: it keeps each scope that every
// caveat satisfies. Because the scopes satisfying a given one form a chain
// (exact ⊂ <role>:admin ⊂ admin), a request is allowed by the result exactly
// when every caveat allows it.
func effectiveScopes(sets [][]string) []string {
	out := []string{}
	for _, set := range sets {
		for _, s := range set {
			if !slices.Contains(out, s) && allSatisfy(sets, s) {
				out = append(out, s)
			}
		}
	}
	return out
}

func allSatisfy(sets [][]string, want string) bool {
	for _, set := range sets {
		if !slices.ContainsFunc(set, func(have string) bool { return satisfies(have, want) }) {
			return false
		}
	}
	return true
}
