package indexsink

import (
	"context"
	"errors"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ronhq/ron/httpx/auth"
	"github.com/ronhq/ron/roles/index/indexapi"
)

// TestMintToken: index:write tokens valid 10 minutes, the same one handed
// out until half their life, then a fresh one.
func TestMintToken(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		keys, err := auth.GenerateKeyring()
		if err != nil {
			t.Fatal(err)
		}
		tok := MintToken(keys)
		ctx := context.Background()
		first, err := tok(ctx)
		if err != nil {
			t.Fatal(err)
		}
		c, err := keys.Verify(first, time.Now())
		if err != nil || !slices.Equal(c.Scopes, []string{indexapi.ScopeWrite}) ||
			time.Until(c.Expires) > 10*time.Minute || time.Until(c.Expires) < 10*time.Minute-time.Second {
			t.Fatalf("claims %+v, %v", c, err)
		}
		time.Sleep(5*time.Minute - time.Second)
		if again, _ := tok(ctx); again != first {
			t.Fatal("token renewed too early")
		}
		time.Sleep(2 * time.Second)
		renewed, err := tok(ctx)
		if err != nil || renewed == first {
			t.Fatalf("token not renewed at half life: %v", err)
		}
		if _, err := keys.Verify(renewed, time.Now().Add(9*time.Minute)); err != nil {
			t.Fatalf("renewed token: %v", err)
		}
	})
}

func TestMintTokenNoKey(t *testing.T) {
	if _, err := MintToken(nil)(context.Background()); !errors.Is(err, ErrNoKey) {
		t.Fatalf("err %v", err)
	}
}
