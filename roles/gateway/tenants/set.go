package tenants

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/ronhq/ron/roles/gateway/tenant"
	"github.com/ronhq/ron/roles/registry/registryapi/descriptor"
)

// ErrPayload reports a payload that is not a JSON object with an items
// array: ItemsFromSet then returns no items and one error wrapping it.
var ErrPayload = errors.New("descriptor set payload has no readable items")

// ItemsFromSet extracts the tenant items of a committed descriptor set
// payload (its canonical JSON bytes, as registryapi.Client.Get returns them
// in Artifact.Payload). The set is first validated as the registry validates
// a committed set (descriptor.ParseCommitted), whose tenant items are then
// checked against the gateway's rules too (ids starting with "anon:" are
// reserved). A payload that fails the registry's rules as a whole (a set
// from a newer registry, say) is read item by item instead, each tenant
// item checked on its own against docs/gateway.md §7: a closed member set (kind, id, rps,
// burst, weight, max_bytes_per_s, optional meta), every member present,
// rps a finite number ≥ 0, burst and max_bytes_per_s integers ≥ 0 and
// ≤ 2^53−1, weight an integer 1–1000. Invalid items come back as
// *ItemError values (Source "registry", Index = position in items), the
// rest as items in item order.
func ItemsFromSet(payload []byte) ([]Item, []error) {
	set, err := descriptor.ParseCommitted(payload)
	if err != nil {
		return itemsOneByOne(payload)
	}
	items := make([]Item, 0, len(set.Tenants))
	var errs []error
	for i, dt := range set.Tenants {
		it := Item{ID: dt.ID, RPS: dt.RPS, Burst: dt.Burst, Weight: dt.Weight, MaxBytesPerS: dt.MaxBytesPerS}
		if err := it.check(tenant.Params{}); err != nil {
			errs = append(errs, &ItemError{Source: SourceRegistry, Index: tenantIndex(payload, i), ID: it.ID, Err: err})
			continue
		}
		items = append(items, it)
	}
	return items, errs
}

// tenantIndex returns the position in the payload's items of its i-th
// tenant item (i itself when the payload cannot be read again).
func tenantIndex(payload []byte, i int) int {
	raws, err := rawItems(payload)
	if err != nil {
		return i
	}
	for j, raw := range raws {
		var head struct{ Kind string }
		if json.Unmarshal(raw, &head) == nil && head.Kind == "tenant" {
			if i == 0 {
				return j
			}
			i--
		}
	}
	return i
}

// rawItems returns the items array of a payload.
func rawItems(payload []byte) ([]json.RawMessage, error) {
	var top struct {
		Items *[]json.RawMessage `json:"items"`
	}
	if err := json.Unmarshal(payload, &top); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrPayload, err)
	}
	if top.Items == nil {
		return nil, fmt.Errorf("%w: no items array", ErrPayload)
	}
	return *top.Items, nil
}

// itemsOneByOne reads every tenant item of a payload on its own.
func itemsOneByOne(payload []byte) ([]Item, []error) {
	raws, err := rawItems(payload)
	if err != nil {
		return nil, []error{err}
	}
	var items []Item
	var errs []error
	for i, raw := range raws {
		it, isTenant, err := decodeTenant(raw)
		if err == nil && isTenant {
			err = it.check(tenant.Params{})
		}
		switch {
		case err != nil:
			errs = append(errs, &ItemError{Source: SourceRegistry, Index: i, ID: it.ID, Err: err})
		case isTenant:
			items = append(items, it)
		}
	}
	return items, errs
}
