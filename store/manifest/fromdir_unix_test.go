//go:build unix

package manifest_test

import (
	"context"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/ronhq/ron/store/manifest"
)

func TestFromDirSkipsFIFO(t *testing.T) {
	root := writeTree(t, map[string]string{"a.txt": "a"})
	if err := syscall.Mkfifo(filepath.Join(root, "pipe"), 0o644); err != nil {
		t.Skip("mkfifo:", err)
	}
	var warnings []string
	m, err := manifest.FromDir(context.Background(), root, (&fakePut{}).put, manifest.FromDirOptions{
		Warn: func(s string) { warnings = append(warnings, s) },
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Entries) != 1 || len(warnings) != 1 || !strings.Contains(warnings[0], "non-regular") {
		t.Fatalf("entries %v warnings %q", m.Entries, warnings)
	}
}
