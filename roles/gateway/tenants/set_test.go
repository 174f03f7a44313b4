package tenants

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/ronhq/ron/roles/registry/registryapi/descriptor"
)

func TestItemsFromGoldenSet(t *testing.T) {
	payload, err := os.ReadFile("../../registry/testdata/golden-set.jcs")
	if err != nil {
		t.Fatal(err)
	}
	items, errs := ItemsFromSet(payload)
	want := []Item{
		{ID: "acme", RPS: 12.5, Burst: 100, Weight: 10, MaxBytesPerS: 1048576},
		{ID: "suspended-co", RPS: 0, Burst: 0, Weight: 1},
	}
	if len(errs) != 0 || len(items) != len(want) || items[0] != want[0] || items[1] != want[1] {
		t.Fatalf("items %+v, errors %v", items, errs)
	}
}

func TestItemsFromSetSkipsAnonIDs(t *testing.T) {
	s := validSet(t, 0, descriptor.ZeroHash,
		tenantItem("acme", 200, 400, 2, 1<<20),
		map[string]any{"kind": "node", "id": "n1", "roles": []string{"storage"}},
		tenantItem("anon:203.0.113.0/24", 1, 1, 1, 0), // valid registry id, reserved by the gateway
		tenantItem("beta", 1.5, 0, 1000, 0))
	items, errs := ItemsFromSet(s.Canonical)
	if len(items) != 2 || items[0].ID != "acme" || items[1] != (Item{ID: "beta", RPS: 1.5, Weight: 1000}) {
		t.Fatalf("items %+v", items)
	}
	var ie *ItemError
	if len(errs) != 1 || !errors.As(errs[0], &ie) || !errors.Is(errs[0], ErrItem) ||
		ie.Source != SourceRegistry || ie.Index != 4 || ie.ID != "anon:203.0.113.0/24" {
		t.Fatalf("errors %v", errs)
	}
}

func TestItemsFromSetNoTenants(t *testing.T) {
	items, errs := ItemsFromSet(validSet(t, 0, descriptor.ZeroHash).Canonical)
	if len(items) != 0 || len(errs) != 0 {
		t.Fatalf("items %v, errors %v", items, errs)
	}
}

// TestItemsFromSetItemByItem feeds sets the registry's rules refuse as a
// whole: each tenant item is then judged on its own.
func TestItemsFromSetItemByItem(t *testing.T) {
	bad := []struct {
		name, item string
	}{
		{"weight 0", `{"kind":"tenant","id":"x","rps":1,"burst":1,"weight":0,"max_bytes_per_s":0}`},
		{"weight 1001", `{"kind":"tenant","id":"x","rps":1,"burst":1,"weight":1001,"max_bytes_per_s":0}`},
		{"negative rps", `{"kind":"tenant","id":"x","rps":-1,"burst":1,"weight":1,"max_bytes_per_s":0}`},
		{"huge rps", `{"kind":"tenant","id":"x","rps":1e400,"burst":1,"weight":1,"max_bytes_per_s":0}`},
		{"rps as string", `{"kind":"tenant","id":"x","rps":"5","burst":1,"weight":1,"max_bytes_per_s":0}`},
		{"rps null", `{"kind":"tenant","id":"x","rps":null,"burst":1,"weight":1,"max_bytes_per_s":0}`},
		{"negative burst", `{"kind":"tenant","id":"x","rps":1,"burst":-1,"weight":1,"max_bytes_per_s":0}`},
		{"fractional burst", `{"kind":"tenant","id":"x","rps":1,"burst":1.5,"weight":1,"max_bytes_per_s":0}`},
		{"burst past 2^53", `{"kind":"tenant","id":"x","rps":1,"burst":1e16,"weight":1,"max_bytes_per_s":0}`},
		{"negative bytes", `{"kind":"tenant","id":"x","rps":1,"burst":1,"weight":1,"max_bytes_per_s":-1}`},
		{"missing burst", `{"kind":"tenant","id":"x","rps":1,"weight":1,"max_bytes_per_s":0}`},
		{"missing id", `{"kind":"tenant","rps":1,"burst":1,"weight":1,"max_bytes_per_s":0}`},
		{"numeric id", `{"kind":"tenant","id":5,"rps":1,"burst":1,"weight":1,"max_bytes_per_s":0}`},
		{"bad id", `{"kind":"tenant","id":"-x","rps":1,"burst":1,"weight":1,"max_bytes_per_s":0}`},
		{"anon id", `{"kind":"tenant","id":"anon:x","rps":1,"burst":1,"weight":1,"max_bytes_per_s":0}`},
		{"unknown member", `{"kind":"tenant","id":"x","rps":1,"burst":1,"weight":1,"max_bytes_per_s":0,"plan":"pro"}`},
	}
	good := `{"kind":"tenant","id":"good","rps":2,"burst":3,"weight":4,"max_bytes_per_s":5,"meta":{"plan":"pro"}}`
	for _, c := range bad {
		t.Run(c.name, func(t *testing.T) {
			payload := `{"version":1,"prev_hash":"x","created_at":"x","items":[{"kind":"widget"},` + good + `,` +
				c.item + `,"not an object",{"kind":7}]}`
			items, errs := ItemsFromSet([]byte(payload))
			if len(items) != 1 || items[0] != (Item{ID: "good", RPS: 2, Burst: 3, Weight: 4, MaxBytesPerS: 5}) {
				t.Fatalf("items %+v", items)
			}
			var ie *ItemError
			if len(errs) != 1 || !errors.As(errs[0], &ie) || !errors.Is(errs[0], ErrItem) || ie.Index != 2 ||
				ie.Source != SourceRegistry {
				t.Fatalf("errors %v", errs)
			}
		})
	}
}

func TestItemsFromSetUnreadable(t *testing.T) {
	for _, payload := range []string{``, `nope`, `[]`, `{"version":1}`, `{"items":{}}`, `{"items":null}`} {
		items, errs := ItemsFromSet([]byte(payload))
		if items != nil || len(errs) != 1 || !errors.Is(errs[0], ErrPayload) {
			t.Errorf("ItemsFromSet(%q) = %v, %v", payload, items, errs)
		}
	}
}

func TestItemErrorMessage(t *testing.T) {
	_, errs := ItemsFromSet([]byte(`{"items":[{"kind":"tenant","id":"` + strings.Repeat("x", 300) +
		`","rps":1,"burst":1,"weight":1,"max_bytes_per_s":0}]}`))
	if len(errs) != 1 || len(errs[0].Error()) > 300 {
		t.Fatalf("errors %v", errs)
	}
}
