package descriptor

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/ronhq/ron/internal/tooltest"
)

// The npm cross-check of docs/registry.md §10: npm `canonicalize` (RFC
// 8785), run by scripts/node/canonicalize.mjs, yields the bytes
// Canonicalize yields.

// npmDir is scripts/node, relative to this package.
const npmDir = "../../../../scripts/node"

// npmInstall is the command that installs the Node modules the test runs.
const npmInstall = "npm ci --prefix scripts/node"

// npmLimit bounds one run of canonicalize.mjs (Node starts in ~50 ms).
const npmLimit = 30 * time.Second

// npmCanonicalizer returns a function running canonicalize.mjs on its
// input: its stdout, or an error carrying its stderr when it refused. The
// test is skipped when node or the installed modules are absent.
func npmCanonicalizer(t *testing.T) func(in []byte) ([]byte, error) {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		tooltest.Missing(t, "node is not on PATH (Node.js 18+, then %s)", npmInstall)
	}
	if _, err := os.Stat(filepath.Join(npmDir, "node_modules", "canonicalize")); err != nil {
		tooltest.Missing(t, "npm modules are not installed: run %s", npmInstall)
	}
	script, err := filepath.Abs(filepath.Join(npmDir, "canonicalize.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	return func(in []byte) ([]byte, error) {
		ctx, cancel := context.WithTimeout(context.Background(), npmLimit)
		defer cancel()
		cmd := exec.CommandContext(ctx, node, script)
		var stdout, stderr bytes.Buffer
		cmd.Stdin, cmd.Stdout, cmd.Stderr = bytes.NewReader(in), &stdout, &stderr
		err := cmd.Run()
		if ctx.Err() != nil {
			t.Fatalf("canonicalize.mjs still running after %s", npmLimit)
		}
		var ee *exec.ExitError
		if errors.As(err, &ee) && ee.ExitCode() == 1 {
			return nil, errors.New(stderr.String())
		}
		if err != nil {
			t.Fatalf("canonicalize.mjs: %v (stderr %q)", err, stderr.String())
		}
		return stdout.Bytes(), nil
	}
}

// TestNpmCanonicalizeGolden feeds the known-answer inputs to npm
// canonicalize: golden-set.json gives golden-set.jcs byte for byte, and
// the canonical files come back unchanged.
func TestNpmCanonicalizeGolden(t *testing.T) {
	npm := npmCanonicalizer(t)
	cases := []struct{ in, want string }{
		{"golden-set.json", "golden-set.jcs"},
		{"golden-set.jcs", "golden-set.jcs"},
		{"genesis.jcs", "genesis.jcs"},
		{"golden-approval.jcs", "golden-approval.jcs"},
		{"golden-artifact.jcs", "golden-artifact.jcs"},
		{"genesis-artifact.jcs", "genesis-artifact.jcs"},
		{"trust-roots.json", ""}, // no stored answer: compared with Canonicalize only
	}
	for _, tc := range cases {
		t.Run(tc.in, func(t *testing.T) {
			in := readGoldenFile(t, tc.in)
			got, err := npm(in)
			if err != nil {
				t.Fatalf("npm canonicalize refused %s: %v", tc.in, err)
			}
			own, err := Canonicalize(in)
			if err != nil {
				t.Fatalf("Canonicalize(%s): %v", tc.in, err)
			}
			if !bytes.Equal(got, own) {
				t.Fatalf("npm canonicalize and Canonicalize differ on %s:\n npm %q\n  go %q", tc.in, got, own)
			}
			if tc.want != "" && !bytes.Equal(got, readGoldenFile(t, tc.want)) {
				t.Fatalf("npm canonicalize of %s differs from %s:\n got %q", tc.in, tc.want, got)
			}
		})
	}
}

func readGoldenFile(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(goldenDir, name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// npmCase is one input of the cross-check table and what both
// implementations must do with it.
type npmCase struct {
	name string
	in   string
	want string // the canonical bytes both produce; "" when both refuse
	// goOnly marks inputs the registry refuses but JSON.parse accepts
	// (the documented difference): only Canonicalize must refuse.
	goOnly bool
}

// npmCases are the tricky inputs: key order by UTF-16 code units (non-BMP
// against U+FFxx), number serialisation (ECMAScript Number::toString),
// string escapes, and inputs both must refuse.
var npmCases = []npmCase{
	{name: "keys utf16 order", in: `{"\uff61":1,"\ud83d\ude00":2,"\u00e9":3,"z":4,"":5}`,
		want: "{\"\":5,\"z\":4,\"é\":3,\"😀\":2,\"｡\":1}"},
	{name: "keys U+FFxx vs surrogates", in: `{"\uffff":1,"\ufb33":2,"\ud800\udc00":3,"\udbff\udfff":4,"\uff10":5}`,
		want: "{\"\U00010000\":3,\"\U0010ffff\":4,\"\ufb33\":2,\"\uff10\":5,\"\uffff\":1}"},
	{name: "keys case and digits", in: `{"b":1,"B":2,"aa":3,"a":4,"10":5,"9":6,"1":7}`,
		want: `{"1":7,"10":5,"9":6,"B":2,"a":4,"aa":3,"b":1}`},
	{name: "key __proto__", in: `{"x":1,"__proto__":{"y":2}}`, want: `{"__proto__":{"y":2},"x":1}`},
	{name: "nested order", in: `{"b":[{"d":1,"c":2}],"a":{"f":{},"e":[]}}`, want: `{"a":{"e":[],"f":{}},"b":[{"c":2,"d":1}]}`},
	{name: "1e21", in: `[1e21,1e20,123456789012345678901]`, want: `[1e+21,100000000000000000000,123456789012345680000]`},
	{name: "negative zero", in: `[-0,-0.0,0e5,-0E-3]`, want: `[0,0,0,0]`},
	{name: "exponents", in: `[1E2,2.5e3,1e-7,1e-6,0.000001,12.50,1.0]`, want: `[100,2500,1e-7,0.000001,0.000001,12.5,1]`},
	{name: "doubles", in: `[0.1,-1.5,5e-324,1.7976931348623157e308,9007199254740993,4.35]`,
		want: `[0.1,-1.5,5e-324,1.7976931348623157e+308,9007199254740992,4.35]`},
	{name: "control escapes", in: `"\u0000\u0008\t\n\u000b\f\r\u001f \u007f"`, want: `"\u0000\b\t\n\u000b\f\r\u001f ` + "\x7f" + `"`},
	{name: "quote backslash slash", in: `"\"\\\/<>&'"`, want: `"\"\\/<>&'"`},
	{name: "unicode unescaped", in: `"\u00e9\u2028\u2029\ufeff\ud83d\ude00"`, want: "\"é\u2028\u2029\ufeff😀\""},
	{name: "literals", in: ` [ true , false , null ] `, want: `[true,false,null]`},
	{name: "whitespace and top-level string", in: "\r\n\t\"x\" ", want: `"x"`},
	{name: "lone high surrogate", in: `"\ud83d"`},
	{name: "lone low surrogate key", in: `{"\ude00":1}`},
	{name: "truncated", in: `{"a":`},
	{name: "trailing data", in: `{} {}`},
	{name: "NaN", in: `[NaN]`},
	{name: "beyond double range", in: `[1e400]`},
	{name: "leading zero", in: `[01]`},
	{name: "single quotes", in: `{'a':1}`},
	{name: "byte order mark", in: "\ufeff{}"},
	{name: "invalid utf-8", in: "\"\xff\""},
	{name: "empty", in: ``},
	{name: "duplicate key", in: `{"a":1,"a":2}`, goOnly: true},
}

// TestNpmCanonicalizeTable runs npmCases through npm canonicalize and
// Canonicalize and wants the same bytes, or a refusal from both.
func TestNpmCanonicalizeTable(t *testing.T) {
	npm := npmCanonicalizer(t)
	for _, tc := range npmCases {
		t.Run(tc.name, func(t *testing.T) {
			got, nerr := npm([]byte(tc.in))
			own, gerr := Canonicalize([]byte(tc.in))
			switch {
			case tc.goOnly:
				if gerr == nil || nerr != nil {
					t.Fatalf("want Canonicalize to refuse (got %q, %v) and npm to accept (got %q, %v)", own, gerr, got, nerr)
				}
			case tc.want == "":
				if gerr == nil || nerr == nil {
					t.Fatalf("want both to refuse: Canonicalize %q, %v; npm %q, %v", own, gerr, got, nerr)
				}
			case gerr != nil || nerr != nil:
				t.Fatalf("refused: Canonicalize %v; npm %v", gerr, nerr)
			case !bytes.Equal(got, own) || string(own) != tc.want:
				t.Fatalf("npm %q\n  go %q\nwant %q", got, own, tc.want)
			}
		})
	}
}
