package descriptor

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/ronhq/ron/httpx"
)

// checkFuzzErr requires a refusal to be an *httpx.Error of a 4xx status.
func checkFuzzErr(t *testing.T, err error) {
	var he *httpx.Error
	if !errors.As(err, &he) || he.Status < 400 || he.Status > 499 || he.Details["reason"] == nil {
		t.Fatalf("refusal is not a 4xx *httpx.Error with a reason: %#v", err)
	}
}

func addSeeds(f *testing.F, seeds ...[]byte) {
	for _, s := range seeds {
		f.Add(s)
	}
}

func goldenFile(f *testing.F, name string) []byte {
	b, err := os.ReadFile(filepath.Join(goldenDir, name))
	if err != nil {
		f.Fatal(err)
	}
	return b
}

// FuzzParseSet: never panics; a refusal is a 4xx envelope error; an
// accepted payload's canonical form is canonical, re-parses to an equal Set
// and is the input itself when the input was canonical.
func FuzzParseSet(f *testing.F) {
	addSeeds(f, goldenFile(f, "golden-set.json"), goldenFile(f, "golden-set.jcs"), goldenFile(f, "genesis.jcs"),
		mustJSON(f, basePayload()), []byte(`{"version":0}`), []byte(`[`), []byte(`{"items":[{"kind":"x"}]}`),
		[]byte(`{"version":1,"prev_hash":"`+ZeroHash+`","created_at":"2026-01-01T00:00:00Z","items":[{"kind":"service","id":"a","x":[[[[1e400]]]]}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := ParseSet(b, DefaultLimits(), testNow)
		if err != nil {
			checkFuzzErr(t, err)
			return
		}
		if !IsCanonical(s.Canonical) || s.B3 != PayloadB3(s.Canonical) {
			t.Fatalf("accepted set not canonical: %q", s.Canonical)
		}
		again, err := ParseSet(s.Canonical, DefaultLimits(), testNow)
		if err != nil || !reflect.DeepEqual(again, s) {
			t.Fatalf("re-parse of the canonical form: %v", err)
		}
		if IsCanonical(b) && !bytes.Equal(b, s.Canonical) {
			t.Fatal("canonical input differs from its canonical form")
		}
	})
}

// FuzzDecodeApproval: never panics; accepted approvals re-encode
// canonically and decode equal.
func FuzzDecodeApproval(f *testing.F) {
	addSeeds(f, goldenFile(f, "golden-approval.jcs"), approvalJSON(f, nil), []byte(`{"sig":""}`), []byte(`{}`),
		approvalJSON(f, func(o obj) { o["sig"] = "AAAA\n" }))
	f.Fuzz(func(t *testing.T, b []byte) {
		a, err := DecodeApproval(b, DefaultLimits(), testNow)
		if err != nil {
			checkFuzzErr(t, err)
			return
		}
		enc, err := EncodeApproval(a)
		if err != nil || !IsCanonical(enc) {
			t.Fatalf("EncodeApproval: %v", err)
		}
		again, err := DecodeApproval(enc, DefaultLimits(), testNow)
		if err != nil || again != a {
			t.Fatalf("re-decode: %+v %v", again, err)
		}
	})
}

// FuzzDecodePropose: never panics; an accepted proposal re-encodes
// canonically (with its payload_b3) and decodes to an equal Set.
func FuzzDecodePropose(f *testing.F) {
	golden := goldenFile(f, "golden-set.json")
	addSeeds(f, proposeJSON(f, nil), []byte(`{"schema_version":"1.0.0","payload":`+string(golden)+`}`),
		proposeJSON(f, func(o obj) { o["payload_b3"] = someB3 }), []byte(`{"schema_version":"2.0.0","payload":{}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := DecodePropose(b, DefaultLimits(), testNow)
		if err != nil {
			checkFuzzErr(t, err)
			return
		}
		enc, err := EncodePropose(ProposeRequest{SchemaVersion: "1.0.0", Payload: s.Canonical, PayloadB3: s.B3})
		if err != nil || !IsCanonical(enc) {
			t.Fatalf("EncodePropose: %v", err)
		}
		again, err := DecodePropose(enc, DefaultLimits(), testNow)
		if err != nil || !reflect.DeepEqual(again, s) {
			t.Fatalf("re-decode: %v", err)
		}
	})
}

// FuzzParseArtifact: never panics; an artifact EncodeArtifact accepts
// re-parses equal and re-encodes to the same bytes.
func FuzzParseArtifact(f *testing.F) {
	addSeeds(f, goldenFile(f, "golden-artifact.jcs"), goldenFile(f, "genesis-artifact.jcs"), []byte(`{"approvals":[]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		a, err := ParseArtifact(b)
		if err != nil {
			checkFuzzErr(t, err)
			return
		}
		enc, err := EncodeArtifact(a)
		if err != nil {
			return // e.g. wrong payload_b3: the verifier's business
		}
		again, err := ParseArtifact(enc)
		if err != nil {
			t.Fatalf("re-parse: %v", err)
		}
		if enc2, err := EncodeArtifact(again); err != nil || !bytes.Equal(enc, enc2) {
			t.Fatalf("re-encode differs: %v", err)
		}
	})
}
