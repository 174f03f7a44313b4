package packs

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ronhq/ron/roles/edge/pmtiles/pmtilestest"
)

func TestValidName(t *testing.T) {
	for _, c := range []struct {
		name string
		ok   bool
	}{
		{"world", true}, {"a", true}, {"0", true}, {"a.b_c-d", true}, {"A9", true},
		{strings.Repeat("a", 128), true}, {strings.Repeat("a", 129), false},
		{"", false}, {".hidden", false}, {"-dash", false}, {"_under", false}, {"sp ace", false},
		{"ümlaut", false}, {"a/b", false}, {"a%2e", false}, {"tab\t", false},
	} {
		if ValidName(c.name) != c.ok {
			t.Errorf("ValidName(%q) = %v", c.name, !c.ok)
		}
	}
}

func TestKindAndName(t *testing.T) {
	for _, c := range []struct {
		path, name string
		kind       Kind
		ok         bool
	}{
		{"/d/world.pmtiles", "world", KindPMTiles, true}, {"x.mbtiles", "x", KindMBTiles, true},
		{"a.b.pmtiles", "a.b", KindPMTiles, true}, {"w.PMTILES", "w", "", false}, {"w.pmtiles.tmp", "w.pmtiles", "", false},
		{"readme.md", "readme", "", false}, {"pmtiles", "pmtiles", "", false},
	} {
		k, ok := KindOf(c.path)
		if k != c.kind || ok != c.ok || NameOf(c.path) != c.name {
			t.Errorf("%s: %q %v %q", c.path, k, ok, NameOf(c.path))
		}
	}
}

// Discovery (docs/edge.md §4.1): only *.pmtiles and *.mbtiles directly in the folder;
// hidden, .tmp and .part names skipped; folders ignored; invalid names and
// duplicate stems are mount errors for that name; listed files join, once
// even when also in the folder.
func TestDiscovery(t *testing.T) {
	dir, other := t.TempDir(), t.TempDir()
	b := archive(t, pyramid(1, 'd'), pmtilestest.Options{})
	for _, n := range []string{"one.pmtiles", ".hidden.pmtiles", "two.pmtiles.tmp", "three.pmtiles.part", "notes.txt",
		"dup.pmtiles", "bad name.pmtiles", "-dash.pmtiles"} {
		writeFile(t, dir, n, b)
	}
	copyFixture(t, "mbtiles", "world_cities.mbtiles", dir, "dup.mbtiles")
	if err := os.Mkdir(filepath.Join(dir, "folder.pmtiles"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "sub"), "nested.pmtiles", b)
	listed := writeFile(t, other, "listed.pmtiles", b)
	writeFile(t, other, "wrong.txt", b)
	s := mountSet(t, Options{Dir: dir, Files: []string{listed, filepath.Join(dir, "one.pmtiles"), dir + "/./one.pmtiles",
		filepath.Join(other, "missing.pmtiles"), filepath.Join(other, "wrong.txt")}})
	if got := names(s); !slices.Equal(got, []string{"listed", "one"}) {
		t.Fatalf("mounted %v", got)
	}
	want := []string{"edge:pack:-dash", "edge:pack:bad name", "edge:pack:dup", "edge:pack:missing", "edge:pack:wrong"}
	if got := s.Missing(); !slices.Equal(got, want) {
		t.Fatalf("missing %v", got)
	}
	st := s.Status()
	for name, sub := range map[string]string{"dup": "used by 2 files", "bad name": "does not match", "missing": "no such file",
		"wrong": "not a .pmtiles or .mbtiles file"} {
		if !strings.Contains(st.Failed[name], sub) {
			t.Errorf("%s: %q lacks %q", name, st.Failed[name], sub)
		}
	}
}

// An unreadable packs_dir fails Mount; no folder at all is fine.
func TestMountDirErrors(t *testing.T) {
	s := newTestSet(t, Options{Dir: filepath.Join(t.TempDir(), "absent")})
	if err := s.Mount(t.Context()); err == nil || s.LastError() == "" {
		t.Fatalf("missing folder: %v", err)
	}
	if s := mountSet(t, Options{}); len(names(s)) != 0 || len(s.Missing()) != 0 {
		t.Fatal("no folder, no files")
	}
}

// pack_errors = "skip": failures are logged, counted as skipped and shown
// in Status.Skipped, never missing; switching live flips the view.
func TestSkip(t *testing.T) {
	dir := fixtureDir(t, "pmtiles")
	s := mountSet(t, Options{Dir: dir, PackErrors: ErrorsSkip})
	if len(s.Missing()) != 0 || len(s.Status().Skipped) != 3 || s.Status().Failed != nil || len(names(s)) != 4 {
		t.Fatalf("skip: missing %v, status %+v", s.Missing(), s.Status())
	}
	if metric(s, `ron_edge_pack_mounts_total{role="edge",pack="invalid",result="skipped"}`) != 1 ||
		metric(s, `ron_edge_pack_mounts_total{role="edge",pack="invalid",result="error"}`) != 0 {
		t.Fatal("skipped not counted")
	}
	s.Apply(Options{Dir: dir})
	if len(s.Missing()) != 3 || len(s.Status().Failed) != 3 {
		t.Fatalf("fail after Apply: %v", s.Missing())
	}
}

// CheckFile judges a listed file by its path: extension and name (docs/edge.md §4.1).
func TestCheckFile(t *testing.T) {
	for _, c := range []struct {
		path string
		ok   bool
	}{
		{"/data/world.pmtiles", true}, {"rel/World_1.2-x.mbtiles", true},
		{"/data/world.zip", false}, {"/data/world.PMTILES", false}, {"/data/-world.pmtiles", false},
		{"/data/.pmtiles", false}, {"/data/a b.mbtiles", false},
	} {
		if err := CheckFile(c.path); (err == nil) != c.ok {
			t.Errorf("CheckFile(%q) = %v", c.path, err)
		}
	}
}
