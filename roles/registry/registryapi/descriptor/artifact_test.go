package descriptor

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"
)

// testArtifact returns a valid artifact of signersSet(v=1) approved by k2
// then k1 (unsorted on purpose).
func testArtifact(t testing.TB) Artifact {
	s := signersSet(t, 1, someB3, 2, 1, 2)
	return Artifact{
		SchemaVersion: ArtifactSchemaVersion, Version: s.Version, Payload: s.Canonical, PayloadB3: s.B3,
		Approvals:   []Approval{signAs(2, k(2), s.B3), signAs(1, k(1), s.B3)},
		PrevHash:    s.PrevHash,
		CommittedAt: FormatTime(testNow),
	}
}

func TestArtifactRoundTrip(t *testing.T) {
	a := testArtifact(t)
	b, err := EncodeArtifact(a)
	if err != nil {
		t.Fatal(err)
	}
	if a.Approvals[0].SignerID != k(2) {
		t.Fatal("EncodeArtifact reordered the caller's slice")
	}
	if !IsCanonical(b) {
		t.Fatalf("not canonical: %s", b)
	}
	if i, j := bytes.Index(b, []byte(k(1))), bytes.Index(b, []byte(k(2))); i < 0 || i > j {
		t.Fatalf("approvals not sorted: %s", b)
	}
	got, err := ParseArtifact(b)
	if err != nil {
		t.Fatal(err)
	}
	a.Approvals[0], a.Approvals[1] = a.Approvals[1], a.Approvals[0]
	if !reflect.DeepEqual(got, a) {
		t.Fatalf("round trip:\n%+v\n%+v", got, a)
	}
	again, err := EncodeArtifact(got)
	if err != nil || !bytes.Equal(again, b) {
		t.Fatalf("re-encode differs: %v", err)
	}
}

func TestGenesisArtifactHasEmptyApprovals(t *testing.T) {
	g := testGenesis(t)
	b, err := EncodeArtifact(Artifact{SchemaVersion: ArtifactSchemaVersion, Payload: g.Canonical, PayloadB3: g.B3,
		PrevHash: ZeroHash, CommittedAt: g.CreatedAt})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(b, []byte(`"approvals":[]`)) || !bytes.HasPrefix(b, []byte(`{"approvals":[],"committed_at":"2026-01-02T03:04:05.000Z","payload":{`)) {
		t.Fatalf("genesis artifact %s", b)
	}
}

func TestEncodeArtifactRefuses(t *testing.T) {
	cases := map[string]func(a *Artifact){
		"payload_b3 mismatch":   func(a *Artifact) { a.PayloadB3 = someB3 },
		"duplicate signer":      func(a *Artifact) { a.Approvals[1] = a.Approvals[0] },
		"payload not JSON":      func(a *Artifact) { a.Payload = json.RawMessage(`{`) },
		"version differs":       func(a *Artifact) { a.Version = 2 },
		"prev_hash differs":     func(a *Artifact) { a.PrevHash = ZeroHash },
		"committed_at format":   func(a *Artifact) { a.CommittedAt = "2026-01-02T03:04:05Z" },
		"schema_version 2":      func(a *Artifact) { a.SchemaVersion = "2.0.0" },
		"approval sig short":    func(a *Artifact) { a.Approvals[0].Sig = "AAAA" },
		"approval signer id":    func(a *Artifact) { a.Approvals[0].SignerID = "k" },
		"approval signed_at":    func(a *Artifact) { a.Approvals[0].SignedAt = "now" },
		"schema_version absent": func(a *Artifact) { a.SchemaVersion = "" },
	}
	for name, mut := range cases {
		t.Run(name, func(t *testing.T) {
			a := testArtifact(t)
			mut(&a)
			if b, err := EncodeArtifact(a); err == nil {
				t.Fatalf("encoded %s", b)
			}
		})
	}
}

// artifactJSON is testArtifact as a mutable object.
func artifactJSON(t testing.TB, mut func(o obj)) []byte {
	b, err := EncodeArtifact(testArtifact(t))
	if err != nil {
		t.Fatal(err)
	}
	var o obj
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&o); err != nil {
		t.Fatal(err)
	}
	mut(o)
	return mustJSON(t, o)
}

func firstApproval(o obj) obj { return o["approvals"].([]any)[0].(obj) }

func TestParseArtifactBadInput(t *testing.T) {
	cases := []struct {
		name string
		raw  []byte
		want wantErr
	}{
		{"not JSON", []byte(`{"version":`), mal(ReasonSyntax, -1, "")},
		{"unknown member", artifactJSON(t, func(o obj) { o["corr_id"] = "x" }), mal(ReasonUnknownField, -1, "corr_id")},
		{"missing committed_at", artifactJSON(t, func(o obj) { delete(o, "committed_at") }), mal(ReasonMissingField, -1, "committed_at")},
		{"approvals null", artifactJSON(t, func(o obj) { o["approvals"] = nil }), mal(ReasonWrongType, -1, "approvals")},
		{"payload string", artifactJSON(t, func(o obj) { o["payload"] = "{}" }), mal(ReasonWrongType, -1, "payload")},
		{"approval unknown member", artifactJSON(t, func(o obj) { firstApproval(o)["x"] = 1 }), mal(ReasonUnknownField, -1, "approvals[0].x")},
		{"approval bad sig", artifactJSON(t, func(o obj) { firstApproval(o)["sig"] = "AAAA" }), mal(ReasonBadSig, -1, "approvals[0].sig")},
		{"payload without version", artifactJSON(t, func(o obj) { delete(o["payload"].(obj), "version") }), mal(ReasonMissingField, -1, "payload.version")},
		{"schema_version 2", artifactJSON(t, func(o obj) { o["schema_version"] = "2.0.0" }), bad(ReasonSchema, -1, "schema_version")},
		{"schema_version not semver", artifactJSON(t, func(o obj) { o["schema_version"] = "1.0" }), bad(ReasonSchema, -1, "schema_version")},
		{"version negative", artifactJSON(t, func(o obj) { o["version"] = -1 }), bad(ReasonInvalidValue, -1, "version")},
		{"version 2^53", artifactJSON(t, func(o obj) { o["version"] = uint64(1 << 53) }), bad(ReasonIntegerRange, -1, "version")},
		{"payload_b3 uppercase", artifactJSON(t, func(o obj) { o["payload_b3"] = strings.ToUpper(someB3) }), bad(ReasonInvalidValue, -1, "payload_b3")},
		{"prev_hash empty", artifactJSON(t, func(o obj) { o["prev_hash"] = "" }), bad(ReasonInvalidValue, -1, "prev_hash")},
		{"committed_at seconds only", artifactJSON(t, func(o obj) { o["committed_at"] = "2026-01-02T03:04:05Z" }), bad(ReasonInvalidTime, -1, "committed_at")},
		{"committed_at offset", artifactJSON(t, func(o obj) { o["committed_at"] = "2026-01-02T03:04:05.000+00:00" }), bad(ReasonInvalidTime, -1, "committed_at")},
		{"approval signer id", artifactJSON(t, func(o obj) { firstApproval(o)["signer_id"] = "k1" }), bad(ReasonInvalidID, -1, "approvals[0].signer_id")},
		{"approval signed_at", artifactJSON(t, func(o obj) { firstApproval(o)["signed_at"] = "soon" }), bad(ReasonInvalidTime, -1, "approvals[0].signed_at")},
		{"33 approvals", artifactJSON(t, func(o obj) {
			a := o["approvals"].([]any)
			for len(a) < 33 {
				a = append(a, a[0])
			}
			o["approvals"] = a
		}), bad(ReasonInvalidValue, -1, "approvals")},
		{"version differs from payload", artifactJSON(t, func(o obj) { o["version"] = 2 }), bad(ReasonChain, -1, "payload")},
		{"prev_hash differs from payload", artifactJSON(t, func(o obj) { o["prev_hash"] = ZeroHash }), bad(ReasonChain, -1, "payload")},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParseArtifact(c.raw)
			checkErr(t, err, c.want)
		})
	}
}

// TestParseArtifactLeavesChecksToVerifier: a wrong payload_b3, unsorted
// approvals, non-canonical bytes and a far-future signed_at all parse; the
// deep verifier reports them as their own checks.
func TestParseArtifactLeavesChecksToVerifier(t *testing.T) {
	b, err := EncodeArtifact(testArtifact(t))
	if err != nil {
		t.Fatal(err)
	}
	var indented bytes.Buffer
	_ = json.Indent(&indented, b, "", "  ")
	for name, c := range map[string]struct {
		raw          []byte
		reencodeSame bool
	}{
		"indented":       {indented.Bytes(), false},
		"wrong b3":       {artifactJSON(t, func(o obj) { o["payload_b3"] = someB3 }), false},
		"unsorted":       {artifactJSON(t, func(o obj) { a := o["approvals"].([]any); a[0], a[1] = a[1], a[0] }), false},
		"future approve": {artifactJSON(t, func(o obj) { firstApproval(o)["signed_at"] = "2999-01-01T00:00:00Z" }), true},
	} {
		t.Run(name, func(t *testing.T) {
			a, err := ParseArtifact(c.raw)
			if err != nil {
				t.Fatal(err)
			}
			if !IsCanonical(a.Payload) {
				t.Fatal("payload not returned canonical")
			}
			re, err := EncodeArtifact(a)
			if same := err == nil && bytes.Equal(re, c.raw); same != c.reencodeSame {
				t.Fatalf("re-encoding equal = %v, want %v (%v)", same, c.reencodeSame, err)
			}
		})
	}
}

// TestLeafBound: a payload at the 49,152-byte ceiling with 32 signers and
// 32 approvals stays under 61,440 bytes (docs/registry.md §1), below tlog-tiles' 65,535.
func TestLeafBound(t *testing.T) {
	p := basePayload()
	manySigners(p, 32, 32)
	p["created_at"] = "2026-01-02T03:04:05.123456789+00:00"
	p["items"] = append(p["items"].([]any), obj{"kind": "service", "id": "pad", "pad": ""})
	s, err := ParseSet(mustJSON(t, p), DefaultLimits(), testNow)
	if err != nil {
		t.Fatal(err)
	}
	last := len(p["items"].([]any)) - 1
	item(p, last)["pad"] = strings.Repeat("p", MaxPayloadCeiling-len(s.Canonical))
	if s, err = ParseSet(mustJSON(t, p), DefaultLimits(), testNow); err != nil || len(s.Canonical) != MaxPayloadCeiling {
		t.Fatalf("padded set: %v", err)
	}
	a := Artifact{SchemaVersion: ArtifactSchemaVersion, Version: s.Version, Payload: s.Canonical, PayloadB3: s.B3,
		PrevHash: s.PrevHash, CommittedAt: FormatTime(testNow)}
	for i := byte(1); i <= 32; i++ {
		ap := signAs(i, k(i), s.B3)
		ap.SignedAt = "2026-01-02T03:04:05.123456789+00:00"
		a.Approvals = append(a.Approvals, ap)
	}
	b, err := EncodeArtifact(a)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) >= 61440 {
		t.Fatalf("leaf of %d bytes", len(b))
	}
	if err := NewSignerSet(s, nil).VerifyQuorum(a.Approvals, s.B3); err != nil {
		t.Fatal(err)
	}
}

func TestFormatTime(t *testing.T) {
	cases := map[string]time.Time{
		"2026-01-02T03:04:05.000Z": testNow,
		"2026-01-02T03:04:05.999Z": testNow.Add(999999999),
		"2026-01-02T01:04:05.120Z": time.Date(2026, 1, 2, 3, 4, 5, 120e6, time.FixedZone("x", 7200)),
		"0001-01-01T00:00:00.000Z": {},
	}
	for want, in := range cases {
		if got := FormatTime(in); got != want || !isCommittedAt(got) {
			t.Errorf("FormatTime(%v) = %s, want %s", in, got, want)
		}
	}
}
