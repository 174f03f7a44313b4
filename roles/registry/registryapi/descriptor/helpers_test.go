package descriptor

import (
	"bytes"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/ronhq/ron/httpx"
)

// testNow is the clock every test passes.
var testNow = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// testKey returns a deterministic key: the seed is 32 bytes of b.
func testKey(b byte) ed25519.PrivateKey {
	return ed25519.NewKeyFromSeed(bytes.Repeat([]byte{b}, ed25519.SeedSize))
}

func pubB64(b byte) string {
	return base64.StdEncoding.EncodeToString(testKey(b).Public().(ed25519.PublicKey))
}

// obj is a JSON object under construction.
type obj = map[string]any

// basePayload is a valid version-1 payload using every kind.
func basePayload() obj {
	return obj{
		"version":    1,
		"prev_hash":  "b3:" + string(bytes.Repeat([]byte("ab"), 32)),
		"created_at": "2026-01-02T03:04:05Z",
		"note":       "base",
		"items": []any{
			obj{"kind": "signer", "id": "org:example#k1", "algo": "ed25519", "pubkey": pubB64(1)},
			obj{"kind": "signer", "id": "org:example#k2", "algo": "ed25519", "pubkey": pubB64(2)},
			obj{"kind": "quorum", "id": "quorum", "m": 1, "n": 2},
			obj{"kind": "node", "id": "node-a", "roles": []any{"storage", "index"},
				"urls": obj{"storage": "http://10.0.0.1:5303"}, "zone": "eu-1"},
			obj{"kind": "tenant", "id": "acme", "rps": 10.5, "burst": 20, "weight": 100, "max_bytes_per_s": 0},
			obj{"kind": "service", "id": "svc/web", "ports": []any{80, 443}, "meta": obj{"owner": "ops"}},
		},
	}
}

// item returns item i of p for mutation.
func item(p obj, i int) obj { return p["items"].([]any)[i].(obj) }

func mustJSON(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// wantErr describes an expected *httpx.Error. item −1 and field "" mean the
// details member must be absent.
type wantErr struct {
	status int
	code   string
	reason string
	item   int
	field  string
}

func checkErr(t testing.TB, err error, w wantErr) {
	t.Helper()
	var he *httpx.Error
	if !errors.As(err, &he) {
		t.Fatalf("error %v (%T), want *httpx.Error %+v", err, err, w)
	}
	if he.Status != w.status || he.Code != w.code || he.Details["reason"] != w.reason {
		t.Fatalf("got %d %s (%v): %s; want %d %s (%s)", he.Status, he.Code, he.Details["reason"], he.Message, w.status, w.code, w.reason)
	}
	if got, ok := he.Details["item"]; (w.item >= 0) != ok || (ok && got != w.item) {
		t.Fatalf("details.item = %v (present %v), want %d: %s", got, ok, w.item, he.Message)
	}
	if got, ok := he.Details["field"]; (w.field != "") != ok || (ok && got != w.field) {
		t.Fatalf("details.field = %v, want %q: %s", got, w.field, he.Message)
	}
}

// Shorthands for the common expectations.
func mal(reason string, item int, field string) wantErr {
	return wantErr{400, httpx.CodeMalformed, reason, item, field}
}

func bad(reason string, item int, field string) wantErr {
	return wantErr{400, httpx.CodeBadRequest, reason, item, field}
}

// nested returns depth arrays nested inside each other around 0.
func nested(depth int) any {
	var v any = 0
	for range depth {
		v = []any{v}
	}
	return v
}
