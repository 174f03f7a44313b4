// Package tooltest lets tests that need an outside tool (b3sum, node, npm
// modules, Tessera's fsck) skip on a developer machine without it, but fail
// where the test script has installed every tool: scripts/test.sh sets
// RON_REQUIRE_TOOLS=1, so a broken install can never turn into a silent skip.
package tooltest

import (
	"debug/buildinfo"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// Missing reports that a needed tool is absent: t.Fatal when
// RON_REQUIRE_TOOLS is set, else t.Skip with the message.
func Missing(t testing.TB, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	if os.Getenv("RON_REQUIRE_TOOLS") != "" {
		t.Fatal("required tool missing (RON_REQUIRE_TOOLS is set): " + msg)
	}
	t.Skip(msg)
}

// GoBinary returns the path of the Go program name built from the package
// importPath (recognised by its build info, so a system tool of the same
// name is not taken) in $GOBIN, $GOPATH/bin (default ~/go/bin) or on PATH,
// or "" when none is installed.
func GoBinary(name, importPath string) string {
	var dirs []string
	if d := os.Getenv("GOBIN"); d != "" {
		dirs = append(dirs, d)
	}
	gopath := os.Getenv("GOPATH")
	if gopath == "" {
		if home, err := os.UserHomeDir(); err == nil {
			gopath = filepath.Join(home, "go")
		}
	}
	for _, p := range filepath.SplitList(gopath) {
		dirs = append(dirs, filepath.Join(p, "bin"))
	}
	dirs = append(dirs, filepath.SplitList(os.Getenv("PATH"))...)
	for _, d := range dirs {
		path := filepath.Join(d, name)
		if info, err := buildinfo.ReadFile(path); err == nil && info.Path == importPath {
			return path
		}
	}
	return ""
}

// FsckPackage is the import path of Tessera's log checker, fsck.
const FsckPackage = "github.com/transparency-dev/tessera/cmd/fsck"
