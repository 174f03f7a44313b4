// Package archcheck states the import rules of docs/architecture.md §2 as
// data and checks a package graph against them; its test runs the check over
// the repository (`go list`), so a change that breaks a rule fails CI naming
// the import.
package archcheck

import (
	"fmt"
	"strings"
)

// Module is the import path of the repository's module.
const Module = "github.com/ronhq/ron"

// Cobra is the import path of the command-line library.
const Cobra = "github.com/spf13/cobra"

// roleSet is the roles of a graph: the folders under roles/ its packages
// and imports name. Nothing else lives under roles/ (docs/architecture.md
// §2), so a new role is checked without a list to update.
type roleSet map[string]bool

func rolesOf(pkgs []Package) roleSet {
	rs := roleSet{}
	add := func(path string) {
		if parts := strings.Split(path, "/"); len(parts) >= 2 && parts[0] == "roles" {
			rs[parts[1]] = true
		}
	}
	for _, p := range pkgs {
		add(p.Path)
		for _, imp := range p.Imports {
			add(imp)
		}
	}
	return rs
}

// Package is one package of the graph: its path relative to the module
// ("roles/gateway") and the module-relative paths of its non-test imports.
type Package struct {
	Path    string
	Imports []string
}

// Violation is one import that breaks a rule.
type Violation struct {
	From, To string
	Rule     string
}

func (v Violation) String() string { return fmt.Sprintf("%s imports %s: %s", v.From, v.To, v.Rule) }

// Check returns every import of pkgs that breaks a rule:
//   - a role's package imports another role only through that role's
//     contract, roles/<r>/<r>api and its sub-packages;
//   - a contract package imports only httpx, store, runtime, internal
//     helpers and contracts (its own sub-packages included);
//   - the shared layers (httpx, store, runtime) import no role and no
//     composition-root package;
//   - only the command line (internal/cli and below) imports cobra, and a
//     command package does not link a whole role: it imports the role's
//     contract or sub-packages, never roles/<r> itself.
func Check(pkgs []Package) []Violation {
	rs := rolesOf(pkgs)
	var out []Violation
	for _, p := range pkgs {
		for _, imp := range p.Imports {
			if rule := rs.broken(p.Path, imp); rule != "" {
				out = append(out, Violation{From: p.Path, To: imp, Rule: rule})
			}
		}
	}
	return out
}

// broken names the rule the import from → to breaks, or "".
func (rs roleSet) broken(from, to string) string {
	fromRole, toRole := rs.roleOf(from), rs.roleOf(to)
	switch {
	case to == Cobra && !isCLI(from) && from != ".":
		return "only the command line (internal/cli) imports cobra"
	case isCLI(from) && toRole != "" && to == "roles/"+toRole:
		return "a command reaches a role through its contract or sub-packages, never the role package itself"
	case isShared(from) && (toRole != "" || isRoot(to)):
		return "the shared layers (httpx, store, runtime) never import a role or the composition root"
	case rs.isContract(from) && !(isShared(to) || rs.isContract(to) || isHelper(to)):
		return "a contract imports only httpx, store, runtime, internal helpers and other contracts"
	case fromRole != "" && toRole != "" && fromRole != toRole && !rs.isContract(to):
		return "a role reaches another role only through its contract roles/" + toRole + "/" + toRole + "api"
	}
	return ""
}

// roleOf returns the role whose folder holds path, or "".
func (rs roleSet) roleOf(path string) string {
	parts := strings.Split(path, "/")
	if len(parts) >= 2 && parts[0] == "roles" && rs[parts[1]] {
		return parts[1]
	}
	return ""
}

// isContract reports whether path is a role's contract package or one of
// its sub-packages: roles/<r>/<r>api[/...].
func (rs roleSet) isContract(path string) bool {
	r := rs.roleOf(path)
	if r == "" {
		return false
	}
	c := "roles/" + r + "/" + r + "api"
	return path == c || strings.HasPrefix(path, c+"/")
}

func isShared(path string) bool {
	for _, l := range []string{"httpx", "store", "runtime"} {
		if path == l || strings.HasPrefix(path, l+"/") {
			return true
		}
	}
	return false
}

// isHelper reports the small internal helpers any layer may use
// (internal/iox, internal/jsontok, …): not the composition root.
func isHelper(path string) bool { return strings.HasPrefix(path, "internal/") && !isRoot(path) }

// isRoot reports the composition root and the command line:
// internal/node and internal/cli, with their sub-packages.
func isRoot(path string) bool {
	for _, r := range []string{"internal/node", "internal/cli"} {
		if path == r || strings.HasPrefix(path, r+"/") {
			return true
		}
	}
	return false
}

// isCLI reports the command line: internal/cli and its sub-packages.
func isCLI(path string) bool {
	return path == "internal/cli" || strings.HasPrefix(path, "internal/cli/")
}
