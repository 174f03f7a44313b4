package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPutTree publishes a directory with `ron put -r`: the same tree gives
// the same manifest id, the manifest is canonical JSON naming every regular
// file (symlinks skipped), and each file reads back by the id it lists.
func TestPutTree(t *testing.T) {
	t.Parallel()
	n := startNode(t, nodeOpts{})
	dir := t.TempDir()
	files := map[string][]byte{"index.html": []byte("<h1>hi</h1>\n"), "css/site.css": []byte("body{}\n"), "data/blob": randomBytes(9, 200_000)}
	for rel, data := range files {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("index.html", filepath.Join(dir, "link.html")); err != nil {
		t.Fatal(err)
	}
	first := ron(t, cliOpts{env: n.cliEnv()}, "put", "-r", dir, "-v")
	if first.code != 0 || !strings.Contains(first.stderr, "link.html") {
		t.Fatalf("put -r: exit %d, stderr %q", first.code, first.stderr)
	}
	lines := strings.Split(strings.TrimSpace(first.stdout), "\n")
	if len(lines) != len(files)+1 {
		t.Fatalf("put -r -v printed %d lines, want one per file plus the manifest id:\n%s", len(lines), first.stdout)
	}
	id := lines[len(lines)-1]
	again := ron(t, cliOpts{env: n.cliEnv()}, "put", "-r", dir)
	if strings.TrimSpace(again.stdout) != id {
		t.Fatalf("same tree, different ids: %s then %s", id, again.stdout)
	}
	doc := ron(t, cliOpts{env: n.cliEnv()}, "cat", id)
	var m struct {
		Entries map[string]struct {
			ID   string `json:"id"`
			Size int64  `json:"size"`
			Type string `json:"type"`
		} `json:"entries"`
		Meta    map[string]string `json:"meta"`
		Version int               `json:"version"`
	}
	if err := json.Unmarshal([]byte(doc.stdout), &m); err != nil || m.Version != 1 || len(m.Entries) != len(files) {
		t.Fatalf("manifest %q: %v", doc.stdout, err)
	}
	for rel, data := range files {
		e, ok := m.Entries[rel]
		if !ok || e.ID != idOf(data) || e.Size != int64(len(data)) || e.Type == "" {
			t.Fatalf("entry %s: %+v", rel, e)
		}
		got := ron(t, cliOpts{env: n.cliEnv()}, "cat", e.ID)
		if got.code != 0 || got.stdout != string(data) {
			t.Fatalf("cat %s (%s): exit %d", rel, e.ID, got.code)
		}
	}
	stat := ron(t, cliOpts{env: n.cliEnv()}, "stat", id, "-o", "json")
	if !strings.Contains(stat.stdout, "application/vnd.ron.manifest+json") {
		t.Fatalf("manifest stored without its media type: %s", stat.stdout)
	}
	meta := ron(t, cliOpts{env: n.cliEnv()}, "put", "-r", dir, "--meta", "title=site")
	if strings.TrimSpace(meta.stdout) == id || meta.code != 0 {
		t.Fatalf("--meta must change the manifest id: %s", meta.stdout)
	}
}
