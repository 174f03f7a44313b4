// Package module declares the parts of a ron node and the order they run
// in (docs/architecture.md §3). A Descriptor names a module, the modules it
// requires in the same process and those it uses when they are there; Order
// turns the enabled descriptors into a Graph in which every module comes
// after everything it depends on. The node starts modules in that order and
// stops them in reverse, so no module outlives what it depends on, and it
// prints the graph (`ron roles --graph`, and at start-up with log level
// debug).
package module

import (
	"fmt"
	"slices"
	"strings"
)

// Kind says what a module is: one of the five roles, enabled by the roles
// key, or a part of the node itself (admin plane, membership, readiness,
// systemd notifications).
type Kind int

// The module kinds.
const (
	KindRole Kind = iota
	KindNode
)

// String is the kind's name in the printed graph.
func (k Kind) String() string {
	if k == KindNode {
		return "node"
	}
	return "role"
}

// Descriptor declares a module. Names are the constants of the module's
// contract package (storageapi.RoleName, …); a descriptor is a value and
// does nothing by itself.
type Descriptor struct {
	Name    string
	Kind    Kind
	Summary string
	// Requires names the modules that must run in the same process for
	// this one to run at all: Order fails without them.
	Requires []string
	// Uses names modules this one uses in-process when they run (a
	// co-located role instead of one over HTTP): they start first.
	Uses []string
}

// Graph is a set of modules in start order.
type Graph struct {
	mods []Descriptor
}

// Order returns the graph of mods: each module after every module it
// requires or uses that is in mods; modules with no order between them keep
// the order of mods. It fails naming the module when a required module is
// missing, a module is listed twice, or the dependencies form a cycle.
func Order(mods []Descriptor) (Graph, error) {
	index := make(map[string]int, len(mods))
	for i, m := range mods {
		if _, dup := index[m.Name]; dup {
			return Graph{}, fmt.Errorf("module %q is listed twice", m.Name)
		}
		index[m.Name] = i
	}
	for _, m := range mods {
		for _, r := range m.Requires {
			if _, ok := index[r]; !ok {
				return Graph{}, fmt.Errorf("module %q requires %q, which does not run in this process", m.Name, r)
			}
		}
	}
	out := make([]Descriptor, 0, len(mods))
	state := make([]int8, len(mods)) // 0 new, 1 visiting, 2 placed
	var visit func(i int, path []string) error
	visit = func(i int, path []string) error {
		switch state[i] {
		case 2:
			return nil
		case 1:
			return fmt.Errorf("modules depend on each other in a cycle: %s", strings.Join(append(path, mods[i].Name), " → "))
		}
		state[i] = 1
		for _, d := range mods[i].deps() {
			if j, ok := index[d]; ok {
				if err := visit(j, append(path, mods[i].Name)); err != nil {
					return err
				}
			}
		}
		state[i] = 2
		out = append(out, mods[i])
		return nil
	}
	for i := range mods {
		if err := visit(i, nil); err != nil {
			return Graph{}, err
		}
	}
	return Graph{mods: out}, nil
}

// deps lists what m requires, then what it uses.
func (m Descriptor) deps() []string { return append(slices.Clone(m.Requires), m.Uses...) }

// Modules returns the modules in start order.
func (g Graph) Modules() []Descriptor { return slices.Clone(g.mods) }

// Names returns the module names in start order.
func (g Graph) Names() []string {
	out := make([]string, len(g.mods))
	for i, m := range g.mods {
		out[i] = m.Name
	}
	return out
}

// Has reports whether the graph holds the module name.
func (g Graph) Has(name string) bool {
	return slices.ContainsFunc(g.mods, func(m Descriptor) bool { return m.Name == name })
}

// String draws the graph as text, one module a line in start order, with
// its kind and the modules of the graph it starts after:
//
//	1  admin      node  (start first)
//	2  index      role  after admin
func (g Graph) String() string {
	width := 0
	for _, m := range g.mods {
		width = max(width, len(m.Name))
	}
	var b strings.Builder
	for i, m := range g.mods {
		var after []string
		for _, d := range m.deps() {
			if g.Has(d) && !slices.Contains(after, d) {
				after = append(after, d)
			}
		}
		edge := "(no dependencies)"
		if len(after) > 0 {
			edge = "after " + strings.Join(after, ", ")
		}
		fmt.Fprintf(&b, "%2d  %-*s  %s  %s\n", i+1, width, m.Name, m.Kind, edge)
	}
	return b.String()
}
