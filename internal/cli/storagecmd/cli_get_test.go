package storagecmd

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ronhq/ron/internal/cli"
	"github.com/ronhq/ron/store/verified/vfetch/vfetchtest"
)

// TestGetFromLyingServer: `ron cat` and `ron get --out` from a --server
// that lies (docs/storage.md §9) never write a wrong byte: stdout holds
// the verified prefix before the first bad group and the exit code is 1;
// a file is not created at all. A server without outboards is refused
// with the fix named.
func TestGetFromLyingServer(t *testing.T) {
	truth := bigBody()
	truth = append(append(truth, truth...), truth...) // 307,200 bytes: five groups
	liars := vfetchtest.Liars(truth)
	liars = append(liars, vfetchtest.Liar{Name: "honest", Object: vfetchtest.Honest(truth), Bad: [2]int{99, 99}})
	for _, l := range liars {
		t.Run(l.Name, func(t *testing.T) {
			srv := newFBBad(t, l.Object)
			want, complete := l.Delivers(truth, 0, int64(len(truth))-1)
			code, stdout, err := fbRun(t, fbEnv(t, ""), "cat", l.ID.String(), "--server", srv.URL)
			if !bytes.Equal(stdout, want) || (code == 0) != complete {
				t.Fatalf("cat: exit %d (%v), %d bytes out, want %d (complete %v)", code, err, len(stdout), len(want), complete)
			}
			file := filepath.Join(t.TempDir(), "obj")
			code, _, err = fbRun(t, fbEnv(t, ""), "get", l.ID.String(), "--server", srv.URL, "--out", file)
			got, rerr := os.ReadFile(file)
			if complete && (code != 0 || !bytes.Equal(got, truth)) || !complete && (code != cli.ExitFailure || rerr == nil) {
				t.Fatalf("get --out: exit %d (%v), file %d bytes (%v)", code, err, len(got), rerr)
			}
			fbNoFile(t, file+".part")
		})
	}
	t.Run("a server without outboards", func(t *testing.T) {
		srv := newFBBad(t, vfetchtest.V1(truth))
		code, stdout, err := fbRun(t, fbEnv(t, ""), "cat", vfetchtest.V1(truth).ID.String(), "--server", srv.URL)
		if code != cli.ExitFailure || len(stdout) != 0 || err == nil || !strings.Contains(err.Error(), "upgrade it") {
			t.Fatalf("exit %d (%v), %d bytes out", code, err, len(stdout))
		}
	})
}
