package storagecmd

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/ronhq/ron/internal/cli"
	"github.com/ronhq/ron/roles/storage/storageapi"
)

// fakeAdmin is an admin listener that records repair requests.
type fakeAdmin struct {
	mu     sync.Mutex
	bodies map[string]string // path → last body
	status int               // answer of the POST routes
}

func (a *fakeAdmin) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	a.mu.Lock()
	a.bodies[r.URL.Path] = string(body)
	status := a.status
	a.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	if r.URL.Path == "/api/v1/status" {
		eta := 12.0
		st := map[string]any{"roles": []any{
			map[string]any{"name": "index", "details": map[string]any{}},
			map[string]any{"name": "storage", "details": map[string]any{"repair": storageapi.RepairProgress{State: "transferring",
				Pass: 3, Scanned: 10, Total: 10, UnderReplicated: 2, BytesPending: 3 << 20, PaceBytesPerS: 50 << 20, EtaS: &eta,
				Errors: 1, LastError: "has on b: refused"}}},
		}}
		_ = json.NewEncoder(w).Encode(st)
		return
	}
	if status != 0 {
		w.WriteHeader(status)
		_, _ = w.Write([]byte(`{"error":{"code":"not_found","message":"repair runs only in cluster mode"}}`))
		return
	}
	if r.URL.Path == "/api/v1/repair/pace" {
		_, _ = w.Write([]byte(`{"pace_bytes_per_s":209715200,"boost_until":"2026-05-01T10:00:00Z"}`))
		return
	}
	w.WriteHeader(http.StatusAccepted)
	_, _ = w.Write([]byte(`{"status":"pass requested"}`))
}

func (a *fakeAdmin) body(path string) string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.bodies[path]
}

func runRepairCLI(t *testing.T, admin string, args ...string) (int, string) {
	t.Helper()
	env := cli.Env{Node: func() (cli.Node, error) { return cli.Node{DataDir: t.TempDir(), AdminListen: admin}, nil }}
	root := &cobra.Command{Use: "ron", SilenceErrors: true, SilenceUsage: true}
	root.AddCommand(RepairCommands(env, func(string) string { return "" })...)
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&out)
	root.SetArgs(args)
	err := root.ExecuteContext(context.Background())
	var ee *cli.ExitError
	switch {
	case errors.As(err, &ee):
		return ee.Code, out.String() + ee.Error()
	case err != nil:
		return cli.ExitFailure, err.Error()
	}
	return 0, out.String()
}

// TestRepairCLI: status renders the storage role's repair object, run and
// pace send their requests, errors and an unreachable admin plane map to
// exit codes 1 and 2.
func TestRepairCLI(t *testing.T) {
	fa := &fakeAdmin{bodies: map[string]string{}}
	srv := httptest.NewServer(fa)
	defer srv.Close()
	admin := strings.TrimPrefix(srv.URL, "http://")

	code, out := runRepairCLI(t, admin, "repair", "status")
	if code != 0 || !strings.Contains(out, "state transferring  pass 3") || !strings.Contains(out, "under-replicated 2") ||
		!strings.Contains(out, "eta 12s") || !strings.Contains(out, "last: has on b: refused") {
		t.Fatalf("status: %d %q", code, out)
	}
	if code, out := runRepairCLI(t, admin, "repair", "status", "-o", "json"); code != 0 || !strings.Contains(out, `"bytes_pending": 3145728`) {
		t.Fatalf("status json: %d %q", code, out)
	}
	if code, out := runRepairCLI(t, admin, "repair", "run"); code != 0 || fa.body("/api/v1/repair/run") != "{}" {
		t.Fatalf("run: %d %q body %q", code, out, fa.body("/api/v1/repair/run"))
	}
	code, out = runRepairCLI(t, admin, "repair", "pace", "200MiB", "--for", "1h")
	if code != 0 || fa.body("/api/v1/repair/pace") != `{"bytes_per_s":209715200,"duration_s":3600}` ||
		!strings.Contains(out, "200.0 MiB/s until 2026-05-01T10:00:00Z") {
		t.Fatalf("pace: %d %q body %q", code, out, fa.body("/api/v1/repair/pace"))
	}
	if code, _ := runRepairCLI(t, admin, "repair", "pace", "0", "--admin", admin); code != 0 ||
		fa.body("/api/v1/repair/pace") != `{"bytes_per_s":0,"duration_s":3600}` {
		t.Fatalf("pause: %d body %q", code, fa.body("/api/v1/repair/pace"))
	}
	fa.mu.Lock()
	fa.status = http.StatusNotFound
	fa.mu.Unlock()
	if code, out := runRepairCLI(t, admin, "repair", "run"); code != cli.ExitFailure || !strings.Contains(out, "cluster mode") {
		t.Fatalf("404: %d %q", code, out)
	}
	if code, _ := runRepairCLI(t, fbClosedAddr(t), "repair", "run"); code != cli.ExitUnreachable {
		t.Fatalf("unreachable: %d", code)
	}
}

// TestRepairCLIBadArgs: RATE and --for are checked before any request.
func TestRepairCLIBadArgs(t *testing.T) {
	admin := fbClosedAddr(t)
	for _, args := range [][]string{
		{"repair", "pace", "fast"}, {"repair", "pace", "-1"}, {"repair", "pace", "1.5MiB"},
		{"repair", "pace", "1MiB", "--for", "0s"}, {"repair", "pace", "1MiB", "--for", "25h"},
		{"repair", "pace", "1MiB", "--for", "1500ms"}, {"repair", "status", "-o", "yaml"},
	} {
		if code, out := runRepairCLI(t, admin, args...); code != cli.ExitFailure {
			t.Errorf("%v: exit %d %q", args, code, out)
		}
	}
	if _, err := paceBody("10KiB", 90*time.Second); err != nil {
		t.Fatal(err)
	}
}
