package auth

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"testing"
	"testing/synctest"
	"time"
)

// TestTokenSource: one scope caveat listing every scope, valid MintedTTL, the
// same token until half its life has passed, then a fresh one.
func TestTokenSource(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		keys, err := GenerateKeyring()
		if err != nil {
			t.Fatal(err)
		}
		scopes := []string{"storage:write", "index:replicate"}
		tok := TokenSource(keys, scopes...)
		ctx := context.Background()
		first, err := tok(ctx)
		if err != nil {
			t.Fatal(err)
		}
		c, err := keys.Verify(first, time.Now())
		if err != nil || !slices.Equal(c.Scopes, scopes) || time.Until(c.Expires) > MintedTTL ||
			time.Until(c.Expires) < MintedTTL-time.Second {
			t.Fatalf("claims %+v, %v", c, err)
		}
		time.Sleep(MintedTTL/2 - time.Second)
		if again, _ := tok(ctx); again != first {
			t.Fatal("token renewed before half life")
		}
		time.Sleep(2 * time.Second)
		renewed, err := tok(ctx)
		if err != nil || renewed == first {
			t.Fatalf("token not renewed after half life: %v", err)
		}
	})
}

func TestTokenSourceNoKey(t *testing.T) {
	if _, err := TokenSource(nil, "storage:read")(context.Background()); !errors.Is(err, ErrNoKey) {
		t.Fatalf("err %v", err)
	}
}

// TestDeriveKey: derived keys depend on the context and the root key and
// are not the root key.
func TestDeriveKey(t *testing.T) {
	a, _ := NewKeyring(bytes.Repeat([]byte{1}, KeySize))
	b, _ := NewKeyring(bytes.Repeat([]byte{2}, KeySize))
	ga, gb := a.DeriveKey("ron cluster gossip v1"), b.DeriveKey("ron cluster gossip v1")
	switch {
	case len(ga) != KeySize:
		t.Fatalf("len %d", len(ga))
	case bytes.Equal(ga, gb):
		t.Fatal("two root keys derive the same key")
	case bytes.Equal(ga, a.DeriveKey("other")):
		t.Fatal("two contexts derive the same key")
	case bytes.Equal(ga, a.key):
		t.Fatal("derived key is the root key")
	case !bytes.Equal(ga, a.DeriveKey("ron cluster gossip v1")):
		t.Fatal("derivation is not deterministic")
	}
}
