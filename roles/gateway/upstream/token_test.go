package upstream

import (
	"context"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ronhq/ron/httpx/auth"
)

func TestMintLinkToken(t *testing.T) {
	cases := []struct {
		privateReads bool
		scopes       []string
	}{
		{false, []string{"storage:write", "index:write"}},
		{true, []string{"storage:write", "index:write", "storage:read", "index:read", "edge:read", "registry:read"}},
	}
	for _, tc := range cases {
		synctest.Test(t, func(t *testing.T) {
			k, err := auth.GenerateKeyring()
			if err != nil {
				t.Fatal(err)
			}
			tokenFn := MintLinkToken(k, tc.privateReads)
			first, err := tokenFn(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			claims, err := k.Verify(first, time.Now())
			if err != nil {
				t.Fatal(err)
			}
			// One caveat listing every scope: separate caveats would intersect
			// to nothing.
			if !slices.Equal(claims.Scopes, tc.scopes) || claims.Tenant != "" {
				t.Fatalf("scopes %v tenant %q, want %v", claims.Scopes, claims.Tenant, tc.scopes)
			}
			if ttl := time.Until(claims.Expires); ttl <= 9*time.Minute || ttl > 10*time.Minute {
				t.Fatalf("token lives %v", ttl)
			}
			if !slices.Equal(LinkPrincipal(tc.privateReads).Scopes, tc.scopes) {
				t.Fatalf("principal scopes %v", LinkPrincipal(tc.privateReads).Scopes)
			}
			time.Sleep(5*time.Minute - time.Second)
			if again, _ := tokenFn(context.Background()); again != first {
				t.Fatal("token re-minted before half its life")
			}
			time.Sleep(time.Second)
			renewed, err := tokenFn(context.Background())
			if err != nil || renewed == first {
				t.Fatalf("token not renewed at half life: %v", err)
			}
			if _, err := k.Verify(renewed, time.Now().Add(9*time.Minute)); err != nil {
				t.Fatalf("renewed token: %v", err)
			}
		})
	}
}

func TestMintLinkTokenWithoutKey(t *testing.T) {
	if _, err := MintLinkToken(nil, false)(context.Background()); err == nil {
		t.Fatal("minted without a key")
	}
}

func TestLinkPrincipal(t *testing.T) {
	p := LinkPrincipal(false)
	if p.ID != LinkPrincipalID || p.Tenant != "" || !p.Expires.IsZero() {
		t.Fatalf("principal %+v", p)
	}
	for scope, want := range map[string]bool{"storage:write": true, "index:write": true, "storage:read": false,
		"registry:propose": false, "admin": false, "storage:replicate": false} {
		if p.Allows(scope) != want {
			t.Errorf("Allows(%s) = %v", scope, !want)
		}
	}
}
