package sdnotify

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ronhq/ron/internal/tooltest"
)

// The units under test (scripts/systemd) and the ExecStart binary they name.
const (
	unitDir    = "../../scripts/systemd"
	unitBin    = "/usr/local/bin/ron"
	maxDrain   = 5 * time.Second // roles.MaxDrainDeadline
	aptSystemd = "apt-get install -y systemd procps"
)

// unitKeys parses a unit file into key → values (repeated keys append).
func unitKeys(t *testing.T, path string) map[string][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	keys := map[string][]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' || line[0] == '[' {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			t.Fatalf("%s: malformed line %q", path, line)
		}
		keys[k] = append(keys[k], v)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return keys
}

// TestUnitsDeclareTheContract checks, without systemd, that both units
// carry what docs/architecture.md §3 and the operating issue ask of them.
func TestUnitsDeclareTheContract(t *testing.T) {
	for _, tc := range []struct{ file, state, config string }{
		{"ron.service", "ron", "/etc/ron/ron.toml"},
		{"ron@.service", "ron/%i", "/etc/ron/%i.toml"},
	} {
		t.Run(tc.file, func(t *testing.T) {
			keys := unitKeys(t, filepath.Join(unitDir, tc.file))
			want := map[string]string{
				"Type": "notify", "NotifyAccess": "main", "ExecReload": "/bin/kill -HUP $MAINPID",
				"User": "ron", "Group": "ron", "StateDirectory": tc.state, "ReadWritePaths": "%S/" + tc.state,
				"ProtectSystem": "strict", "ProtectHome": "yes", "PrivateTmp": "yes", "NoNewPrivileges": "yes",
				"RestrictAddressFamilies": "AF_UNIX AF_INET AF_INET6", "CapabilityBoundingSet": "",
				"SystemCallFilter": "@system-service",
				"ExecStart":        unitBin + " serve --config " + tc.config + " --data-dir %S/" + tc.state,
			}
			for k, v := range want {
				if got := keys[k]; len(got) != 1 || got[0] != v {
					t.Errorf("%s=%q, want exactly %q", k, got, v)
				}
			}
			stop := durationKey(t, keys, "TimeoutStopSec")
			if stop <= maxDrain+time.Second {
				t.Errorf("TimeoutStopSec=%s does not leave room for the %s drain plus the roles' stop grace", stop, maxDrain)
			}
			if durationKey(t, keys, "WatchdogSec") < 2*time.Second {
				t.Error("WatchdogSec must be set (≥ 2s)")
			}
		})
	}
}

// durationKey reads a single "<n>" or "<n>s" seconds key.
func durationKey(t *testing.T, keys map[string][]string, k string) time.Duration {
	t.Helper()
	v := keys[k]
	if len(v) != 1 {
		t.Fatalf("%s=%q: want one value", k, v)
	}
	s := v[0]
	if !strings.HasSuffix(s, "s") {
		s += "s"
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		t.Fatalf("%s=%q: %v", k, v[0], err)
	}
	return d
}

// TestUnitsVerify runs `systemd-analyze verify` on both units and on an
// instance of the template. verify insists that ExecStart names an
// existing executable, so each unit is verified as a copy in a temp dir
// whose ExecStart is this test binary instead of /usr/local/bin/ron. Any
// diagnostic naming a unit fails the test (verify exits 0 on unknown keys).
func TestUnitsVerify(t *testing.T) {
	tool, err := exec.LookPath("systemd-analyze")
	if err != nil {
		tooltest.Missing(t, "systemd-analyze is not installed (%s)", aptSystemd)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for src, copies := range map[string][]string{
		"ron.service":  {"ron.service"},
		"ron@.service": {"ron@.service", "ron@node1.service"},
	} {
		raw, err := os.ReadFile(filepath.Join(unitDir, src))
		if err != nil {
			t.Fatal(err)
		}
		text := strings.ReplaceAll(string(raw), "ExecStart="+unitBin+" ", "ExecStart="+self+" ")
		if text == string(raw) {
			t.Fatalf("%s: ExecStart does not start with %s", src, unitBin)
		}
		for _, name := range copies {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
			t.Run(name, func(t *testing.T) { verifyUnit(t, tool, filepath.Join(dir, name)) })
		}
	}
}

func verifyUnit(t *testing.T, tool, path string) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, tool, "verify", path)
	cmd.Env = append(os.Environ(), "SYSTEMD_LOG_LEVEL=notice", "SYSTEMD_PAGER=")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("systemd-analyze verify %s: %v\n%s", filepath.Base(path), err, out)
	}
	for _, line := range strings.Split(string(out), "\n") {
		if strings.Contains(line, filepath.Base(path)) || strings.Contains(line, filepath.Dir(path)) {
			t.Errorf("systemd-analyze verify: %s", line)
		}
	}
}
