package descriptor

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/gowebpki/jcs"
)

// ArtifactSchemaVersion is the schema_version every SignedArtifact carries.
const ArtifactSchemaVersion = "1.0.0"

var schemaRe = regexp.MustCompile(`^(0|[1-9][0-9]{0,8})\.(0|[1-9][0-9]{0,8})\.(0|[1-9][0-9]{0,8})$`)

// Artifact is a SignedArtifact, the log entry of one version (docs/registry.md §1).
// Payload is the canonical payload; Approvals are every accepted approval
// (none for genesis); CommittedAt is in FormatTime's form.
type Artifact struct {
	SchemaVersion string          `json:"schema_version"`
	Version       uint64          `json:"version"`
	Payload       json.RawMessage `json:"payload"`
	PayloadB3     string          `json:"payload_b3"`
	Approvals     []Approval      `json:"approvals"`
	PrevHash      string          `json:"prev_hash"`
	CommittedAt   string          `json:"committed_at"`
}

var artifactShape = shape{fields: map[string]field{
	"schema_version": {tString, true},
	"version":        {tNumber, true},
	"payload":        {tObject, true},
	"payload_b3":     {tString, true},
	"approvals":      {tObjects, true},
	"prev_hash":      {tString, true},
	"committed_at":   {tString, true},
}}

// payloadHeadShape reads only the chain members of a payload.
var payloadHeadShape = shape{open: true, fields: map[string]field{
	"version":   {tNumber, true},
	"prev_hash": {tString, true},
}}

// EncodeArtifact returns the canonical JCS bytes of a, approvals sorted by
// signer_id in byte order (a itself is not modified; nil approvals encode as
// []). It refuses an artifact ParseArtifact would refuse, a payload_b3 that
// is not the BLAKE3 of the canonical payload, and a signer approving twice.
func EncodeArtifact(a Artifact) ([]byte, error) {
	payload, err := jcs.Transform(a.Payload)
	if err != nil {
		return nil, fmt.Errorf("descriptor: artifact payload: %w", err)
	}
	if got := PayloadB3(payload); got != a.PayloadB3 {
		return nil, fmt.Errorf("descriptor: artifact payload_b3 %s, payload hashes to %s", a.PayloadB3, got)
	}
	a.Payload = payload
	a.Approvals = slices.SortedFunc(slices.Values(a.Approvals), func(x, y Approval) int {
		return strings.Compare(x.SignerID, y.SignerID)
	})
	for i := 1; i < len(a.Approvals); i++ {
		if a.Approvals[i].SignerID == a.Approvals[i-1].SignerID {
			return nil, fmt.Errorf("descriptor: signer %q approves twice", a.Approvals[i].SignerID)
		}
	}
	if a.Approvals == nil {
		a.Approvals = []Approval{}
	}
	raw, err := json.Marshal(a)
	if err != nil {
		return nil, fmt.Errorf("descriptor: encode artifact: %w", err)
	}
	out, err := jcs.Transform(raw)
	if err != nil {
		return nil, fmt.Errorf("descriptor: canonicalize artifact: %w", err)
	}
	if _, err := ParseArtifact(out); err != nil {
		return nil, fmt.Errorf("descriptor: invalid artifact: %w", err)
	}
	return out, nil
}

// ParseArtifact decodes a SignedArtifact strictly: syntax, unknown or
// missing members and wrong types (approvals' included, and a sig that is
// not base64 of 64 bytes) are 400 malformed. Then, as 400 bad_request:
// schema_version must have major 1; version must be an integer in
// 0…2^53−1; payload_b3 and prev_hash must be canonical b3 values;
// committed_at must be in FormatTime's form; at most MaxSigners
// approvals, each with a well-formed signer_id and signed_at (not compared
// with a clock); and version and prev_hash must equal the payload's own (reason chain).
// It does not recompute payload_b3, check the payload's item rules, the
// approvals' order or signatures, or that b is canonical (IsCanonical,
// ParseCommitted, SignerSet.VerifyQuorum do): the deep verifier reports
// each of those as its own check. Payload is returned in canonical form.
func ParseArtifact(b []byte) (Artifact, error) {
	canonical, err := Canonicalize(b)
	if err != nil {
		return Artifact{}, err
	}
	f, err := decodeObject(top(""), canonical)
	if err != nil {
		return Artifact{}, err
	}
	if err := artifactShape.check(top(""), f); err != nil {
		return Artifact{}, err
	}
	a := Artifact{SchemaVersion: f.str("schema_version"), Payload: f["payload"],
		PayloadB3: f.str("payload_b3"), PrevHash: f.str("prev_hash"), CommittedAt: f.str("committed_at")}
	if a.Approvals, err = decodeApprovals(f["approvals"]); err != nil {
		return Artifact{}, err
	}
	if err := a.checkHeader(f); err != nil {
		return Artifact{}, err
	}
	if err := a.checkApprovals(); err != nil {
		return Artifact{}, err
	}
	return a, a.checkPayloadHead()
}

// checkApprovals applies the approval count and each approval's rules.
func (a *Artifact) checkApprovals() error {
	if len(a.Approvals) > MaxSigners {
		return badRequest(top("approvals"), ReasonInvalidValue, "%d approvals exceed %d", len(a.Approvals), MaxSigners)
	}
	for i, ap := range a.Approvals {
		if err := ap.checkRules(top("approvals["+fmt.Sprint(i)+"]"), time.Time{}, 0); err != nil {
			return err
		}
	}
	return nil
}

// decodeApprovals runs the malformed stage over each approval.
func decodeApprovals(raw json.RawMessage) ([]Approval, error) {
	elems, err := decodeArray(top("approvals"), raw)
	if err != nil {
		return nil, err
	}
	out := make([]Approval, len(elems))
	for i, e := range elems {
		if out[i], err = approvalFrom(top("approvals["+fmt.Sprint(i)+"]"), e); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// checkHeader applies the bad_request rules to the artifact's own members.
func (a *Artifact) checkHeader(f members) error {
	if err := checkSchema(a.SchemaVersion); err != nil {
		return err
	}
	if err := walkLimits(top("version"), f["version"], 2); err != nil {
		return err
	}
	v, err := f.integer(top(""), "version", 0, MaxSafeInt)
	if err != nil {
		return err
	}
	a.Version = uint64(v)
	for _, h := range []struct{ name, v string }{{"payload_b3", a.PayloadB3}, {"prev_hash", a.PrevHash}} {
		if !IsB3(h.v) {
			return badRequest(top(h.name), ReasonInvalidValue, "%q is not b3: and 64 lowercase hex digits", clip(h.v))
		}
	}
	if !isCommittedAt(a.CommittedAt) {
		return badRequest(top("committed_at"), ReasonInvalidTime, "%q is not UTC with 3 fractional digits and Z", clip(a.CommittedAt))
	}
	return nil
}

// checkPayloadHead requires the payload's version and prev_hash to equal
// the artifact's.
func (a *Artifact) checkPayloadHead() error {
	f, err := decodeObject(top("payload"), a.Payload)
	if err != nil {
		return err
	}
	if err := payloadHeadShape.check(top("payload"), f); err != nil {
		return err
	}
	if !bytes.Equal(f["version"], []byte(fmt.Sprint(a.Version))) || f.str("prev_hash") != a.PrevHash {
		return badRequest(top("payload"), ReasonChain, "artifact (version %d, prev_hash %s) differs from its payload's (version %s, prev_hash %s)",
			a.Version, a.PrevHash, clip(string(f["version"])), clip(f.str("prev_hash")))
	}
	return nil
}

// checkSchema requires a semantic version string with major 1.
func checkSchema(v string) error {
	if !schemaRe.MatchString(v) || !strings.HasPrefix(v, "1.") {
		return badRequest(top("schema_version"), ReasonSchema, "schema_version %q is not 1.x.y", clip(v))
	}
	return nil
}
