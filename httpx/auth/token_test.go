package auth

import (
	"encoding/base64"
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ronhq/ron/httpx"
)

var t0 = time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)

func testKeyring(t testing.TB, b byte) *Keyring {
	t.Helper()
	key := make([]byte, KeySize)
	for i := range key {
		key[i] = b + byte(i)
	}
	k, err := NewKeyring(key)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func mint(t testing.TB, k *Keyring, opt MintOptions) string {
	t.Helper()
	if opt.Now.IsZero() {
		opt.Now = t0
	}
	if opt.TTL == 0 {
		opt.TTL = time.Hour
	}
	tok, _, err := k.Mint(opt)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func wantKind(t *testing.T, err error, kind string) {
	t.Helper()
	if got := KindOf(err); got != kind {
		t.Fatalf("kind = %q (err %v), want %q", got, err, kind)
	}
}

func TestMintVerifyRoundTrip(t *testing.T) {
	k := testKeyring(t, 1)
	tok, id, err := k.Mint(MintOptions{Scopes: []string{"storage:write", "index:write"}, Tenant: "acme", TTL: time.Hour, Now: t0})
	if err != nil {
		t.Fatal(err)
	}
	if strings.ContainsAny(tok, "+/=") {
		t.Fatalf("token is not unpadded base64url: %q", tok)
	}
	c, err := k.Verify(tok, t0.Add(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if c.ID != id || len(id) != 32 || c.Tenant != "acme" || !c.Expires.Equal(t0.Add(time.Hour)) {
		t.Fatalf("claims = %+v, id %q", c, id)
	}
	if !slices.Equal(c.Scopes, []string{"storage:write", "index:write"}) {
		t.Fatalf("scopes = %v", c.Scopes)
	}
	_, id2, _ := k.Mint(MintOptions{Scopes: []string{"admin"}, TTL: time.Hour})
	if id2 == id {
		t.Fatal("token ids repeat")
	}
}

func TestMintRejectsBadOptions(t *testing.T) {
	k := testKeyring(t, 1)
	for _, opt := range []MintOptions{
		{TTL: time.Hour},
		{Scopes: []string{"storage:write"}},
		{Scopes: []string{"storage:write"}, TTL: -time.Second},
		{Scopes: []string{"Storage:write"}, TTL: time.Hour},
		{Scopes: []string{"storage write"}, TTL: time.Hour},
		{Scopes: []string{""}, TTL: time.Hour},
		{Scopes: []string{"storage:write"}, Tenant: "a b", TTL: time.Hour},
	} {
		if _, _, err := k.Mint(opt); err == nil {
			t.Errorf("Mint(%+v) succeeded", opt)
		}
	}
}

func TestVerifyExpired(t *testing.T) {
	k := testKeyring(t, 1)
	tok := mint(t, k, MintOptions{Scopes: []string{"admin"}, TTL: time.Minute})
	if _, err := k.Verify(tok, t0.Add(time.Minute-time.Second)); err != nil {
		t.Fatal(err)
	}
	_, err := k.Verify(tok, t0.Add(time.Minute))
	wantKind(t, err, KindExpired)
	var ae *AuthError
	if !errors.As(err, &ae) || len(ae.TokenID) != 32 || strings.Contains(err.Error(), tok) {
		t.Fatalf("expired error %v lacks the token id or leaks the token", err)
	}
	_, err = k.Verify(tok, t0.Add(time.Hour))
	wantKind(t, err, KindExpired)
}

func TestVerifyTamperedSignature(t *testing.T) {
	k := testKeyring(t, 1)
	raw, _ := base64.RawURLEncoding.DecodeString(mint(t, k, MintOptions{Scopes: []string{"storage:write"}}))
	// v2 ends with: signature field (type, length, 32 bytes) then EOS.
	for _, off := range []int{len(raw) - 2, len(raw) - 20, 10} {
		b := slices.Clone(raw)
		b[off] ^= 0x01
		_, err := k.Verify(base64.RawURLEncoding.EncodeToString(b), t0)
		wantKind(t, err, KindInvalid)
	}
}

func TestVerifyWrongRootKey(t *testing.T) {
	tok := mint(t, testKeyring(t, 1), MintOptions{Scopes: []string{"admin"}})
	_, err := testKeyring(t, 2).Verify(tok, t0)
	wantKind(t, err, KindInvalid)
	var nilRing *Keyring
	_, err = nilRing.Verify(tok, t0)
	wantKind(t, err, KindInvalid)
}

func TestVerifyMalformedTokens(t *testing.T) {
	k := testKeyring(t, 1)
	good := mint(t, k, MintOptions{Scopes: []string{"admin"}})
	raw, _ := base64.RawURLEncoding.DecodeString(good)
	b64 := base64.RawURLEncoding.EncodeToString
	cases := map[string]string{
		"empty":              "",
		"garbage":            "!!!not base64!!!",
		"std base64":         base64.StdEncoding.EncodeToString(raw),
		"padded":             good + "=",
		"truncated":          good[:len(good)-5],
		"truncated binary":   b64(raw[:len(raw)-1]),
		"trailing bytes":     b64(append(slices.Clone(raw), 0)),
		"v1 byte":            b64(append([]byte{'a'}, raw[1:]...)),
		"version 3":          b64(append([]byte{3}, raw[1:]...)),
		"only version byte":  b64([]byte{2}),
		"zero bytes":         b64(make([]byte, 40)),
		"huge":               strings.Repeat("A", MaxTokenLen+1),
		"json macaroon":      `{"v":2,"i":"x"}`,
		"whitespace":         " " + good,
		"non-canonical tail": good[:len(good)-1] + "B",
	}
	for name, tok := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := k.Verify(tok, t0)
			wantKind(t, err, KindInvalid)
		})
	}
}

func TestVerifyCaveatRules(t *testing.T) {
	k := testKeyring(t, 1)
	base := mint(t, k, MintOptions{Scopes: []string{"storage:write", "index:write"}})
	exp := ExpiresCaveat(t0.Add(time.Hour))
	noScope, _ := k.mintRaw(t, "exp-only", exp)
	noExpiry, _ := k.mintRaw(t, "scope-only", ScopeCaveat("admin"))
	thirdParty := attenuateThirdParty(t, base)
	cases := []struct {
		name string
		tok  string
		kind string
	}{
		{"unknown caveat", attenuate(t, base, "ip = 10.0.0.1"), KindInvalid},
		{"no separator", attenuate(t, base, "scope=admin"), KindInvalid},
		{"empty scope", attenuate(t, base, "scope = "), KindInvalid},
		{"bad scope", attenuate(t, base, "scope = STORAGE"), KindInvalid},
		{"bad expires", attenuate(t, base, "expires = tomorrow"), KindInvalid},
		{"bad tenant", attenuate(t, base, "tenant = a b"), KindInvalid},
		{"tenant outside the id alphabet", attenuate(t, base, "tenant = a%b"), KindInvalid},
		{"conflicting tenants", attenuate(t, base, TenantCaveat("a"), TenantCaveat("b")), KindInvalid},
		{"no scope caveat", noScope, KindInvalid},
		{"no expires caveat", noExpiry, KindInvalid},
		{"third-party caveat", thirdParty, KindInvalid},
		{"earlier expiry", attenuate(t, base, ExpiresCaveat(t0.Add(-time.Second))), KindExpired},
		{"later expiry keeps earlier", attenuate(t, base, ExpiresCaveat(t0.Add(48*time.Hour))), ""},
		{"agreeing tenants", attenuate(t, base, TenantCaveat("a"), TenantCaveat("a")), ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := k.Verify(tc.tok, t0)
			wantKind(t, err, tc.kind)
			if err == nil && !c.Expires.Equal(t0.Add(time.Hour)) {
				t.Fatalf("expires = %v", c.Expires)
			}
		})
	}
}

func TestAttenuation(t *testing.T) {
	k := testKeyring(t, 1)
	base := mint(t, k, MintOptions{Scopes: []string{"storage:write", "index:write", "registry:propose"}})
	narrowed := attenuate(t, base, ScopeCaveat("storage:write", "index:write"), ScopeCaveat("storage:write", "storage:admin"), TenantCaveat("acme"))
	c, err := k.Verify(narrowed, t0)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(c.Scopes, []string{"storage:write"}) || c.Tenant != "acme" {
		t.Fatalf("claims = %+v", c)
	}
	if !c.Allows("storage:write") || c.Allows("index:write") || c.Allows("registry:propose") {
		t.Fatal("attenuated scopes not intersected")
	}
	widened := attenuate(t, base, ScopeCaveat("admin"))
	c, err = k.Verify(widened, t0)
	if err != nil {
		t.Fatal(err)
	}
	if c.Allows("gateway:write") || !c.Allows("index:write") {
		t.Fatalf("a scope caveat widened the token: %v", c.Scopes)
	}
	disjoint := attenuate(t, base, ScopeCaveat("edge:write"))
	if c, err := k.Verify(disjoint, t0); err != nil || len(c.Scopes) != 0 || c.Allows("storage:write") {
		t.Fatalf("disjoint caveats: %+v, %v", c, err)
	}
	if _, err := Attenuate("garbage", ScopeCaveat("admin")); err == nil {
		t.Fatal("Attenuate accepted garbage")
	}
}

func TestAllowsRules(t *testing.T) {
	cases := []struct {
		have  string
		want  string
		allow bool
	}{
		{"admin", "storage:write", true},
		{"admin", "storage:replicate", true},
		{"admin", "admin", true},
		{"storage:admin", "storage:write", true},
		{"storage:admin", "storage:read_inventory", true},
		{"storage:admin", "storage:admin", true},
		{"storage:admin", "storage:replicate", false},
		{"storage:admin", "index:write", false},
		{"storage:admin", "admin", false},
		{"storage:replicate", "storage:replicate", true},
		{"storage:write", "storage:admin", false},
		{"storage:write", "storage:read_inventory", false},
		{"index:admin", "index:write", true},
		{"storage:write", "", false},
	}
	for _, tc := range cases {
		c := &Claims{Scopes: []string{tc.have}}
		if got := c.Allows(tc.want); got != tc.allow {
			t.Errorf("%s allows %s = %v, want %v", tc.have, tc.want, got, tc.allow)
		}
	}
	var nilClaims *Claims
	if nilClaims.Allows("admin") {
		t.Error("nil claims allow")
	}
	for _, s := range []string{"storage:replicate", "index:replicate"} {
		if !IsNodeOnly(s) || !slices.Contains(NodeOnlyScopes(), s) {
			t.Errorf("%s is not node-only", s)
		}
	}
	if (&Claims{ID: "x", Scopes: []string{"index:admin"}}).Allows("index:replicate") {
		t.Error("index:admin satisfies index:replicate")
	}
}

// TestEffectiveScopesMatchEveryCaveat checks exhaustively, over a small
// universe, that Allows on the intersected scopes equals "every caveat allows".
func TestEffectiveScopesMatchEveryCaveat(t *testing.T) {
	universe := []string{"admin", "storage:admin", "storage:write", "storage:replicate", "index:admin", "index:write"}
	var subsets [][]string
	for mask := 1; mask < 1<<len(universe); mask++ {
		var s []string
		for i, sc := range universe {
			if mask&(1<<i) != 0 {
				s = append(s, sc)
			}
		}
		subsets = append(subsets, s)
	}
	for _, a := range subsets {
		for _, b := range subsets {
			sets := [][]string{a, b}
			c := &Claims{Scopes: effectiveScopes(sets)}
			for _, want := range universe {
				if got, exp := c.Allows(want), allSatisfy(sets, want); got != exp {
					t.Fatalf("%v ∩ %v for %s: %v, want %v", a, b, want, got, exp)
				}
			}
		}
	}
}

func TestAuthErrorEnvelope(t *testing.T) {
	cases := []struct {
		kind   string
		status int
		code   string
	}{
		{KindMissing, 401, httpx.CodeUnauthorized},
		{KindInvalid, 401, httpx.CodeUnauthorized},
		{KindExpired, 401, httpx.CodeUnauthorized},
		{KindScope, 403, httpx.CodeForbidden},
	}
	for _, tc := range cases {
		err := error(newAuthError(tc.kind, "storage:write", errors.New("secret cause")))
		he := httpx.AsError(err)
		if he.Status != tc.status || he.Code != tc.code || strings.Contains(he.Message, "secret") {
			t.Errorf("%s: %+v", tc.kind, he)
		}
	}
	if got := httpx.AsError(newAuthError(KindScope, "storage:write", nil)).Status; got != http.StatusForbidden {
		t.Errorf("scope without cause: %d", got)
	}
}

func attenuate(t *testing.T, tok string, conds ...string) string {
	t.Helper()
	out, err := Attenuate(tok, conds...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}
