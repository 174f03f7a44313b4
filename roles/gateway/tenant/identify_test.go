package tenant

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"testing"
	"time"

	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/httpx/auth"
)

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func mint(t *testing.T, k *auth.Keyring, tenant string, extra ...string) string {
	t.Helper()
	tok, _, err := k.Mint(auth.MintOptions{Scopes: []string{"storage:write"}, Tenant: tenant, TTL: time.Hour, Now: t0})
	if err != nil {
		t.Fatal(err)
	}
	if len(extra) > 0 {
		if tok, err = auth.Attenuate(tok, extra...); err != nil {
			t.Fatal(err)
		}
	}
	return tok
}

func TestIdentify(t *testing.T) {
	k, err := auth.GenerateKeyring()
	if err != nil {
		t.Fatal(err)
	}
	other, err := auth.GenerateKeyring()
	if err != nil {
		t.Fatal(err)
	}
	trusted := prefixes(t, "10.0.0.0/8")
	cases := []struct {
		name   string
		peer   string
		header map[string][]string
		want   ID
		status int
	}{
		{"anon v4", "203.0.113.9", nil, "anon:203.0.113.0/24", 0},
		{"anon v6", "2001:db8:1:2::9", nil, "anon:2001:db8:1:2::/64", 0},
		{"anon mapped", "::ffff:203.0.113.9", nil, "anon:203.0.113.0/24", 0},
		{"anon behind proxy", "10.0.0.1", map[string][]string{"X-Forwarded-For": {"198.51.100.4"}}, "anon:198.51.100.0/24", 0},
		{"xff ignored from untrusted", "203.0.113.9", map[string][]string{"X-Forwarded-For": {"198.51.100.4"}}, "anon:203.0.113.0/24", 0},
		{"forwarded ignored", "10.0.0.1", map[string][]string{"Forwarded": {"for=198.51.100.4"}}, "anon:10.0.0.0/24", 0},
		{"token tenant", "203.0.113.9", bearer(mint(t, k, "acme")), "acme", 0},
		{"token tenant in the registry id alphabet", "203.0.113.9", bearer(mint(t, k, "org:acme#eu/1@x")), "org:acme#eu/1@x", 0},
		{"token without tenant", "203.0.113.9", bearer(mint(t, k, "")), Default, 0},
		{"same tenant twice", "203.0.113.9", bearer(mint(t, k, "acme", auth.TenantCaveat("acme"))), "acme", 0},
		{"two tenants", "203.0.113.9", bearer(mint(t, k, "acme", auth.TenantCaveat("evil"))), "", 403},
		{"two tenants expired", "203.0.113.9", bearer(mint(t, k, "acme", auth.TenantCaveat("evil"), auth.ExpiresCaveat(t0))), "", 401},
		{"two tenants unknown caveat", "203.0.113.9", bearer(mint(t, k, "acme", auth.TenantCaveat("evil"), "color = red")), "", 401},
		{"two tenants one anon", "203.0.113.9", bearer(mint(t, k, "acme", auth.TenantCaveat("anon:x"))), "", 401},
		{"anon caveat", "203.0.113.9", bearer(mint(t, k, "anon:203.0.113.0")), "", 401},
		{"caveat bad first char", "203.0.113.9", bearer(mint(t, k, ".acme")), "", 401},
		{"wrong key", "203.0.113.9", bearer(mint(t, other, "acme")), "", 401},
		{"expired", "203.0.113.9", bearer(mint(t, k, "acme", auth.ExpiresCaveat(t0))), "", 401},
		{"garbage token", "203.0.113.9", bearer("not-a-token"), "", 401},
		{"basic scheme", "203.0.113.9", map[string][]string{"Authorization": {"Basic YTpi"}}, "", 401},
		{"empty bearer", "203.0.113.9", map[string][]string{"Authorization": {"Bearer "}}, "", 401},
		{"two headers", "203.0.113.9", map[string][]string{"Authorization": {"Bearer a", "Bearer b"}}, "", 401},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodGet, "/o", nil)
			for name, vals := range c.header {
				r.Header[name] = vals
			}
			got, _, err := Identify(r, netip.MustParseAddr(c.peer), k, trusted, t0.Add(time.Minute))
			if c.status != 0 {
				if he := httpx.AsError(err); err == nil || he.Status != c.status {
					t.Fatalf("Identify = %q, %v; want status %d", got, err, c.status)
				}
				return
			}
			if err != nil || got != c.want {
				t.Fatalf("Identify = %q, %v; want %q", got, err, c.want)
			}
		})
	}
}

func bearer(tok string) map[string][]string {
	return map[string][]string{"Authorization": {"Bearer " + tok}}
}

func TestIdentifyConflictIsForbidden(t *testing.T) {
	k, err := auth.GenerateKeyring()
	if err != nil {
		t.Fatal(err)
	}
	r := httptest.NewRequest(http.MethodGet, "/o", nil)
	r.Header.Set("Authorization", "Bearer "+mint(t, k, "a", auth.TenantCaveat("b")))
	_, _, err = Identify(r, netip.MustParseAddr("203.0.113.9"), k, nil, t0)
	var he *httpx.Error
	if !errors.As(err, &he) || he.Code != httpx.CodeForbidden {
		t.Fatalf("err = %v, want forbidden", err)
	}
}
