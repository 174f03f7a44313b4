package module

import (
	"slices"
	"strings"
	"testing"
)

func TestOrderPutsDependenciesFirst(t *testing.T) {
	mods := []Descriptor{
		{Name: "gateway", Uses: []string{"storage", "index", "edge", "registry"}},
		{Name: "edge", Uses: []string{"storage", "index"}},
		{Name: "storage", Uses: []string{"index"}},
		{Name: "registry"},
		{Name: "index"},
		{Name: "admin", Kind: KindNode},
	}
	g, err := Order(mods)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"index", "storage", "edge", "registry", "gateway", "admin"}
	if got := g.Names(); !slices.Equal(got, want) {
		t.Fatalf("order = %v, want %v", got, want)
	}
}

func TestOrderKeepsListOrderWithoutDependencies(t *testing.T) {
	g, err := Order([]Descriptor{{Name: "b"}, {Name: "a"}, {Name: "c"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := g.Names(); !slices.Equal(got, []string{"b", "a", "c"}) {
		t.Fatalf("order = %v", got)
	}
}

func TestOrderSkipsAbsentOptionalDependencies(t *testing.T) {
	g, err := Order([]Descriptor{{Name: "edge", Uses: []string{"storage", "index"}}})
	if err != nil {
		t.Fatal(err)
	}
	if got := g.String(); !strings.Contains(got, "edge  role  (no dependencies)") {
		t.Fatalf("graph:\n%s", got)
	}
}

func TestOrderErrors(t *testing.T) {
	cases := []struct {
		name string
		mods []Descriptor
		want string
	}{
		{"missing required", []Descriptor{{Name: "readiness", Requires: []string{"admin"}}},
			`module "readiness" requires "admin", which does not run in this process`},
		{"listed twice", []Descriptor{{Name: "index"}, {Name: "index"}}, `module "index" is listed twice`},
		{"cycle", []Descriptor{{Name: "a", Uses: []string{"b"}}, {Name: "b", Requires: []string{"c"}}, {Name: "c", Uses: []string{"a"}}},
			"cycle: a → b → c → a"},
		{"self", []Descriptor{{Name: "a", Uses: []string{"a"}}}, "cycle: a → a"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Order(c.mods)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want it to contain %q", err, c.want)
			}
		})
	}
}

func TestGraphString(t *testing.T) {
	g, err := Order([]Descriptor{
		{Name: "admin", Kind: KindNode},
		{Name: "index", Requires: []string{"admin"}},
		{Name: "storage", Requires: []string{"admin"}, Uses: []string{"index", "admin"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := " 1  admin    node  (no dependencies)\n" +
		" 2  index    role  after admin\n" +
		" 3  storage  role  after admin, index\n"
	if got := g.String(); got != want {
		t.Fatalf("graph:\n%s\nwant:\n%s", got, want)
	}
	if !g.Has("index") || g.Has("edge") {
		t.Fatal("Has is wrong")
	}
}
