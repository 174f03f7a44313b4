package e2e

import (
	"net/http"
	"path/filepath"
	"strings"
	"testing"
)

// TestIndexResolveAcrossPeers: three nodes with the default roles
// (index+storage), each naming the others as index peers (node A also itself).
// An object put on A is announced to A's index; B's GET /providers and C's
// resolve find A's storage through a peer lookup, C's second resolve comes
// from its cache; A never asks itself.
func TestIndexResolveAcrossPeers(t *testing.T) {
	t.Parallel()
	nodes := startCluster(t, 3)
	a, b, c := nodes[0], nodes[1], nodes[2]
	data := []byte("hello from node A\n")
	dir := writeTree(t, map[string][]byte{"hello.txt": data})
	put := ron(t, cliOpts{env: a.cliEnv()}, "put", filepath.Join(dir, "hello.txt"))
	id := strings.TrimSpace(put.stdout)
	if put.code != 0 || id != idOf(data) {
		t.Fatalf("ron put on A: exit %d, stdout %q, stderr %s", put.code, put.stdout, put.stderr)
	}
	a.waitAnnounced(id)

	// GET /providers on B: a local miss asks the peers (docs/index.md §4).
	if r := do(t, http.MethodGet, b.indexURL()+"/providers/"+id, nil, nil); r.status != http.StatusOK || !strings.Contains(string(r.body), `"addr":"http://`+a.storage+`"`) {
		t.Errorf("GET /providers/%s on B: %d %s, want 200 naming A's storage (from a peer)", id, r.status, r.body)
	}
	// C has never been asked for id: no negative cache entry can hide A.
	ans := c.mustResolve(id)
	wantProvidedBy(t, "resolve on C", ans, id, a, "blob")
	if ans.Key != id || ans.Source != "peer" {
		t.Errorf("resolve on C: key %s source %q, want %s from a peer", ans.Key, ans.Source, id)
	}
	if again := c.mustResolve(id); again.Source != "cache" || again.Target != id {
		t.Errorf("second resolve on C: source %q target %s, want cache %s", again.Source, again.Target, id)
	}
	if ans := b.mustResolve(id, "--no-cache"); ans.Source != "peer" {
		t.Errorf("resolve on B: source %q, want peer", ans.Source)
	}
	if ans := a.mustResolve(id); ans.Source != "local" {
		t.Errorf("resolve on A: source %q, want local", ans.Source)
	}

	// A local miss on A asks B and C, never A itself.
	if r, _ := a.resolveHTTP(absentID(t, 0)); r.status != http.StatusNotFound {
		t.Fatalf("resolve of an absent id on A: %d %s, want 404", r.status, r.body)
	}
	for _, peer := range []*node{b, c} {
		if len(a.metricSeries("ron_index_peer_requests_total", `target="`+peer.index+`"`)) == 0 {
			t.Errorf("A has no ron_index_peer_requests_total series for peer %s", peer.index)
		}
	}
	if self := a.metricSeries("ron_", `target="`+a.index+`"`); len(self) != 0 {
		t.Errorf("A treats its own URL as a peer:\n%s", strings.Join(self, "\n"))
	}
}

// wantProvidedBy checks that ans resolves to id, with owner's storage as
// its only provider and the given kind.
func wantProvidedBy(t *testing.T, what string, ans resolveAnswer, id string, owner *node, kind string) {
	t.Helper()
	if ans.Target != id || ans.Kind != kind || ans.Partial {
		t.Errorf("%s: target %s kind %q partial %t, want %s, kind %q", what, ans.Target, ans.Kind, ans.Partial, id, kind)
	}
	if len(ans.Providers) != 1 {
		t.Fatalf("%s: providers %+v, want exactly %s's storage", what, ans.Providers, owner.name)
	}
	p := ans.Providers[0]
	if p.Addr != "http://"+owner.storage || p.Node != owner.nodeID() || p.ExpiresInS <= 0 {
		t.Errorf("%s: provider %+v, want addr http://%s node %s with time left", what, p, owner.storage, owner.nodeID())
	}
}

// TestIndexNamesCAS: name pointers with compare-and-set through the CLI on
// node A, and the current version read through a peer lookup on B.
func TestIndexNamesCAS(t *testing.T) {
	t.Parallel()
	nodes := startCluster(t, 2)
	a, b := nodes[0], nodes[1]
	const name = "blog.example"
	t1, t2 := idOf([]byte("version one")), idOf([]byte("version two"))

	if rec := a.mustName("set", name, t1); rec.Name != name || rec.B3 != t1 || rec.Version != 1 {
		t.Fatalf("name set: %+v, want %s v1 → %s", rec, name, t1)
	}
	if rec := a.mustName("get", name); rec.B3 != t1 || rec.Version != 1 || rec.UpdatedAt == "" {
		t.Fatalf("name get: %+v, want v1 → %s", rec, t1)
	}
	if rec := a.mustName("set", name, t2, "--if-version", "1"); rec.B3 != t2 || rec.Version != 2 {
		t.Fatalf("name set --if-version 1: %+v, want v2 → %s", rec, t2)
	}
	for _, tc := range []struct{ what, flag string }{
		{"stale --if-version", "--if-version=1"},
		{"--create-only on a live name", "--create-only"},
	} {
		res := a.nameCLI("set", name, t1, tc.flag)
		if res.code != 1 || !strings.Contains(res.stderr, "current version") || !strings.Contains(res.stderr, "2") {
			t.Errorf("name set %s: exit %d, stderr %q; want exit 1 naming current version 2", tc.what, res.code, res.stderr)
		}
	}
	if rec := a.mustName("get", name); rec.B3 != t2 || rec.Version != 2 {
		t.Fatalf("name get after refused writes: %+v, want v2 → %s", rec, t2)
	}
	if rec := a.mustName("get", name+"@1"); rec.B3 != t1 || rec.Version != 1 {
		t.Errorf("name get %s@1: %+v, want v1 → %s", name, rec, t1)
	}

	// B holds no record: the answer comes from A. Nobody provides t2 yet:
	// a found name with no providers is 200 with an empty list.
	ans := b.mustResolve(name)
	if ans.Key != name || ans.Target != t2 || ans.NameVersion != 2 || ans.Source != "peer" || ans.Kind != "unknown" || len(ans.Providers) != 0 {
		t.Errorf("resolve %s on B: %+v, want target %s v2 from a peer, no providers", name, ans, t2)
	}

	// GET /names on B: a local miss asks the peers (docs/index.md §3).
	if res := b.nameCLI("get", name); res.code != 0 || !strings.Contains(res.stdout, name+"@2  "+t2) {
		t.Errorf("name get %s on B: exit %d, stdout %q, stderr %q; want v2 → %s from a peer", name, res.code, res.stdout, res.stderr, t2)
	}

	if res := a.nameCLI("rm", name); res.code != 0 {
		t.Fatalf("name rm: exit %d: %s", res.code, res.stderr)
	}
	if res := a.nameCLI("get", name); res.code != 1 {
		t.Errorf("name get after rm: exit %d, want 1", res.code)
	}
	if res := a.nameCLI("rm", name); res.code != 1 {
		t.Errorf("second name rm: exit %d, want 1 (already deleted)", res.code)
	}
	wantHistory(t, a.history(name), "3:deleted", "2:"+t2, "1:"+t1)
	if _, res := b.resolveCLI(name, "--no-cache"); res.code != 1 {
		t.Errorf("resolve %s on B after rm: exit %d, want 1 (not found)\nstdout: %s", name, res.code, res.stdout)
	}
	// A later set continues the numbering after the tombstone.
	if rec := a.mustName("set", name, t1, "--create-only"); rec.Version != 4 {
		t.Errorf("name set --create-only after rm: %+v, want v4", rec)
	}
}

// TestIndexNameCLIBadInput: invalid names, targets, versions and flag
// combinations exit 1 without writing; an unreachable index exits 2.
func TestIndexNameCLIBadInput(t *testing.T) {
	t.Parallel()
	n := startNode(t, nodeOpts{})
	valid := idOf([]byte("target"))
	cases := []struct {
		what string
		args []string
		code int
	}{
		{"uppercase name", []string{"name", "set", "Blog.example", valid}, 1},
		{"underscore", []string{"name", "set", "blog_example", valid}, 1},
		{"empty label", []string{"name", "get", "a..b"}, 1},
		{"leading dash", []string{"name", "get", "-blog.x"}, 1},
		{"label of 64", []string{"name", "get", strings.Repeat("a", 64)}, 1},
		{"bare hex target", []string{"name", "set", "ok.example", strings.TrimPrefix(valid, "b3:")}, 1},
		{"uppercase target", []string{"name", "set", "ok.example", strings.ToUpper(valid)}, 1},
		{"short target", []string{"name", "set", "ok.example", valid[:20]}, 1},
		{"version @0", []string{"name", "get", "ok.example@0"}, 1},
		{"version @abc", []string{"name", "get", "ok.example@abc"}, 1},
		{"both preconditions", []string{"name", "set", "ok.example", valid, "--if-version", "1", "--create-only"}, 1},
		{"missing target", []string{"name", "set", "ok.example"}, 1},
		{"absent name", []string{"name", "get", "absent.example"}, 1},
		{"rm absent", []string{"name", "rm", "absent.example"}, 1},
		{"resolve malformed", []string{"resolve", "Not_A_Key"}, 1},
		{"resolve absent b3", []string{"resolve", absentID(t, 0)}, 1},
	}
	for _, tc := range cases {
		t.Run(tc.what, func(t *testing.T) {
			args := append(tc.args, "--server", n.indexURL())
			if res := ron(t, cliOpts{env: n.cliEnv()}, args...); res.code != tc.code {
				t.Errorf("ron %s: exit %d, want %d\nstderr: %s", strings.Join(tc.args, " "), res.code, tc.code, res.stderr)
			}
		})
	}
	if res := n.nameCLI("get", "ok.example"); res.code != 1 {
		t.Errorf("nothing was written, yet ron name get ok.example: exit %d: %s", res.code, res.stdout)
	}
	down := "http://" + freeAddr(t)
	for _, args := range [][]string{{"name", "get", "ok.example"}, {"resolve", "ok.example"}} {
		if res := ron(t, cliOpts{env: n.cliEnv()}, append(args, "--server", down)...); res.code != 2 {
			t.Errorf("ron %s against a closed port: exit %d, want 2", strings.Join(args, " "), res.code)
		}
	}
}
