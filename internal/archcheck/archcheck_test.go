package archcheck

import (
	"os/exec"
	"strings"
	"testing"
)

// TestRepositoryFollowsTheImportRules runs Check over every package of the
// repository, as `go list` sees it (non-test imports).
func TestRepositoryFollowsTheImportRules(t *testing.T) {
	pkgs := listPackages(t)
	if len(pkgs) < 50 {
		t.Fatalf("go list found %d packages; expected the whole repository", len(pkgs))
	}
	for _, v := range Check(pkgs) {
		t.Error(v)
	}
	have := map[string]bool{}
	for _, p := range pkgs {
		have[p.Path] = true
	}
	rs := rolesOf(pkgs)
	if len(rs) != 5 {
		t.Errorf("roles/ holds %d role folders, want the five: %v", len(rs), rs)
	}
	for r := range rs {
		if !have["roles/"+r] || !have["roles/"+r+"/"+r+"api"] {
			t.Errorf("role %s lacks its package roles/%s or its contract roles/%s/%sapi", r, r, r, r)
		}
	}
}

// listPackages runs go list from the module root.
func listPackages(t *testing.T) []Package {
	t.Helper()
	cmd := exec.Command("go", "list", "-f", "{{.ImportPath}}{{range .Imports}} {{.}}{{end}}", Module+"/...")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var pkgs []Package
	for line := range strings.Lines(string(out)) {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		p := Package{Path: rel(f[0])}
		for _, imp := range f[1:] {
			if r := rel(imp); r != imp || imp == Cobra {
				p.Imports = append(p.Imports, r)
			}
		}
		pkgs = append(pkgs, p)
	}
	return pkgs
}

// rel strips the module path; other import paths come back unchanged.
func rel(path string) string {
	if path == Module {
		return "."
	}
	return strings.TrimPrefix(path, Module+"/")
}

func TestCheckRules(t *testing.T) {
	cases := []struct {
		from, to string
		broken   bool
	}{
		{"roles/gateway", "roles/index/indexapi", false},
		{"roles/gateway/sites", "roles/index/indexapi/clusterindex", false},
		{"roles/gateway", "roles/index", true},
		{"roles/gateway/sites", "roles/index/indexdb", true},
		{"roles/edge", "roles/storage/peer", true},
		{"roles/storage/indexsink", "roles/index/indexapi", false},
		{"roles/storage", "roles/storage/peer", false}, // its own parts
		{"roles/index/indexapi", "httpx/client", false},
		{"roles/index/indexapi", "store", false},
		{"roles/index/indexapi", "runtime/cluster", false},
		{"roles/index/indexapi", "internal/jsontok", false},
		{"roles/index/indexapi", "roles/index/indexdb", true},
		{"roles/index/indexapi/clusterindex", "roles/index", true},
		{"roles/registry/registryapi", "roles/registry/committer", true},
		{"roles/registry/registryapi", "roles/registry/registryapi/descriptor", false},
		{"roles/index/indexapi", "roles/storage/storageapi", false},
		{"roles/index/indexapi", "internal/node", true},
		{"httpx/client", "roles/index/indexapi", true},
		{"store/verified", "roles/storage", true},
		{"runtime/cluster", "internal/node", true},
		{"internal/node", "roles/index", false}, // the composition root wires roles
		{"internal/node/nodetest", "roles/index", false},
		{"roles/storage", Cobra, true},
		{"internal/node", Cobra, true},
		{"runtime/config", Cobra, true},
		{"internal/cli/root", Cobra, false},
		{"internal/cli/storagecmd", Cobra, false},
		{".", Cobra, false}, // main
		{"internal/cli/storagecmd", "roles/storage/storageapi", false},
		{"internal/cli/registrycmd", "roles/registry/regstore", false},
		{"internal/cli/indexcmd", "roles/index", true},
		{"internal/cli/registrycmd", "roles/registry", true},
	}
	for _, c := range cases {
		got := Check([]Package{{Path: c.from, Imports: []string{c.to}}})
		if (len(got) > 0) != c.broken {
			t.Errorf("%s → %s: violations %v, want broken=%v", c.from, c.to, got, c.broken)
		}
	}
}
