package auth

import (
	"testing"
	"time"
)

// FuzzVerify checks that Verify never panics, fails only with KindInvalid or
// KindExpired, and accepts nothing but tokens minted with the key: a mutated
// token cannot carry a valid signature, so any token that verifies carries one
// of the seeds' ids. Seeds use fixed ids because fuzz workers rebuild them.
func FuzzVerify(f *testing.F) {
	k := testKeyring(f, 7)
	exp := ExpiresCaveat(t0.Add(time.Hour))
	seeds := map[string][]string{
		"seed-write":  {ScopeCaveat("storage:write"), exp},
		"seed-admin":  {ScopeCaveat("admin", "index:write"), TenantCaveat("acme"), exp},
		"seed-old":    {ScopeCaveat("admin"), ExpiresCaveat(t0.Add(-time.Hour))},
		"seed-no-exp": {ScopeCaveat("admin")},
	}
	var base string
	for id, conds := range seeds {
		tok, _ := k.mintRaw(f, id, conds...)
		f.Add(tok)
		base = tok
	}
	if tok, err := Attenuate(base, ScopeCaveat("storage:write"), TenantCaveat("t")); err == nil {
		f.Add(tok)
	}
	other := testKeyring(f, 9)
	foreign, _ := other.mintRaw(f, "seed-write", ScopeCaveat("admin"), exp)
	for _, s := range []string{"", "AA", "Ag", "AgIA", foreign, base + base, "~~~~"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, tok string) {
		c, err := k.Verify(tok, t0)
		if err != nil {
			if kind := KindOf(err); kind != KindInvalid && kind != KindExpired {
				t.Fatalf("kind %q for %v", kind, err)
			}
			return
		}
		if seeds[c.ID] == nil || c.Scopes == nil || !t0.Before(c.Expires) {
			t.Fatalf("verified unexpected token: %+v", c)
		}
		if _, err := other.Verify(tok, t0); err == nil {
			t.Fatal("token verified under two keys")
		}
	})
}
