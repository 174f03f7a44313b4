package tenants

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/ronhq/ron/roles/gateway/tenant"
)

// defs are the docs/gateway.md §9 defaults.
var defs = Defaults{
	Tenant: tenant.Params{RPS: 500, Burst: 1000, Weight: 1},
	Anon:   tenant.Params{RPS: 100, Burst: 200, Weight: 1},
}

func TestBuildPrecedenceAndDefaults(t *testing.T) {
	config := []Item{
		{ID: "acme", RPS: 10, Burst: 20, Weight: 2, MaxBytesPerS: 1000},
		{ID: "beta", RPS: 5, Missing: FieldBurst | FieldWeight},
		{ID: "default", RPS: 7, Burst: 7, Weight: 3},
	}
	registry := []Item{
		{ID: "gamma", RPS: 0, Burst: 0, Weight: 1},
		{ID: "acme", RPS: 200, Burst: 400, Weight: 2, MaxBytesPerS: 1 << 20},
	}
	tb, errs := Build(defs, config, registry)
	if len(errs) != 0 {
		t.Fatalf("errors: %v", errs)
	}
	cases := []struct {
		id   tenant.ID
		want tenant.Params
	}{
		{"acme", tenant.Params{RPS: 200, Burst: 400, Weight: 2, MaxBytesPerS: 1 << 20}}, // registry wins
		{"beta", tenant.Params{RPS: 5, Burst: 1000, Weight: 1}},                         // missing → tenant_*
		{"gamma", tenant.Params{RPS: 0, Burst: 0, Weight: 1}},                           // suspended
		{"default", tenant.Params{RPS: 7, Burst: 7, Weight: 3}},                         // listed default
		{"unlisted", defs.Tenant},
		{"anon:203.0.113.0/24", defs.Anon},
		{"anon:2001:db8:1:2::/64", defs.Anon},
	}
	for _, c := range cases {
		if got := tb.Params(c.id); got != c.want {
			t.Errorf("Params(%s) = %+v, want %+v", c.id, got, c.want)
		}
	}
	if got, want := tb.Listed(), []string{"acme", "beta", "default", "gamma"}; !slices.Equal(got, want) {
		t.Fatalf("Listed = %v, want %v", got, want)
	}
	tb.Listed()[0] = "changed"
	if tb.Listed()[0] != "acme" || tb.Version() != 0 || tb.FromRegistry() || tb.Defaults() != defs {
		t.Fatalf("table changed or wrong: %v %d %v", tb.Listed(), tb.Version(), tb.FromRegistry())
	}
	var fn tenant.ParamsFunc = tb.Params // usable as the States callback
	_ = fn
}

func TestBuildMissingFields(t *testing.T) {
	def := Defaults{Tenant: tenant.Params{RPS: 9, Burst: 8, Weight: 7, MaxBytesPerS: 6}}
	tb, errs := Build(def, []Item{
		{ID: "all", Missing: FieldRPS | FieldBurst | FieldWeight | FieldMaxBytesPerS},
		{ID: "none", RPS: 1, Burst: 2, Weight: 3, MaxBytesPerS: 4},
	}, nil)
	if len(errs) != 0 {
		t.Fatal(errs)
	}
	if got := tb.Params("all"); got != def.Tenant {
		t.Fatalf("all missing: %+v", got)
	}
	if got := tb.Params("none"); got != (tenant.Params{RPS: 1, Burst: 2, Weight: 3, MaxBytesPerS: 4}) {
		t.Fatalf("none missing: %+v", got)
	}
}

func TestBuildInvalidItems(t *testing.T) {
	ok := Item{RPS: 1, Weight: 1}
	with := func(id string, fn func(*Item)) Item {
		it := ok
		it.ID = id
		if fn != nil {
			fn(&it)
		}
		return it
	}
	bad := []struct {
		name string
		item Item
	}{
		{"negative rps", with("a", func(i *Item) { i.RPS = -1 })},
		{"NaN rps", with("a", func(i *Item) { i.RPS = math.NaN() })},
		{"infinite rps", with("a", func(i *Item) { i.RPS = math.Inf(1) })},
		{"negative burst", with("a", func(i *Item) { i.Burst = -1 })},
		{"weight 0", with("a", func(i *Item) { i.Weight = 0 })},
		{"weight 1001", with("a", func(i *Item) { i.Weight = 1001 })},
		{"negative bytes", with("a", func(i *Item) { i.MaxBytesPerS = -1 })},
		{"empty id", with("", nil)},
		{"leading dash", with("-acme", nil)},
		{"space", with("ac me", nil)},
		{"too long", with(strings.Repeat("a", 129), nil)},
		{"non-ASCII", with("acmé", nil)},
		{"anon id", with("anon:203.0.113.0/24", nil)},
		{"anon prefix only", with("anon:", nil)},
	}
	for _, c := range bad {
		t.Run(c.name, func(t *testing.T) {
			for _, source := range []string{SourceConfig, SourceRegistry} {
				items := []Item{with("good", nil), c.item}
				var tb *Table
				var errs []error
				if source == SourceConfig {
					tb, errs = Build(defs, items, nil)
				} else {
					tb, errs = Build(defs, nil, items)
				}
				var ie *ItemError
				if len(errs) != 1 || !errors.As(errs[0], &ie) || !errors.Is(errs[0], ErrItem) ||
					ie.Source != source || ie.Index != 1 || ie.ID != c.item.ID {
					t.Fatalf("%s: errors %v", source, errs)
				}
				if got := tb.Listed(); !slices.Equal(got, []string{"good"}) {
					t.Fatalf("%s: Listed = %v", source, got)
				}
				if !tenant.ID(c.item.ID).Anonymous() && tb.Params(tenant.ID(c.item.ID)) != defs.Tenant {
					t.Fatalf("%s: skipped item in force: %+v", source, tb.Params(tenant.ID(c.item.ID)))
				}
			}
		})
	}
}

func TestBuildMissingMakesWeightValid(t *testing.T) {
	// Weight 0 is invalid when written, the default when left out.
	tb, errs := Build(defs, []Item{{ID: "w", RPS: 1, Missing: FieldWeight}}, nil)
	if len(errs) != 0 || tb.Params("w").Weight != 1 {
		t.Fatalf("errs %v, params %+v", errs, tb.Params("w"))
	}
}

func TestBuildDuplicatesAndFallback(t *testing.T) {
	config := []Item{{ID: "a", RPS: 1, Weight: 1}, {ID: "a", RPS: 2, Weight: 1}, {ID: "b", RPS: 3, Weight: 1}}
	registry := []Item{{ID: "b", RPS: -5, Weight: 1}, {ID: "c", RPS: 4, Weight: 1}, {ID: "c", RPS: 5, Weight: 1}}
	tb, errs := Build(defs, config, registry)
	if len(errs) != 3 {
		t.Fatalf("errors: %v", errs)
	}
	want := []struct {
		source string
		index  int
	}{{SourceConfig, 1}, {SourceRegistry, 0}, {SourceRegistry, 2}}
	for i, w := range want {
		var ie *ItemError
		if !errors.As(errs[i], &ie) || ie.Source != w.source || ie.Index != w.index {
			t.Errorf("error %d = %v, want %s item %d", i, errs[i], w.source, w.index)
		}
	}
	if tb.Params("a").RPS != 1 || tb.Params("b").RPS != 3 || tb.Params("c").RPS != 4 {
		t.Fatalf("first item of each id and config under a skipped registry item: a %v b %v c %v",
			tb.Params("a").RPS, tb.Params("b").RPS, tb.Params("c").RPS)
	}
	if !strings.Contains(errs[0].Error(), `config tenant item 1 ("a")`) {
		t.Fatalf("message %q", errs[0])
	}
}
