package verify

import (
	"crypto/ed25519"

	"golang.org/x/mod/sumdb/tlog"
)

// ed25519Key is a deterministic key from a one-byte seed.
func ed25519Key(b byte) ed25519.PrivateKey {
	seed := make([]byte, ed25519.SeedSize)
	seed[0] = b
	return ed25519.NewKeyFromSeed(seed)
}

func recordHash(leaf []byte) tlog.Hash { return tlog.RecordHash(leaf) }
