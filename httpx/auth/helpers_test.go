package auth

import (
	"testing"

	"gopkg.in/macaroon.v2"
)

// mintRaw mints a macaroon with arbitrary conditions, bypassing Mint's checks.
func (k *Keyring) mintRaw(t testing.TB, id string, conds ...string) (string, *macaroon.Macaroon) {
	t.Helper()
	m, err := macaroon.New(k.key, []byte(id), Location, macaroon.V2)
	if err != nil {
		t.Fatal(err)
	}
	if err := addCaveats(m, conds); err != nil {
		t.Fatal(err)
	}
	tok, err := encode(m)
	if err != nil {
		t.Fatal(err)
	}
	return tok, m
}

func attenuateThirdParty(t testing.TB, tok string) string {
	t.Helper()
	m, err := decode(tok)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.AddThirdPartyCaveat([]byte("other-key-0123456789"), []byte("is-ok"), "elsewhere"); err != nil {
		t.Fatal(err)
	}
	out, err := encode(m)
	if err != nil {
		t.Fatal(err)
	}
	return out
}
