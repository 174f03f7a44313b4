package descriptor

import "encoding/json"

// draft is a payload that passed the shape stage: its top-level members and
// each item's members (all canonical).
type draft struct {
	top      members
	items    []members
	itemsRaw []json.RawMessage
}

var topShape = shape{fields: map[string]field{
	"version":    {tNumber, true},
	"prev_hash":  {tString, true},
	"created_at": {tString, true},
	"items":      {tArray, true},
	"note":       {tString, false},
}}

var metaField = field{typ: tObject}

// itemShapes are the members each known kind allows.
var itemShapes = map[string]shape{
	"signer": {fields: map[string]field{"kind": {tString, true}, "id": {tString, true},
		"algo": {tString, true}, "pubkey": {tString, true}, "meta": metaField}},
	"quorum": {fields: map[string]field{"kind": {tString, true}, "id": {tString, true},
		"m": {tNumber, true}, "n": {tNumber, true}, "meta": metaField}},
	"node": {fields: map[string]field{"kind": {tString, true}, "id": {tString, true},
		"roles": {tStrings, true}, "urls": {tStringMap, false}, "zone": {tString, false}, "meta": metaField}},
	"tenant": {fields: map[string]field{"kind": {tString, true}, "id": {tString, true},
		"rps": {tNumber, true}, "burst": {tNumber, true}, "weight": {tNumber, true},
		"max_bytes_per_s": {tNumber, true}, "meta": metaField}},
	"service": {open: true, fields: map[string]field{"kind": {tString, true}, "id": {tString, true},
		"meta": metaField}},
}

// unknownKindShape only requires a string kind; the rule stage then refuses
// the kind itself (bad_request), so its other members are never judged.
var unknownKindShape = shape{open: true, fields: map[string]field{"kind": {tString, true}}}

// decodeDraft runs the shape stage over a canonical payload.
func decodeDraft(canonical []byte) (*draft, error) {
	f, err := decodeObject(top(""), canonical)
	if err != nil {
		return nil, err
	}
	if err := topShape.check(top(""), f); err != nil {
		return nil, err
	}
	raws, err := decodeArray(top("items"), f["items"])
	if err != nil {
		return nil, err
	}
	d := &draft{top: f, itemsRaw: raws, items: make([]members, len(raws))}
	for i, raw := range raws {
		if d.items[i], err = decodeItem(loc{item: i}, raw); err != nil {
			return nil, err
		}
	}
	return d, nil
}

// decodeItem applies the item's kind shape (or the unknown-kind shape).
func decodeItem(l loc, raw json.RawMessage) (members, error) {
	f, err := decodeObject(l, raw)
	if err != nil {
		return nil, err
	}
	if err := unknownKindShape.check(l, f); err != nil {
		return nil, err
	}
	if sh, ok := itemShapes[f.str("kind")]; ok {
		if err := sh.check(l, f); err != nil {
			return nil, err
		}
	}
	return f, nil
}
