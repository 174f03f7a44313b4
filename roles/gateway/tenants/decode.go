package tenants

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"

	"github.com/ronhq/ron/roles/gateway/tenant"
	"github.com/ronhq/ron/roles/registry/registryapi/descriptor"
)

// member is one member a tenant item may have.
type member struct {
	name     string
	required bool
}

// tenantMembers are the members a tenant item may have, in byte order.
var tenantMembers = []member{{"burst", true}, {"id", true}, {"kind", true}, {"max_bytes_per_s", true}, {"meta", false}, {"rps", true},
	{"weight", true}}

// decodeTenant decodes one item; isTenant is false for other kinds (and
// for items that are not objects with a string kind, which are not tenant
// items either). Errors wrap ErrItem.
func decodeTenant(raw json.RawMessage) (it Item, isTenant bool, err error) {
	var m map[string]json.RawMessage
	var kind string
	if json.Unmarshal(raw, &m) != nil || !isString(m["kind"]) || json.Unmarshal(m["kind"], &kind) != nil || kind != "tenant" {
		return Item{}, false, nil
	}
	if !isString(m["id"]) || json.Unmarshal(m["id"], &it.ID) != nil {
		return it, true, fmt.Errorf("%w: id is not a string", ErrItem)
	}
	for _, f := range tenantMembers {
		if _, ok := m[f.name]; f.required && !ok {
			return it, true, fmt.Errorf("%w: member %q missing", ErrItem, f.name)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(m)) {
		if !slices.ContainsFunc(tenantMembers, func(f member) bool { return f.name == name }) {
			return it, true, fmt.Errorf("%w: unknown member %q", ErrItem, clip(name))
		}
	}
	return it, true, decodeNumbers(m, &it)
}

// isString reports whether raw is a JSON string.
func isString(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) > 0 && raw[0] == '"'
}

// decodeNumbers reads the numeric members of a tenant item.
func decodeNumbers(m map[string]json.RawMessage, it *Item) error {
	rps, err := number(m, "rps", 0, descriptor.MaxSafeInt, false)
	if err != nil {
		return err
	}
	burst, err := number(m, "burst", 0, descriptor.MaxSafeInt, true)
	if err != nil {
		return err
	}
	weight, err := number(m, "weight", 1, tenant.MaxWeight, true)
	if err != nil {
		return err
	}
	bps, err := number(m, "max_bytes_per_s", 0, descriptor.MaxSafeInt, true)
	if err != nil {
		return err
	}
	it.RPS, it.Burst, it.Weight, it.MaxBytesPerS = rps, int(burst), int(weight), int64(bps)
	return nil
}

// number reads member name as a JSON number within [lo, hi], an integer
// when integer is set.
func number(m map[string]json.RawMessage, name string, lo, hi float64, integer bool) (float64, error) {
	raw := bytes.TrimSpace(m[name])
	v, err := strconv.ParseFloat(string(raw), 64)
	switch {
	case len(raw) == 0 || raw[0] == '"' || !json.Valid(raw) || err != nil:
		return 0, fmt.Errorf("%w: %s is not a number", ErrItem, name)
	case v < lo || v > hi:
		return 0, fmt.Errorf("%w: %s %s is outside %v–%v", ErrItem, name, raw, lo, hi)
	case integer && v != math.Trunc(v):
		return 0, fmt.Errorf("%w: %s %s is not an integer", ErrItem, name, raw)
	}
	return v, nil
}
