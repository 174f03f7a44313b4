package registrycmd

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/ronhq/ron/roles/registry/registryapi"
	"github.com/ronhq/ron/roles/registry/registryapi/descriptor"
)

// proposeSchemaVersion is the schema_version `propose` sends for a bare
// DescriptorSet.
const proposeSchemaVersion = "1.0.0"

// proposeInput is a parsed `propose` file: a bare DescriptorSet or a full
// proposal body {schema_version, payload, payload_b3?}.
type proposeInput struct {
	schemaVersion string
	payload       map[string]json.RawMessage
	payloadB3     string // as given in a full body ("" none)
}

// parseProposeInput decodes the file strictly (jcs: no duplicate keys,
// valid UTF-8, no trailing data). An object with a "payload" member is a
// full proposal body, anything else a DescriptorSet.
func parseProposeInput(raw []byte) (proposeInput, error) {
	canonical, err := descriptor.Canonicalize(raw)
	if err != nil {
		return proposeInput{}, usage(fmt.Errorf("proposal file: %w", err))
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(canonical, &top); err != nil {
		return proposeInput{}, usage(errors.New("proposal file: not a JSON object"))
	}
	if _, full := top["payload"]; !full {
		return proposeInput{schemaVersion: proposeSchemaVersion, payload: top}, nil
	}
	var body struct {
		SchemaVersion string                     `json:"schema_version"`
		Payload       map[string]json.RawMessage `json:"payload"`
		PayloadB3     string                     `json:"payload_b3"`
	}
	dec := json.NewDecoder(bytes.NewReader(canonical))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&body); err != nil || body.Payload == nil {
		return proposeInput{}, usage(fmt.Errorf("proposal body: want {schema_version, payload, payload_b3?}: %v", err))
	}
	if body.SchemaVersion == "" {
		body.SchemaVersion = proposeSchemaVersion
	}
	return proposeInput{schemaVersion: body.SchemaVersion, payload: body.Payload, payloadB3: body.PayloadB3}, nil
}

// request fills a missing version and prev_hash from HEAD (fetched only
// when needed) and a missing created_at from now, then returns the propose
// request with the payload in canonical form and its payload_b3. A
// payload_b3 given with an incomplete payload cannot be right: refused.
func (in proposeInput) request(ctx context.Context, c registryapi.Client, now time.Time) (descriptor.ProposeRequest, error) {
	p := make(map[string]json.RawMessage, len(in.payload)+3)
	for k, v := range in.payload {
		p[k] = v
	}
	filled, err := fillPayload(ctx, c, p, now)
	if err != nil {
		return descriptor.ProposeRequest{}, err
	}
	if filled && in.payloadB3 != "" {
		return descriptor.ProposeRequest{}, usage(errors.New("payload_b3 is given but the payload lacks version, prev_hash or created_at"))
	}
	raw, err := json.Marshal(p)
	if err != nil {
		return descriptor.ProposeRequest{}, usage(err)
	}
	canonical, err := descriptor.Canonicalize(raw)
	if err != nil {
		return descriptor.ProposeRequest{}, usage(err)
	}
	b3 := in.payloadB3
	if b3 == "" {
		b3 = descriptor.PayloadB3(canonical)
	}
	return descriptor.ProposeRequest{SchemaVersion: in.schemaVersion, Payload: canonical, PayloadB3: b3}, nil
}

// fillPayload sets the missing chain members of p and reports whether it
// set any.
func fillPayload(ctx context.Context, c registryapi.Client, p map[string]json.RawMessage, now time.Time) (bool, error) {
	_, hasV := p["version"]
	_, hasPrev := p["prev_hash"]
	filled := false
	if !hasV || !hasPrev {
		h, err := c.Head(ctx)
		if err != nil {
			return false, err
		}
		if !hasV {
			p["version"] = mustJSON(h.Version + 1)
		}
		if !hasPrev {
			p["prev_hash"] = mustJSON(h.PayloadB3)
		}
		filled = true
	}
	if _, ok := p["created_at"]; !ok {
		p["created_at"] = mustJSON(descriptor.FormatTime(now))
		filled = true
	}
	return filled, nil
}

// mustJSON encodes a number or string (never fails for those).
func mustJSON(v any) json.RawMessage {
	b, _ := json.Marshal(v)
	return b
}

// parseVersion parses a canonical decimal version (no sign, no leading
// zeros), as GET /registry/{version} requires.
func parseVersion(s string) (uint64, bool) {
	if s == "" || len(s) > 20 || (len(s) > 1 && s[0] == '0') {
		return 0, false
	}
	var v uint64
	for i := 0; i < len(s); i++ {
		d := s[i]
		if d < '0' || d > '9' || v > (1<<64-1-uint64(d-'0'))/10 {
			return 0, false
		}
		v = v*10 + uint64(d-'0')
	}
	return v, true
}
