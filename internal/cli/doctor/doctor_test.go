package doctor

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// now is the fixed clock of these tests.
var now = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)

// plenty is a filesystem with room to spare.
func plenty(string) (Space, error) { return Space{Avail: 500 << 30, Total: 1000 << 30}, nil }

// goodKey is a well-formed root key file.
const goodKey = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff\n"

// healthy serves /healthz like any ron listener, with Date set to now+skew.
func healthy(t *testing.T, skew time.Duration) *httptest.Server {
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Date", now.Add(skew).Format(http.TimeFormat))
		switch r.URL.Path {
		case "/healthz":
			_, _ = w.Write([]byte(`{"status":"ok"}`))
		case "/version":
			_, _ = w.Write([]byte(`{"version":"9.9.9","go":"go1.26"}`))
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(s.Close)
	return s
}

// answering is a server that is not ron: every path answers code.
func answering(t *testing.T, code int) *httptest.Server {
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(code) }))
	t.Cleanup(s.Close)
	return s
}

// closedURL is the URL of a server that no longer listens.
func closedURL(t *testing.T) string {
	s := httptest.NewServer(http.NotFoundHandler())
	u := s.URL
	s.Close()
	return u
}

// freeAddr is a loopback address no one listens on (just released).
func freeAddr(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// baseNode is a healthy node in dir: data dir with a good key, no ports,
// no dependencies.
func baseNode(t *testing.T) Node {
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	write(t, filepath.Join(data, "keys", "root.key"), goodKey, 0o600)
	if err := os.Chmod(filepath.Join(data, "keys"), 0o700); err != nil {
		t.Fatal(err)
	}
	return Node{ConfigFile: "/etc/ron/ron.toml", Roles: []string{"storage"}, DataDir: data, MinFreeBytes: 1 << 30}
}

func write(t *testing.T, path, body string, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
}

// find returns the result of check, failing when absent.
func find(t *testing.T, rep Report, check string) Result {
	t.Helper()
	for _, r := range rep.Results {
		if r.Check == check {
			return r
		}
	}
	t.Fatalf("no %q result in %+v", check, rep.Results)
	return Result{}
}

func run(n Node, sys System) Report {
	if sys.Statfs == nil {
		sys.Statfs = plenty
	}
	if sys.Now == nil {
		sys.Now = func() time.Time { return now }
	}
	return Run(context.Background(), n, sys)
}

// TestEachFaultIsCaught builds each fault the doctor lists and checks the
// check that names it, its level, and that a fix is given.
func TestEachFaultIsCaught(t *testing.T) {
	for _, tc := range []struct {
		name  string
		setup func(t *testing.T, n *Node, sys *System)
		check string
		level Level
		msg   string
	}{
		{"config invalid", func(t *testing.T, n *Node, _ *System) {
			n.ConfigErr = errors.New("drain_deadline: 9s is outside (0, 5s]")
		},
			"config", Fail, "drain_deadline"},
		{"data dir is a file", func(t *testing.T, n *Node, _ *System) { write(t, n.DataDir+"2", "x", 0o600); n.DataDir += "2" },
			"data_dir", Fail, "not a directory"},
		{"data dir under a file", func(t *testing.T, n *Node, _ *System) {
			write(t, n.DataDir+"f", "x", 0o600)
			n.DataDir = filepath.Join(n.DataDir+"f", "data")
		}, "data_dir", Fail, ""},
		{"data dir not writable", func(t *testing.T, n *Node, _ *System) { n.DataDir = unwritableDir(t) },
			"data_dir", Fail, "write+fsync"},
		{"data dir missing under an unwritable parent", func(t *testing.T, n *Node, _ *System) { n.DataDir = filepath.Join(unwritableDir(t), "ron") },
			"data_dir", Fail, "does not exist"},
		{"data dir missing", func(t *testing.T, n *Node, _ *System) { n.DataDir = filepath.Join(t.TempDir(), "new") },
			"data_dir", Warn, "does not exist yet"},
		{"role folder is a file", func(t *testing.T, n *Node, _ *System) { write(t, filepath.Join(n.DataDir, "storage"), "x", 0o600) },
			"data_dir:storage", Fail, "not a directory"},
		{"statfs fails", func(t *testing.T, _ *Node, sys *System) {
			sys.Statfs = func(string) (Space, error) { return Space{}, errors.New("input/output error") }
		}, "free_space", Fail, "input/output error"},
		{"below min_free_bytes", func(t *testing.T, _ *Node, sys *System) {
			sys.Statfs = func(string) (Space, error) { return Space{Avail: 512 << 20, Total: 100 << 30}, nil }
		}, "free_space", Fail, "min_free_bytes"},
		{"below 1 GiB", func(t *testing.T, n *Node, sys *System) {
			n.MinFreeBytes = 0
			sys.Statfs = func(string) (Space, error) { return Space{Avail: 900 << 20, Total: 2 << 30}, nil }
		}, "free_space", Warn, "below 1 GiB"},
		{"below 5 percent", func(t *testing.T, _ *Node, sys *System) {
			sys.Statfs = func(string) (Space, error) { return Space{Avail: 40 << 30, Total: 1000 << 30}, nil }
		}, "free_space", Warn, "4.0 %"},
		{"clock far off", func(t *testing.T, n *Node, _ *System) {
			n.Dependencies = []Dependency{{Key: "gateway.registry_url", URL: healthy(t, -10*time.Minute).URL}}
		}, "clock", Fail, "at least 9m59s off"},
		{"clock beyond the node's clock_skew", func(t *testing.T, n *Node, _ *System) {
			n.MaxClockSkew = 30 * time.Second
			n.Dependencies = []Dependency{{Key: "index.peers", URL: healthy(t, time.Minute).URL}}
		}, "clock", Fail, "1m0s off"},
		{"clock a little off", func(t *testing.T, n *Node, _ *System) {
			n.Dependencies = []Dependency{{Key: "index.peers", URL: healthy(t, 20*time.Second).URL}}
		}, "clock", Warn, "20s off"},
		{"port taken by another program", func(t *testing.T, n *Node, _ *System) {
			n.Listeners = []Listener{{Key: "storage.listen", Addr: answering(t, 404).Listener.Addr().String()}}
		}, "port:storage.listen", Fail, "another program"},
		{"port not of this host", func(t *testing.T, n *Node, _ *System) {
			n.Listeners = []Listener{{Key: "gateway.listen", Addr: "192.0.2.1:8090"}}
		}, "port:gateway.listen", Fail, "cannot bind"},
		{"listen not host:port", func(t *testing.T, n *Node, _ *System) { n.Listeners = []Listener{{Key: "admin.listen", Addr: "8080"}} },
			"port:admin.listen", Fail, "not host:port"},
		{"root key readable by others", func(t *testing.T, n *Node, _ *System) {
			write(t, filepath.Join(n.DataDir, "keys", "root.key"), goodKey, 0o644)
		}, "root_key", Fail, "mode 0644"},
		{"root key group-readable", func(t *testing.T, n *Node, _ *System) {
			write(t, filepath.Join(n.DataDir, "keys", "root.key"), goodKey, 0o640)
		}, "root_key", Fail, "mode 0640"},
		{"root key owned by someone else", func(t *testing.T, _ *Node, sys *System) { sys.Getuid = func() int { return os.Getuid() + 1 } },
			"root_key", Fail, "owned by uid"},
		{"root key malformed", func(t *testing.T, n *Node, _ *System) {
			write(t, filepath.Join(n.DataDir, "keys", "root.key"), "not a key\n", 0o600)
		}, "root_key", Fail, "malformed"},
		{"root key is a directory", func(t *testing.T, n *Node, _ *System) {
			path := filepath.Join(n.DataDir, "keys", "root.key")
			if err := os.Remove(path); err != nil {
				t.Fatal(err)
			}
			if err := os.Mkdir(path, 0o700); err != nil {
				t.Fatal(err)
			}
		}, "root_key", Fail, "not a regular file"},
		{"key dir open to others", func(t *testing.T, n *Node, _ *System) {
			if err := os.Chmod(filepath.Join(n.DataDir, "keys"), 0o755); err != nil {
				t.Fatal(err)
			}
		}, "root_key", Warn, "mode 0755"},
		{"root_key_file missing", func(t *testing.T, n *Node, _ *System) {
			n.RootKeyFile = filepath.Join(t.TempDir(), "cluster.key")
		}, "root_key", Fail, "never creates it"},
		{"root_key_file readable by others", func(t *testing.T, n *Node, _ *System) {
			n.RootKeyFile = filepath.Join(t.TempDir(), "cluster.key")
			write(t, n.RootKeyFile, goodKey, 0o644)
		}, "root_key", Fail, "cluster.key has mode 0644"},
		{"dependency unreachable", func(t *testing.T, n *Node, _ *System) {
			n.Dependencies = []Dependency{{Key: "gateway.storage_url", URL: closedURL(t)}}
		}, "dependency:gateway.storage_url", Fail, "unreachable"},
		{"dependency not healthy", func(t *testing.T, n *Node, _ *System) {
			n.Dependencies = []Dependency{{Key: "gateway.index_url", URL: answering(t, 503).URL}}
		}, "dependency:gateway.index_url", Fail, "answered 503"},
		{"optional peer unreachable", func(t *testing.T, n *Node, _ *System) {
			n.Dependencies = []Dependency{{Key: "index.peers", URL: closedURL(t), Optional: true}}
		}, "dependency:index.peers", Warn, "unreachable"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n, sys := baseNode(t), System{}
			tc.setup(t, &n, &sys)
			rep := run(n, sys)
			r := find(t, rep, tc.check)
			if r.Level != tc.level || !strings.Contains(r.Message, tc.msg) || r.Fix == "" {
				t.Fatalf("%s: got %+v, want level %s, message containing %q and a fix", tc.check, r, tc.level, tc.msg)
			}
			if rep.OK != (tc.level != Fail) {
				t.Fatalf("report OK = %t with a %s result", rep.OK, tc.level)
			}
		})
	}
}

// unwritableDir is a directory this process cannot create files in: a 0500
// folder, or for root (who ignores modes) a /proc directory.
func unwritableDir(t *testing.T) string {
	if os.Getuid() == 0 {
		return "/proc/self"
	}
	dir := filepath.Join(t.TempDir(), "ro")
	if err := os.Mkdir(dir, 0o500); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.Chmod(dir, 0o700) })
	return dir
}

// TestHealthyNode: every check passes on a node whose ports are free or
// held by a ron and whose dependencies answer with the same time.
func TestHealthyNode(t *testing.T) {
	n := baseNode(t)
	if err := os.Mkdir(filepath.Join(n.DataDir, "storage"), 0o750); err != nil {
		t.Fatal(err)
	}
	ron := healthy(t, 0)
	n.Listeners = []Listener{{Key: "admin.listen", Addr: ron.Listener.Addr().String()},
		{Key: "storage.listen", Addr: freeAddr(t)}, {Key: "index.listen", Addr: "127.0.0.1:0"}}
	n.Dependencies = []Dependency{{Key: "gateway.registry_url", URL: ron.URL + "/"}, {Key: "index.peers", URL: ron.URL, Optional: true}}
	rep := run(n, System{})
	if !rep.OK {
		t.Fatalf("healthy node failed: %+v", rep.Results)
	}
	want := map[string]Level{"config": OK, "data_dir": OK, "data_dir:storage": OK, "free_space": OK, "clock": OK,
		"port:admin.listen": OK, "port:storage.listen": OK, "port:index.listen": Skip, "root_key": OK,
		"dependency:gateway.registry_url": OK, "dependency:index.peers": OK}
	for check, lvl := range want {
		if r := find(t, rep, check); r.Level != lvl {
			t.Errorf("%s: %+v, want %s", check, r, lvl)
		}
	}
	if r := find(t, rep, "port:admin.listen"); !strings.Contains(r.Message, "running ron (version 9.9.9)") {
		t.Errorf("ron not recognised: %+v", r)
	}
	if len(rep.Results) != len(want) {
		t.Errorf("%d results, want %d: %+v", len(rep.Results), len(want), rep.Results)
	}
	entries, _ := os.ReadDir(n.DataDir)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".ron-doctor") {
			t.Errorf("probe file left behind: %s", e.Name())
		}
	}
}

func TestSkips(t *testing.T) {
	n := baseNode(t)
	n.Amnesia = true
	n.DataDir = filepath.Join(t.TempDir(), "never")
	rep := run(n, System{})
	for check, lvl := range map[string]Level{"data_dir": Skip, "free_space": Skip, "clock": Skip, "dependencies": Skip, "root_key": OK} {
		if r := find(t, rep, check); r.Level != lvl {
			t.Errorf("%s: %+v, want %s", check, r, lvl)
		}
	}
	if _, err := os.Stat(n.DataDir); err == nil {
		t.Error("the doctor created the data dir")
	}
	n.Amnesia = false
	n.Dependencies = []Dependency{{Key: "gateway.registry_url", URL: closedURL(t)}}
	if r := find(t, run(n, System{}), "clock"); r.Level != Skip || !strings.Contains(r.Message, "did not answer") {
		t.Errorf("clock against an unreachable URL: %+v", r)
	}
}

func TestConfigFailureStopsTheChecks(t *testing.T) {
	rep := run(Node{ConfigErr: errors.New("roles: unknown role \"x\"")}, System{})
	if rep.OK || len(rep.Results) != 1 || rep.Results[0].Check != "config" {
		t.Fatalf("got %+v", rep)
	}
}

func TestOutputs(t *testing.T) {
	rep := Report{OK: false, Results: []Result{
		{Check: "config", Level: OK, Message: "config valid"},
		{Check: "root_key", Level: Fail, Message: "mode 0644", Fix: "chmod 600 k"},
		{Check: "clock", Level: Skip, Message: "skipped"},
	}}
	var buf bytes.Buffer
	rep.WriteText(&buf)
	text := buf.String()
	for _, want := range []string{"OK    config", "FAIL  root_key", "fix: chmod 600 k", "SKIP  clock", "1 ok, 0 warnings, 1 failed, 1 skipped"} {
		if !strings.Contains(text, want) {
			t.Errorf("text lacks %q:\n%s", want, text)
		}
	}
	raw, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(raw), `{"check":"root_key","level":"fail","message":"mode 0644","fix":"chmod 600 k"}`) ||
		!strings.HasPrefix(string(raw), `{"ok":false,"checks":[`) {
		t.Errorf("json: %s", raw)
	}
}
