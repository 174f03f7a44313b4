package root

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestCompletion: `ron completion bash|zsh|fish` prints each shell's
// script (cobra's built-in command); the bash one parses (bash -n).
func TestCompletion(t *testing.T) {
	for shell, marker := range map[string]string{
		"bash": "# bash completion V2 for ron",
		"zsh":  "#compdef ron",
		"fish": "# fish completion for ron",
	} {
		t.Run(shell, func(t *testing.T) {
			root := NewCommand(func(int) {})
			var out bytes.Buffer
			root.SetOut(&out)
			root.SetArgs([]string{"completion", shell})
			if err := root.Execute(); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(out.String(), marker) || out.Len() < 1000 {
				t.Fatalf("%s completion lacks %q (%d bytes)", shell, marker, out.Len())
			}
			if shell == "bash" {
				bashParses(t, out.Bytes())
			}
		})
	}
}

func bashParses(t *testing.T, script []byte) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		return // bash is not this test's subject
	}
	path := filepath.Join(t.TempDir(), "ron.bash")
	if err := os.WriteFile(path, script, 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if out, err := exec.CommandContext(ctx, bash, "-n", path).CombinedOutput(); err != nil {
		t.Fatalf("bash -n: %v\n%s", err, out)
	}
}
