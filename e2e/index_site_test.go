package e2e

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// manifestType is the media type of a stored ManifestV1 (docs/index.md §2).
const manifestType = "application/vnd.ron.manifest+json"

// TestIndexPublishSite publishes a directory on node A (`ron put -r`, then
// `ron name set site`), resolves the name on C (kind manifest, from a peer),
// and reads the manifest and one of its files through C: C's storage lacks
// both, so `ron get --index` must fall back to the providers C's index finds
// (A's storage).
func TestIndexPublishSite(t *testing.T) {
	t.Parallel()
	nodes := startCluster(t, 3)
	a, c := nodes[0], nodes[2]
	files := map[string][]byte{
		"index.html":   []byte("<h1>site</h1>\n"),
		"css/site.css": []byte("h1{color:red}\n"),
		"img/logo.bin": randomBytes(11, 150_000),
	}
	put := ron(t, cliOpts{env: a.cliEnv()}, "put", "-r", writeTree(t, files))
	manifest := strings.TrimSpace(put.stdout)
	if put.code != 0 || !strings.HasPrefix(manifest, "b3:") {
		t.Fatalf("ron put -r on A: exit %d, stdout %q, stderr %s", put.code, put.stdout, put.stderr)
	}
	if rec := a.mustName("set", "site", manifest); rec.Version != 1 || rec.B3 != manifest {
		t.Fatalf("name set site: %+v, want v1 → %s", rec, manifest)
	}
	if p := a.waitAnnounced(manifest); p.Type != manifestType {
		t.Fatalf("A announced the manifest with type %q, want %s", p.Type, manifestType)
	}

	ans := c.mustResolve("site")
	if ans.Key != "site" || ans.NameVersion != 1 || ans.Source != "peer" {
		t.Errorf("resolve site on C: key %q name_version %d source %q, want site, 1, peer", ans.Key, ans.NameVersion, ans.Source)
	}
	wantProvidedBy(t, "resolve site on C", ans, manifest, a, "manifest")

	if r := do(t, http.MethodGet, c.url("/o/"+manifest), nil, nil); r.status != http.StatusNotFound {
		t.Fatalf("C's storage answers %d for the manifest, want 404 (the test needs the fallback)", r.status)
	}
	doc := getViaIndex(t, c, manifest)
	if idOf(doc) != manifest {
		t.Fatalf("fetched manifest bytes hash to %s, want %s", idOf(doc), manifest)
	}
	var m struct {
		Entries map[string]struct {
			ID   string `json:"id"`
			Size int64  `json:"size"`
		} `json:"entries"`
		Version int `json:"version"`
	}
	if err := json.Unmarshal(doc, &m); err != nil || m.Version != 1 || len(m.Entries) != len(files) {
		t.Fatalf("manifest %s: %v", doc, err)
	}
	e, ok := m.Entries["img/logo.bin"]
	if !ok || e.Size != int64(len(files["img/logo.bin"])) {
		t.Fatalf("manifest entry img/logo.bin: %+v (present %t)", e, ok)
	}
	a.waitAnnounced(e.ID)
	if got := getViaIndex(t, c, e.ID); !bytes.Equal(got, files["img/logo.bin"]) {
		t.Fatalf("img/logo.bin fetched through C's index: %d bytes differ from the %d published", len(got), len(files["img/logo.bin"]))
	}
}

// getViaIndex runs `ron get ID --server <n's storage> --index <n's index>
// --out FILE` and returns the file's bytes.
func getViaIndex(t *testing.T, n *node, id string) []byte {
	t.Helper()
	out := filepath.Join(t.TempDir(), "got")
	res := ron(t, cliOpts{}, "get", id, "--server", "http://"+n.storage, "--index", n.indexURL(), "--out", out)
	if res.code != 0 {
		t.Fatalf("ron get %s via %s's index: exit %d: %s", id, n.name, res.code, res.stderr)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
