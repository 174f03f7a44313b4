package descriptor

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"
)

// TrustRoots are the genesis signers and quorum (docs/registry.md §6 bootstrap).
type TrustRoots struct {
	Signers []Signer
	Quorum  Quorum
}

var trustRootsShape = shape{fields: map[string]field{
	"schema_version": {tString, true},
	"signers":        {tObjects, true},
	"quorum":         {tObject, true},
}}

// rootSignerShape also admits "kind":"signer", so the signer item that
// `ron registry keygen` prints can be pasted as is.
var rootSignerShape = shape{fields: map[string]field{
	"kind": {tString, false}, "id": {tString, true}, "algo": {tString, true}, "pubkey": {tString, true},
}}

var rootQuorumShape = shape{fields: map[string]field{"m": {tNumber, true}, "n": {tNumber, true}}}

// ParseTrustRoots decodes a trust-roots file
// {schema_version:"1.x.y", signers:[{id, algo, pubkey}], quorum:{m,n}}.
// With pinB3 non-empty, "b3:" + BLAKE3 of the file's JCS must equal it
// (else 400 bad_request, trust_roots_b3, details.computed). The signers and
// quorum obey the item rules (ids, algo, valid unique pubkeys,
// 1 ≤ m ≤ n = len(signers) ≤ 32); failures name signers[i] or quorum in
// details.field. Error classes follow the package doc.
func ParseTrustRoots(raw []byte, pinB3 string) (TrustRoots, error) {
	canonical, err := Canonicalize(raw)
	if err != nil {
		return TrustRoots{}, err
	}
	if got := PayloadB3(canonical); pinB3 != "" && got != pinB3 {
		e := badRequest(top(""), ReasonPinMismatch, "trust roots hash to %s, pinned %s", got, clip(pinB3))
		e.Details["computed"] = got
		return TrustRoots{}, e
	}
	f, signers, err := trustRootsShapeCheck(canonical)
	if err != nil {
		return TrustRoots{}, err
	}
	if err := checkSchema(f.str("schema_version")); err != nil {
		return TrustRoots{}, err
	}
	return trustRootsRules(f, signers)
}

// trustRootsShapeCheck runs the malformed stage.
func trustRootsShapeCheck(canonical []byte) (members, []members, error) {
	f, err := decodeObject(top(""), canonical)
	if err != nil {
		return nil, nil, err
	}
	if err := trustRootsShape.check(top(""), f); err != nil {
		return nil, nil, err
	}
	raws, err := decodeArray(top("signers"), f["signers"])
	if err != nil {
		return nil, nil, err
	}
	signers := make([]members, len(raws))
	for i, r := range raws {
		l := top(fmt.Sprintf("signers[%d]", i))
		if signers[i], err = decodeObject(l, r); err != nil {
			return nil, nil, err
		}
		if err := rootSignerShape.check(l, signers[i]); err != nil {
			return nil, nil, err
		}
	}
	q, err := decodeObject(top("quorum"), f["quorum"])
	if err != nil {
		return nil, nil, err
	}
	return f, signers, rootQuorumShape.check(top("quorum"), q)
}

// trustRootsRules runs the bad_request stage.
func trustRootsRules(f members, signers []members) (TrustRoots, error) {
	for _, k := range []string{"quorum", "signers"} {
		if err := walkLimits(top(k), f[k], 2); err != nil {
			return TrustRoots{}, err
		}
	}
	var tr TrustRoots
	for i, sf := range signers {
		sg, err := rootSigner(top(fmt.Sprintf("signers[%d]", i)), sf, tr.Signers)
		if err != nil {
			return TrustRoots{}, err
		}
		tr.Signers = append(tr.Signers, sg)
	}
	var qf members
	_ = json.Unmarshal(f["quorum"], &qf)
	q, err := quorumRule(top("quorum"), qf)
	if err != nil {
		return TrustRoots{}, err
	}
	if q.N != len(tr.Signers) {
		return TrustRoots{}, badRequest(top("quorum.n"), ReasonQuorum, "n = %d but there are %d signers", q.N, len(tr.Signers))
	}
	tr.Quorum = q
	return tr, nil
}

// rootSigner checks one trust-root signer against the item rules and the
// signers before it (ids and pubkeys unique).
func rootSigner(l loc, f members, before []Signer) (Signer, error) {
	if k, ok := f["kind"]; ok && f.str("kind") != "signer" {
		return Signer{}, badRequest(l.in("kind"), ReasonInvalidValue, "kind %s; want \"signer\"", clip(string(k)))
	}
	if err := checkItemID(l.in("id"), "signer", f.str("id")); err != nil {
		return Signer{}, err
	}
	sg, err := signerRule(l, f)
	if err != nil {
		return Signer{}, err
	}
	for j, b := range before {
		if b.ID == sg.ID {
			return Signer{}, badRequest(l.in("id"), ReasonDuplicateItem, "signer %q repeats signers[%d]", sg.ID, j)
		}
		if bytes.Equal(b.Pubkey, sg.Pubkey) {
			return Signer{}, badRequest(l.in("pubkey"), ReasonInvalidValue, "pubkey repeats signers[%d]", j)
		}
	}
	return sg, nil
}

// Genesis builds version 0 from tr: prev_hash ZeroHash, created_at
// FormatTime(now), and the items: one signer item per trust-root signer in
// order, then {"kind":"quorum","id":"quorum",m,n}. No note. The result is
// checked by the same rules as ParseSet (so a TrustRoots not obtained from
// ParseTrustRoots is validated too). Genesis has no approvals; its artifact
// uses committed_at = created_at.
func Genesis(tr TrustRoots, now time.Time) (*Set, error) {
	items := make([]map[string]any, 0, len(tr.Signers)+1)
	for _, sg := range tr.Signers {
		items = append(items, map[string]any{"kind": "signer", "id": sg.ID, "algo": sg.Algo, "pubkey": sg.PubkeyB64})
	}
	items = append(items, map[string]any{"kind": "quorum", "id": "quorum", "m": tr.Quorum.M, "n": tr.Quorum.N})
	raw, err := json.Marshal(map[string]any{
		"version": 0, "prev_hash": ZeroHash, "created_at": FormatTime(now), "items": items,
	})
	if err != nil {
		return nil, fmt.Errorf("descriptor: genesis: %w", err)
	}
	return ParseSet(raw, Limits{MaxPayloadBytes: MaxPayloadCeiling}, time.Time{})
}
