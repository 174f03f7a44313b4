package root

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ronhq/ron/httpx/auth"
	"github.com/ronhq/ron/internal/cli"
	"github.com/ronhq/ron/internal/cli/doctor"
	"github.com/ronhq/ron/internal/node"
	"github.com/ronhq/ron/internal/node/nodetest"
)

// runDoctor runs `ron doctor ARGS` with the config file and returns its
// output and exit code.
func runDoctor(t *testing.T, configFile string, args ...string) (string, int) {
	t.Helper()
	a := &app{configFile: configFile, getenv: func(string) string { return "" }, environ: func() []string { return nil }}
	cmd := a.doctorCommand()
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	cmd.SetArgs(args)
	err := cmd.Execute()
	var ee *cli.ExitError
	switch {
	case err == nil:
		return out.String(), 0
	case errors.As(err, &ee):
		return out.String(), ee.Code
	}
	t.Fatalf("doctor: %v", err)
	return "", 0
}

func writeConfig(t *testing.T, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "ron.toml")
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestDoctorOnARunningNode: the node's own ports are held by ron, which
// the doctor accepts; everything else passes or does not apply.
func TestDoctorOnARunningNode(t *testing.T) {
	n, _ := startNode(t, func(c *node.Config) { c.Roles = []string{"registry", "index", "storage", "gateway"} })
	var st node.Status
	if code := nodetest.GetJSON(t, "GET", "http://"+n.AdminAddr()+"/api/v1/status", "", &st); code != 200 {
		t.Fatalf("status %d", code)
	}
	toml := fmt.Sprintf("roles = [\"registry\", \"index\", \"storage\", \"gateway\"]\namnesia = true\ndata_dir = %q\n[admin]\nlisten = %q\n",
		t.TempDir(), n.AdminAddr())
	for _, r := range st.Roles {
		toml += fmt.Sprintf("[%s]\nlisten = %q\n", r.Name, r.Listen)
	}
	out, code := runDoctor(t, writeConfig(t, toml), "-o", "json")
	var rep doctor.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("%v in %s", err, out)
	}
	if code != 0 || !rep.OK {
		t.Fatalf("exit %d: %s", code, out)
	}
	ports := 0
	for _, r := range rep.Results {
		if strings.HasPrefix(r.Check, "port:") {
			ports++
			if r.Level != doctor.OK || !strings.Contains(r.Message, "running ron (version test)") {
				t.Errorf("%+v", r)
			}
		}
	}
	if ports != 5 {
		t.Errorf("%d port checks, want admin + 4 roles: %s", ports, out)
	}
}

// TestDoctorFindsFaults: a leaked root key fails the run (exit 1) with a
// fix; an invalid config stops at the config check.
func TestDoctorFindsFaults(t *testing.T) {
	data := t.TempDir()
	if _, err := auth.LoadOrCreateRootKey(data, false); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(auth.KeyPath(data), 0o644); err != nil {
		t.Fatal(err)
	}
	free := "127.0.0.1:0"
	toml := fmt.Sprintf("data_dir = %q\nroles = [\"storage\"]\n[admin]\nlisten = %q\n[storage]\nlisten = %q\nmin_free_bytes = 1\n", data, free, free)
	out, code := runDoctor(t, writeConfig(t, toml))
	if code != cli.ExitFailure || !strings.Contains(out, "FAIL  root_key") || !strings.Contains(out, "fix: chmod 600 "+auth.KeyPath(data)) ||
		!strings.Contains(out, "OK    data_dir") || !strings.Contains(out, "1 failed") {
		t.Fatalf("exit %d:\n%s", code, out)
	}

	out, code = runDoctor(t, writeConfig(t, "[storage]\nno_such_key = 1\n"))
	if code != cli.ExitFailure || !strings.Contains(out, "FAIL  config") || !strings.Contains(out, "no_such_key") {
		t.Fatalf("invalid config: exit %d:\n%s", code, out)
	}
	if _, code := runDoctor(t, "", "-o", "yaml"); code != cli.ExitFailure {
		t.Fatalf("-o yaml: exit %d", code)
	}
}

func TestDoctorDependencies(t *testing.T) {
	cfg := node.DefaultConfig()
	cfg.Roles = []string{"index", "storage", "gateway"}
	cfg.Index.AdvertiseURL = "http://10.0.0.1:5304"
	cfg.Index.Peers = []string{"http://10.0.0.1:5304/", "http://10.0.0.2:5304"}
	cfg.Storage.IndexURLs = []string{"http://10.0.0.9:5304"} // unused: the index runs here
	cfg.Gateway.RegistryURL = "http://10.0.0.3:9444"
	var got []string
	for _, d := range dependencies(&cfg) {
		got = append(got, fmt.Sprintf("%s=%s/%t", d.Key, d.URL, d.Optional))
	}
	want := []string{"gateway.registry_url=http://10.0.0.3:9444/false", "index.peers=http://10.0.0.2:5304/true"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("dependencies %v, want %v", got, want)
	}
	cfg.Roles = []string{"storage"}
	if d := dependencies(&cfg); len(d) != 1 || d[0].Key != "storage.index_urls" || !d[0].Optional {
		t.Fatalf("storage alone: %+v", d)
	}
}
