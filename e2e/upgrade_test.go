package e2e

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/ronhq/ron/store"
	"github.com/ronhq/ron/store/storetest"
)

// upgradeStatus is the storage role's details.sidecar_upgrade
// (docs/storage.md §5).
type upgradeStatus struct {
	State    string `json:"state"`
	Scanned  int64  `json:"scanned"`
	Upgraded int64  `json:"upgraded"`
	Corrupt  int64  `json:"corrupt"`
}

// sidecarUpgrade reads n's sidecar upgrade progress from /api/v1/status.
func (n *node) sidecarUpgrade() (upgradeStatus, error) {
	var st clStatus
	var up upgradeStatus
	r, err := clReq(2*time.Second, http.MethodGet, "http://"+n.admin+"/api/v1/status", nil, nil)
	if err != nil {
		return up, err
	}
	if err := json.Unmarshal(r.body, &st); err != nil {
		return up, fmt.Errorf("status %d: %v", r.status, err)
	}
	for _, role := range st.Roles {
		if role.Name == "storage" {
			var d struct {
				Upgrade *upgradeStatus `json:"sidecar_upgrade"`
			}
			if err := json.Unmarshal(role.Details, &d); err != nil || d.Upgrade == nil {
				return up, fmt.Errorf("storage details without sidecar_upgrade: %s", role.Details)
			}
			return *d.Upgrade, nil
		}
	}
	return up, fmt.Errorf("no storage role in the status")
}

// sidecarVersions counts the sidecars of objects on disk by version.
func sidecarVersions(t *testing.T, n *node, objects map[string][]byte) map[int]int {
	t.Helper()
	out := map[int]int{}
	for id := range objects {
		b, err := os.ReadFile(n.objectPath(id) + ".meta")
		if err != nil {
			t.Fatal(err)
		}
		out[store.SidecarVersion(b)]++
	}
	return out
}

// TestSidecarUpgradeSurvivesKill9: a node whose 200 objects carry v1
// sidecars (a ron before the outboard) is killed -9 three times while its
// background upgrade runs; the first kill finds both versions on disk. The
// node started once more finishes the pass: every sidecar is v2, every
// object reads back whole, its outboard serves, and tmp/ is empty.
func TestSidecarUpgradeSurvivesKill9(t *testing.T) {
	t.Parallel()
	n := startNode(t, nodeOpts{})
	tok := n.token("storage:write")
	objects := map[string][]byte{}
	for i := range 200 {
		data := make([]byte, 64<<10+i*1024)
		_, _ = rand.Read(data)
		objects[n.post(tok, data).CID] = data
	}
	n.signal(syscall.SIGTERM)
	if code := n.waitExit(10 * time.Second); code != 0 {
		t.Fatalf("SIGTERM exit %d", code)
	}
	for id, data := range objects {
		sc := storetest.SidecarV1(data, "", time.Now())
		if err := os.WriteFile(n.objectPath(id)+".meta", store.EncodeSidecar(sc), 0o640); err != nil {
			t.Fatal(err)
		}
	}
	for cycle := range 3 {
		n = n.restart()
		var last upgradeStatus
		poll(t, 20*time.Second, "ten upgrades by the pass", func() bool {
			up, err := n.sidecarUpgrade()
			last = up
			return err == nil && (up.Upgraded >= 10 || up.State == "done")
		})
		n.kill9()
		v := sidecarVersions(t, n, objects)
		t.Logf("cycle %d: killed at %+v; sidecars on disk by version %v", cycle, last, v)
		if cycle == 0 && (v[store.SidecarV1] == 0 || v[store.SidecarV2] == 0) {
			t.Fatalf("the first kill did not land inside the pass: versions %v", v)
		}
	}
	n = n.restart()
	poll(t, 60*time.Second, "the upgrade pass to finish", func() bool {
		up, err := n.sidecarUpgrade()
		return err == nil && up.State == "done"
	})
	if v := sidecarVersions(t, n, objects); v[store.SidecarV2] != len(objects) {
		t.Fatalf("sidecars on disk by version %v, want all %d v2", v, len(objects))
	}
	for id, data := range objects {
		r := do(t, "GET", n.url("/o/"+id), nil, nil)
		if r.status != 200 || !bytes.Equal(r.body, data) {
			t.Fatalf("GET %s after the upgrade: %d, %d bytes", id, r.status, len(r.body))
		}
		r = do(t, "GET", n.url("/o/"+id+"/outboard"), nil, nil)
		if want := storetest.ExpectedOutboard(data); r.status != 200 || !bytes.Equal(r.body, want) {
			t.Fatalf("outboard of %s: %d, %d bytes, want %d", id, r.status, len(r.body), len(want))
		}
	}
	if left := n.tmpEntries(); len(left) != 0 {
		t.Fatalf("tmp/ holds %v", left)
	}
}
