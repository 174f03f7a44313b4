package packcmd

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/ronhq/ron/internal/cli"
	"github.com/ronhq/ron/internal/fixtures"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// result is one command run.
type result struct {
	code           int
	stdout, stderr string
	err            error
}

// run executes `pack args...` and maps its error to an exit code as main
// does.
func run(args ...string) result {
	cmd := Command()
	var out, errb bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&errb)
	cmd.SetArgs(args)
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	err := cmd.Execute()
	r := result{stdout: out.String(), stderr: errb.String(), err: err}
	var ee *cli.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		r.code = ee.Code
	default:
		r.code = cli.ExitFailure
	}
	return r
}

func fixture(t *testing.T, kind, name string) string {
	t.Helper()
	return filepath.Join(fixtures.Dir(t), kind, name)
}

// verify: every fixture as docs/edge.md §14 says, at both levels; invalid
// packs exit 1 naming the reason.
func TestVerify(t *testing.T) {
	for _, c := range []struct {
		kind, file  string
		basic, full int // exit codes
		reason      string
	}{
		{"pmtiles", "stamen_toner_z3.pmtiles", 0, 0, ""},
		{"pmtiles", "test_fixture_1.pmtiles", 0, 0, ""},
		{"pmtiles", "test_fixture_mlt.pmtiles", 0, 0, ""},
		{"pmtiles", "empty.pmtiles", 1, 1, "shorter than the 127-byte header"},
		{"pmtiles", "invalid.pmtiles", 1, 1, "pmtiles"},
		{"pmtiles", "invalid_v4.pmtiles", 1, 1, "unsupported future version"},
		{"mbtiles", "world_cities.mbtiles", 0, 0, ""},
		{"mbtiles", "geography-class-png.mbtiles", 0, 0, ""},
		{"mbtiles", "bad_hash.mbtiles", 0, 1, "tile hash mismatch"},
		{"mbtiles", "invalid.mbtiles", 1, 1, "not an MBTiles schema"},
	} {
		path := fixture(t, c.kind, c.file)
		for _, lv := range []struct {
			args []string
			code int
		}{{[]string{"verify", path}, c.basic}, {[]string{"verify", path, "--full"}, c.full}} {
			r := run(lv.args...)
			if r.code != lv.code {
				t.Errorf("%v: exit %d, want %d (%s%s)", lv.args[1:], r.code, lv.code, r.stdout, r.stderr)
				continue
			}
			if lv.code == 0 && !strings.HasPrefix(r.stdout, "ok  "+path+"  "+c.kind) {
				t.Errorf("%s: %q", c.file, r.stdout)
			}
			if lv.code == 1 && (!strings.HasPrefix(r.stdout, "invalid  "+path) || !strings.Contains(r.stdout, c.reason)) {
				t.Errorf("%s: %q lacks %q", c.file, r.stdout, c.reason)
			}
		}
	}
	if r := run("verify", fixture(t, "pmtiles", "stamen_toner_z3.pmtiles"), "--full"); !strings.Contains(r.stdout, "(full)") ||
		!strings.Contains(r.stdout, "png  z0-3") {
		t.Errorf("full: %q", r.stdout)
	}
}

// Bad invocations exit 1: no file, a missing file, another extension, two
// arguments.
func TestVerifyBadArgs(t *testing.T) {
	dir := t.TempDir()
	other := filepath.Join(dir, "x.txt")
	if err := os.WriteFile(other, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"verify"}, {"verify", filepath.Join(dir, "none.pmtiles")}, {"verify", other},
		{"verify", other, other}, {"inspect", filepath.Join(dir, "none.mbtiles")}, {"inspect", other},
		{"inspect", fixture(t, "pmtiles", "stamen_toner_z3.pmtiles"), "-o", "yaml"},
		{"inspect", fixture(t, "pmtiles", "invalid.pmtiles")}} {
		if r := run(args...); r.code != 1 || r.err == nil {
			t.Errorf("%v: exit %d %v", args, r.code, r.err)
		}
	}
}

// inspect prints header, bounds, zooms, type, compression, counts and
// metadata; -o json is the same as JSON.
func TestInspect(t *testing.T) {
	r := run("inspect", fixture(t, "pmtiles", "stamen_toner_z3.pmtiles"))
	for _, s := range []string{"kind:             pmtiles", "tile type:        png (image/png)", "tile compression: none",
		"zoom:             0-3", "entries:          84", "tiles:            85", "header:           version 3",
		"bounds:           -180,-85,180,85", "metadata:\n  {}"} {
		if r.code != 0 || !strings.Contains(r.stdout, s) {
			t.Errorf("text lacks %q:\n%s", s, r.stdout)
		}
	}
	r = run("inspect", fixture(t, "mbtiles", "world_cities.mbtiles"), "-o", "json")
	var in struct {
		Kind        string            `json:"kind"`
		Tiles       int               `json:"tiles"`
		Compression string            `json:"tile_compression"`
		MaxZoom     int               `json:"maxzoom"`
		Metadata    map[string]string `json:"metadata"`
		Header      *json.RawMessage  `json:"header"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &in); err != nil || r.code != 0 {
		t.Fatalf("json: %v %q", err, r.stdout)
	}
	if in.Kind != "mbtiles" || in.Tiles != 196 || in.Compression != "gzip" || in.MaxZoom != 6 ||
		in.Metadata["format"] != "pbf" || in.Header != nil {
		t.Fatalf("%+v", in)
	}
	r = run("inspect", fixture(t, "mbtiles", "json.mbtiles"))
	if r.code != 0 || !strings.Contains(r.stdout, "tile type:        json (application/json)") {
		t.Fatalf("json pack: %s", r.stdout)
	}
}
