package ui

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ronhq/ron/internal/tooltest"
)

// nodeLimit bounds the node run (it takes well under a second).
const nodeLimit = 30 * time.Second

// TestAppHelpersUnderNode runs scripts/node/ui-parse-test.mjs against the
// embedded app.js: the Prometheus parser, histogram quantiles, counter
// rates and formatting the page renders with.
func TestAppHelpersUnderNode(t *testing.T) {
	if _, err := exec.LookPath("node"); err != nil {
		tooltest.Missing(t, "node is not on PATH (Node.js 18+, Debian package nodejs)")
	}
	script, err := filepath.Abs(filepath.Join("..", "..", "..", "scripts", "node", "ui-parse-test.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	app, err := filepath.Abs("app.js")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), nodeLimit)
	defer cancel()
	out, err := exec.CommandContext(ctx, "node", script, app).CombinedOutput()
	if err != nil {
		t.Fatalf("node %s: %v\n%s", filepath.Base(script), err, out)
	}
	if !strings.HasPrefix(string(out), "ok ") {
		t.Fatalf("node %s printed %q, want ok N checks", filepath.Base(script), out)
	}
	t.Log(strings.TrimSpace(string(out)))
}
