package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// cliEnv points client commands at n through the environment (RON_DATA_DIR
// for the root key, RON_STORAGE__LISTEN, RON_INDEX__LISTEN, RON_REGISTRY__LISTEN and
// RON_ADMIN__LISTEN for the listeners) instead of flags.
func (n *node) cliEnv() []string {
	return []string{"RON_DATA_DIR=" + n.dataDir, "RON_STORAGE__LISTEN=" + n.storage,
		"RON_INDEX__LISTEN=" + n.index, "RON_REGISTRY__LISTEN=" + n.registry, "RON_ADMIN__LISTEN=" + n.admin}
}

// TestServeStatusStop: a started node makes `ron status` exit 0 with the
// storage role running; SIGTERM stops it with exit 0; then `ron status`
// exits 2 (unreachable).
func TestServeStatusStop(t *testing.T) {
	t.Parallel()
	n := startNode(t, nodeOpts{})

	if res := ron(t, cliOpts{}, "status", "--admin", n.admin); res.code != 0 {
		t.Fatalf("ron status: exit %d, want 0\nstdout: %s\nstderr: %s", res.code, res.stdout, res.stderr)
	} else if !strings.Contains(res.stdout, "storage") {
		t.Errorf("ron status table does not mention storage:\n%s", res.stdout)
	}
	// The configured admin listener (env) is the default.
	if res := ron(t, cliOpts{env: n.cliEnv()}, "status"); res.code != 0 {
		t.Errorf("ron status via RON_ADMIN__LISTEN: exit %d, stderr %s", res.code, res.stderr)
	}

	res := ron(t, cliOpts{}, "status", "--admin", n.admin, "-o", "json")
	if res.code != 0 {
		t.Fatalf("ron status -o json: exit %d: %s", res.code, res.stderr)
	}
	var st struct {
		Version string `json:"version"`
		Ready   bool   `json:"ready"`
		Roles   []struct {
			Name    string         `json:"name"`
			State   string         `json:"state"`
			Ready   bool           `json:"ready"`
			Listen  string         `json:"listen"`
			Details map[string]any `json:"details"`
		} `json:"roles"`
	}
	if err := json.Unmarshal([]byte(res.stdout), &st); err != nil {
		t.Fatalf("status JSON %q: %v", res.stdout, err)
	}
	found := false
	for _, r := range st.Roles {
		if r.Name != "storage" {
			continue
		}
		found = true
		if r.State != "running" || !r.Ready {
			t.Errorf("storage role: state %q ready %t, want running and ready", r.State, r.Ready)
		}
		if r.Listen != n.storage {
			t.Errorf("storage role listen %q, want %q", r.Listen, n.storage)
		}
		if r.Details["engine"] != "fs" {
			t.Errorf("storage details: engine %v, want fs", r.Details["engine"])
		}
	}
	if !found || !st.Ready || st.Version == "" {
		t.Errorf("status: ready %t, version %q, storage role found %t:\n%s", st.Ready, st.Version, found, res.stdout)
	}

	n.signal(syscall.SIGTERM)
	if code := n.waitExit(exitLimit); code != 0 {
		t.Fatalf("ron serve exited %d after SIGTERM, want 0", code)
	}
	if res := ron(t, cliOpts{}, "status", "--admin", n.admin); res.code != 2 {
		t.Errorf("ron status after stop: exit %d, want 2 (unreachable)\nstderr: %s", res.code, res.stderr)
	}
}

// TestPutGetRoundTrips stores files of the boundary sizes, the BLAKE3
// vector input and a 100 MiB file with `ron put`; the printed id equals what
// b3sum prints; `ron get --out` and `ron cat` give back the same bytes;
// `ron stat -o json` describes the object.
func TestPutGetRoundTrips(t *testing.T) {
	t.Parallel()
	n := startNode(t, nodeOpts{})
	dir := t.TempDir()
	type input struct {
		name string
		path string
		size int64
		want string // expected id from the spec, "" = b3sum only
	}
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	inputs := []input{
		{name: "0B", path: write("0B", nil), size: 0, want: emptyID},
		{name: "1B", path: write("1B", []byte{0x5a}), size: 1},
		{name: "65535B", path: write("65535B", randomBytes(1, 65535)), size: 65535},
		{name: "65536B", path: write("65536B", randomBytes(2, 65536)), size: 65536},
		{name: "65537B", path: write("65537B", randomBytes(3, 65537)), size: 65537},
		{name: "vector", path: write("vector", vector()), size: 102400, want: vectorID},
		{name: "100MiB", path: bigFile(t), size: bigSize},
	}
	for _, in := range inputs {
		t.Run(in.name, func(t *testing.T) {
			want := b3sum(t, in.path)
			if in.want != "" && want != in.want {
				t.Fatalf("b3sum printed %s, the spec's vector is %s", want, in.want)
			}
			put := ron(t, cliOpts{env: n.cliEnv()}, "put", in.path)
			if put.code != 0 {
				t.Fatalf("ron put: exit %d: %s", put.code, put.stderr)
			}
			if got := strings.TrimSpace(put.stdout); got != want {
				t.Fatalf("ron put printed %q, b3sum says %s", put.stdout, want)
			}

			out := filepath.Join(t.TempDir(), "got")
			get := ron(t, cliOpts{}, "get", want, "--out", out, "--server", "http://"+n.storage)
			if get.code != 0 {
				t.Fatalf("ron get --out: exit %d: %s", get.code, get.stderr)
			}
			sameFiles(t, in.path, out)
			if _, err := os.Stat(out + ".part"); !os.IsNotExist(err) {
				t.Errorf("ron get left %s.part behind (%v)", out, err)
			}

			catPath := filepath.Join(t.TempDir(), "cat")
			catFile, err := os.Create(catPath)
			if err != nil {
				t.Fatal(err)
			}
			cat := ron(t, cliOpts{env: n.cliEnv(), stdout: catFile}, "cat", want)
			catFile.Close()
			if cat.code != 0 {
				t.Fatalf("ron cat: exit %d: %s", cat.code, cat.stderr)
			}
			sameFiles(t, in.path, catPath)

			stat := ron(t, cliOpts{env: n.cliEnv()}, "stat", want, "-o", "json")
			if stat.code != 0 {
				t.Fatalf("ron stat: exit %d: %s", stat.code, stat.stderr)
			}
			var st struct {
				ID     string `json:"id"`
				Size   int64  `json:"size"`
				Chunks int64  `json:"chunks"`
			}
			if err := json.Unmarshal([]byte(stat.stdout), &st); err != nil {
				t.Fatalf("ron stat -o json printed %q: %v", stat.stdout, err)
			}
			if st.ID != want || st.Size != in.size || st.Chunks != (in.size+65535)/65536 {
				t.Errorf("ron stat: %+v, want id %s size %d chunks %d", st, want, in.size, (in.size+65535)/65536)
			}
		})
	}

	// A second put of the same bytes prints the same id (already held).
	if res := ron(t, cliOpts{env: n.cliEnv()}, "put", inputs[5].path); res.code != 0 || strings.TrimSpace(res.stdout) != vectorID {
		t.Errorf("second ron put of the vector: exit %d, stdout %q, stderr %s", res.code, res.stdout, res.stderr)
	}
	// Reading an absent object fails with exit 1, leaving no file.
	absent := "b3:" + strings.Repeat("0", 64)
	out := filepath.Join(t.TempDir(), "absent")
	if res := ron(t, cliOpts{env: n.cliEnv()}, "get", absent, "--out", out); res.code != 1 {
		t.Errorf("ron get of an absent id: exit %d, want 1", res.code)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("ron get of an absent id created %s", out)
	}
}
