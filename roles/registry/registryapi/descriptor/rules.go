package descriptor

import (
	"maps"
	"slices"
	"strconv"
	"time"
)

// applyTop checks the members outside items and fills the header fields.
func (s *Set) applyTop(f members, now time.Time, skew time.Duration) error {
	for _, k := range slices.Sorted(maps.Keys(f)) {
		if k != "items" {
			if err := walkLimits(top(k), f[k], 2); err != nil {
				return err
			}
		}
	}
	v, err := f.integer(top(""), "version", 0, MaxSafeInt)
	if err != nil {
		return err
	}
	s.Version = uint64(v)
	s.PrevHash, s.CreatedAt, s.Note = f.str("prev_hash"), f.str("created_at"), f.str("note")
	if err := checkPrevHash(s.Version, s.PrevHash); err != nil {
		return err
	}
	if err := checkTime(top("created_at"), s.CreatedAt, now, skew); err != nil {
		return err
	}
	if len(s.Note) > MaxNoteBytes {
		return badRequest(top("note"), ReasonInvalidValue, "note of %d bytes exceeds %d", len(s.Note), MaxNoteBytes)
	}
	return nil
}

// checkPrevHash requires a canonical b3 and, for genesis, ZeroHash.
func checkPrevHash(version uint64, prev string) error {
	if !IsB3(prev) {
		return badRequest(top("prev_hash"), ReasonInvalidValue, "%q is not b3: and 64 lowercase hex digits", clip(prev))
	}
	if version == 0 && prev != ZeroHash {
		return badRequest(top("prev_hash"), ReasonInvalidValue, "version 0 must have the zero prev_hash")
	}
	return nil
}

// itemState tracks the rules that span items.
type itemState struct {
	seen     map[string]int // kind + "\x00" + id → item index
	pubkeys  map[string]int // raw pubkey → item index
	quorumAt int
}

// applyItems checks every item in order, then the quorum against the signers.
func (s *Set) applyItems(d *draft) error {
	if n := len(d.items); n < 1 || n > MaxItems {
		return badRequest(top("items"), ReasonItemCount, "%d items; want 1–%d", n, MaxItems)
	}
	st := &itemState{seen: map[string]int{}, pubkeys: map[string]int{}, quorumAt: -1}
	for i, f := range d.items {
		if err := s.applyItem(st, loc{item: i}, f, d.itemsRaw[i]); err != nil {
			return err
		}
	}
	if st.quorumAt < 0 {
		return badRequest(top("items"), ReasonQuorum, "no quorum item")
	}
	if s.Quorum.N != len(s.Signers) {
		return badRequest(loc{item: st.quorumAt, field: "n"}, ReasonQuorum,
			"n = %d but there are %d signer items", s.Quorum.N, len(s.Signers))
	}
	return nil
}

// applyItem checks one item: kind, limits, id, (kind, id) uniqueness, then
// the kind's own rules.
func (s *Set) applyItem(st *itemState, l loc, f members, raw []byte) error {
	kind, id := f.str("kind"), f.str("id")
	if _, ok := itemShapes[kind]; !ok {
		return badRequest(l.in("kind"), ReasonUnknownKind, "unknown kind %q", clip(kind))
	}
	for _, k := range slices.Sorted(maps.Keys(f)) {
		if err := walkLimits(l.in(k), f[k], 4); err != nil {
			return err
		}
	}
	if err := checkItemID(l.in("id"), kind, id); err != nil {
		return err
	}
	key := kind + "\x00" + id
	if first, dup := st.seen[key]; dup {
		return badRequest(l.in("id"), ReasonDuplicateItem, "%s %q repeats item %d", kind, id, first)
	}
	st.seen[key] = l.item
	return s.applyKind(st, l, kind, f, raw)
}

// applyKind dispatches to the rules of one known kind.
func (s *Set) applyKind(st *itemState, l loc, kind string, f members, raw []byte) error {
	switch kind {
	case "signer":
		return s.addSigner(st, l, f)
	case "quorum":
		q, err := quorumRule(l, f)
		s.Quorum, st.quorumAt = q, l.item
		return err
	case "node":
		n, err := nodeRule(l, f)
		s.Nodes = append(s.Nodes, n)
		return err
	case "tenant":
		t, err := tenantRule(l, f)
		s.Tenants = append(s.Tenants, t)
		return err
	}
	s.Services = append(s.Services, raw)
	return nil
}

// addSigner applies signerRule and the pubkey uniqueness rule.
func (s *Set) addSigner(st *itemState, l loc, f members) error {
	sg, err := signerRule(l, f)
	if err != nil {
		return err
	}
	if first, dup := st.pubkeys[string(sg.Pubkey)]; dup {
		return badRequest(l.in("pubkey"), ReasonInvalidValue, "pubkey repeats item %d", first)
	}
	st.pubkeys[string(sg.Pubkey)] = l.item
	s.Signers = append(s.Signers, sg)
	return nil
}

// checkItemID applies the id rule of kind at l.
func checkItemID(l loc, kind, id string) error {
	switch {
	case kind == "signer" && !IsSignerID(id):
		return badRequest(l, ReasonInvalidID, "signer id %q does not match %s", clip(id), signerIDRe)
	case kind == "quorum" && id != "quorum":
		return badRequest(l, ReasonInvalidID, "quorum id must be \"quorum\"")
	case kind != "signer" && !IsItemID(id):
		return badRequest(l, ReasonInvalidID, "id %q does not match %s", clip(id), itemIDRe)
	}
	return nil
}

// signerRule checks algo and pubkey (the id is checkItemID's).
func signerRule(l loc, f members) (Signer, error) {
	sg := Signer{ID: f.str("id"), Algo: f.str("algo"), PubkeyB64: f.str("pubkey")}
	if sg.Algo != AlgoEd25519 {
		return Signer{}, badRequest(l.in("algo"), ReasonInvalidValue, "algo %q; want %q", clip(sg.Algo), AlgoEd25519)
	}
	pk, err := parsePubkeyAt(l.in("pubkey"), sg.PubkeyB64)
	if err != nil {
		return Signer{}, err
	}
	sg.Pubkey = pk
	return sg, nil
}

// quorumRule checks 1 ≤ m ≤ n ≤ MaxSigners (n = signers is the caller's).
func quorumRule(l loc, f members) (Quorum, error) {
	n, err := f.integer(l, "n", 1, MaxSigners)
	if err != nil {
		return Quorum{}, err
	}
	m, err := f.integer(l, "m", 1, n)
	if err != nil {
		return Quorum{}, err
	}
	return Quorum{M: int(m), N: int(n)}, nil
}

// tenantRule checks the tenant's numeric ranges.
func tenantRule(l loc, f members) (Tenant, error) {
	t := Tenant{ID: f.str("id")}
	rps, err := strconv.ParseFloat(string(f["rps"]), 64)
	if err != nil || rps < 0 {
		return Tenant{}, badRequest(l.in("rps"), ReasonInvalidValue, "rps %s is not a number ≥ 0", clip(string(f["rps"])))
	}
	t.RPS = rps
	burst, err := f.integer(l, "burst", 0, MaxSafeInt)
	if err != nil {
		return Tenant{}, err
	}
	weight, err := f.integer(l, "weight", 1, 1000)
	if err != nil {
		return Tenant{}, err
	}
	bps, err := f.integer(l, "max_bytes_per_s", 0, MaxSafeInt)
	if err != nil {
		return Tenant{}, err
	}
	t.Burst, t.Weight, t.MaxBytesPerS = int(burst), int(weight), bps
	return t, nil
}
