package e2e

import (
	"context"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/ronhq/ron/internal/tooltest"
)

// Settings of the cache-tests run (docs/edge.md §14): the suite's origin
// listens on 127.0.0.1:18000 (scripts/cachetests/run.sh starts it), the edge
// on 127.0.0.1:18081 in front of it as origin "ct".
const (
	cacheTestsEdge   = "127.0.0.1:18081"
	cacheTestsOrigin = `name = "ct"
url = "http://127.0.0.1:18000"
allow_insecure = true
forward_unsafe = true
max_tries = 1`
	// cacheTestsLimit bounds run.sh (npm ci of the pinned suite, its origin,
	// 365 tests); a healthy run takes well under a minute.
	cacheTestsLimit = 3 * time.Minute
)

// cacheTestsScore matches run.sh's score line.
var cacheTestsScore = regexp.MustCompile(`cache-tests score: (\d+) of (\d+) \(floor (\d+)`)

// TestEdgeCacheTests runs the http-tests/cache-tests suite (npm
// http-cache-tests, pinned in scripts/cachetests) against a real
// `ron serve --roles=edge --amnesia --edge.listen 127.0.0.1:18081` with the
// spec's origin config. scripts/cachetests/run.sh starts the suite's origin,
// runs the suite against /assets/ct, prints the score and exits 1 below the
// floor in scripts/cachetests/FLOOR; the test fails then. It is not parallel:
// several of the suite's tests depend on real time, and the ports are fixed.
func TestEdgeCacheTests(t *testing.T) {
	for _, tool := range []string{"node", "npm", "curl"} {
		if _, err := exec.LookPath(tool); err != nil {
			tooltest.Missing(t, "%s is not on PATH (Node.js 18+ and npm run the cache-tests suite, curl waits for its servers)", tool)
		}
	}
	script, err := filepath.Abs(filepath.Join("..", "scripts", "cachetests", "run.sh"))
	if err != nil {
		t.Fatal(err)
	}
	e := startEdge(t, edgeSpec{roles: "edge", listen: cacheTestsEdge, args: []string{"--amnesia"},
		origins: []string{cacheTestsOrigin}})
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), cacheTestsLimit)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", script, "http://"+e.edge)
	cmd.Env = cleanEnv()
	out, err := cmd.CombinedOutput()
	took := time.Since(start).Round(time.Second)
	m := cacheTestsScore.FindSubmatch(out)
	if m == nil {
		t.Fatalf("run.sh printed no score after %s (%v):\n%s", took, err, out)
	}
	t.Logf("cache-tests score %s of %s (floor %s) in %s; Squid 262, Varnish 218, nginx 203", m[1], m[2], m[3], took)
	if err != nil {
		t.Fatalf("run.sh: %v (the score is below the floor):\n%s", err, out)
	}
}
