package descriptor

import (
	"encoding/json"
	"time"

	"github.com/gowebpki/jcs"
)

// ProposeRequest is the body of POST /registry/proposals:
// {schema_version:"1.x.y", payload, payload_b3?}.
type ProposeRequest struct {
	SchemaVersion string          `json:"schema_version"`
	Payload       json.RawMessage `json:"payload"`
	PayloadB3     string          `json:"payload_b3,omitempty"`
}

var proposeShape = shape{fields: map[string]field{
	"schema_version": {tString, true},
	"payload":        {tObject, true},
	"payload_b3":     {tString, false},
}}

// DecodePropose decodes and validates a propose body in the docs/registry.md §2 order:
// canonicalise the whole body and check its shape (400 malformed), then
// schema_version major 1 (else 400 bad_request, schema_version), then the
// payload exactly as ParseSet (malformed → 413 → bad_request), then a
// supplied payload_b3 must equal the computed one (else 400 bad_request,
// payload_b3_mismatch, details.computed). The chain check against HEAD is
// the caller's (Set.CheckChain).
func DecodePropose(raw []byte, lim Limits, now time.Time) (*Set, error) {
	canonical, err := Canonicalize(raw)
	if err != nil {
		return nil, err
	}
	f, err := decodeObject(top(""), canonical)
	if err != nil {
		return nil, err
	}
	if err := proposeShape.check(top(""), f); err != nil {
		return nil, err
	}
	if err := checkSchema(f.str("schema_version")); err != nil {
		return nil, err
	}
	s, err := ParseSet(f["payload"], lim, now)
	if err != nil {
		return nil, err
	}
	if supplied, ok := f["payload_b3"]; ok && f.str("payload_b3") != s.B3 {
		e := badRequest(top("payload_b3"), ReasonHashMismatch, "payload_b3 %s differs from the computed %s", clip(string(supplied)), s.B3)
		e.Details["computed"] = s.B3
		return nil, e
	}
	return s, nil
}

// EncodePropose returns the canonical JCS bytes of r (payload_b3 omitted
// when empty). It does not validate r; DecodePropose does.
func EncodePropose(r ProposeRequest) ([]byte, error) {
	raw, err := json.Marshal(r)
	if err != nil {
		return nil, err
	}
	return jcs.Transform(raw)
}
