package storage

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/rs/zerolog"

	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/roles/storage/storageapi"
	"github.com/ronhq/ron/runtime"
	"github.com/ronhq/ron/runtime/cluster"
)

// adminFront is an admin-like listener with the role's repair routes.
func adminFront(t *testing.T, r *Role) http.Handler {
	t.Helper()
	srv := httpx.NewServer(httpx.ServerOptions{Role: "admin", Addr: "127.0.0.1:0", Log: zerolog.Nop(),
		Metrics: runtime.NewMetrics(nil).Set(), Limits: httpx.DefaultIngress().Limits()})
	r.MountRepairAdmin(srv.Echo().Group("/api/v1"), func(next echo.HandlerFunc) echo.HandlerFunc { return next })
	return srv.Echo()
}

func post(h http.Handler, path, body string) (*http.Response, []byte) {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, path, strings.NewReader(body)))
	return rec.Result(), rec.Body.Bytes()
}

// TestRepairAdminBadInput: strict JSON (400 malformed) and value checks
// (400 bad_request) for every repair route.
func TestRepairAdminBadInput(t *testing.T) {
	tr, _ := startRepairRole(t, newKeys(t), "memory")
	h := adminFront(t, tr.Role)
	cases := []struct {
		path, body, code string
	}{
		{"/api/v1/repair/pace", ``, httpx.CodeMalformed},
		{"/api/v1/repair/pace", `{`, httpx.CodeMalformed},
		{"/api/v1/repair/pace", `[]`, httpx.CodeMalformed},
		{"/api/v1/repair/pace", `{"bytes_per_s":1,"duration_s":5,"boost":true}`, httpx.CodeMalformed},
		{"/api/v1/repair/pace", `{"bytes_per_s":1.5,"duration_s":5}`, httpx.CodeMalformed},
		{"/api/v1/repair/pace", `{"bytes_per_s":"1MiB","duration_s":5}`, httpx.CodeMalformed},
		{"/api/v1/repair/pace", `{"bytes_per_s":1,"duration_s":5} {}`, httpx.CodeMalformed},
		{"/api/v1/repair/pace", `{"bytes_per_s":1}`, httpx.CodeBadRequest},
		{"/api/v1/repair/pace", `{"duration_s":5}`, httpx.CodeBadRequest},
		{"/api/v1/repair/pace", `{"bytes_per_s":null,"duration_s":5}`, httpx.CodeBadRequest},
		{"/api/v1/repair/pace", `{"bytes_per_s":-1,"duration_s":5}`, httpx.CodeBadRequest},
		{"/api/v1/repair/pace", `{"bytes_per_s":1,"duration_s":0}`, httpx.CodeBadRequest},
		{"/api/v1/repair/pace", `{"bytes_per_s":1,"duration_s":86401}`, httpx.CodeBadRequest},
		{"/api/v1/repair/run", `{"now":true}`, httpx.CodeMalformed},
		{"/api/v1/repair/run", `[]`, httpx.CodeMalformed},
		{"/api/v1/repair/object", ``, httpx.CodeMalformed},
		{"/api/v1/repair/object", `{"b3":"` + helloID + `","x":1}`, httpx.CodeMalformed},
		{"/api/v1/repair/object", `{"b3":7}`, httpx.CodeMalformed},
		{"/api/v1/repair/object", `{}`, httpx.CodeBadRequest},
		{"/api/v1/repair/object", `{"b3":"b3:00"}`, httpx.CodeBadRequest},
		{"/api/v1/repair/object", `{"b3":"` + strings.ToUpper(helloID[3:]) + `"}`, httpx.CodeBadRequest},
	}
	for _, c := range cases {
		resp, body := post(h, c.path, c.body)
		if resp.StatusCode != http.StatusBadRequest || envelope(t, body).Code != c.code {
			t.Errorf("%s %q: %d %s, want 400 %s", c.path, c.body, resp.StatusCode, body, c.code)
		}
	}
}

// TestRepairAdminRoutes: the good requests, their answers and their effect
// on the status details.
func TestRepairAdminRoutes(t *testing.T) {
	tr, _ := startRepairRole(t, newKeys(t), "memory")
	h := adminFront(t, tr.Role)
	resp, body := post(h, "/api/v1/repair/pace", `{"bytes_per_s":0,"duration_s":60}`)
	var pace storageapi.RepairPaceReply
	if resp.StatusCode != http.StatusOK || json.Unmarshal(body, &pace) != nil || pace.PaceBytesPerS != 0 ||
		pace.BoostUntil.Before(time.Now().Add(59*time.Second)) {
		t.Fatalf("pace: %d %s", resp.StatusCode, body)
	}
	for _, c := range []struct{ path, body string }{
		{"/api/v1/repair/run", ``}, {"/api/v1/repair/run", `{}`}, {"/api/v1/repair/object", `{"b3":"` + helloID + `"}`},
	} {
		if resp, body := post(h, c.path, c.body); resp.StatusCode != http.StatusAccepted {
			t.Fatalf("%s: %d %s", c.path, resp.StatusCode, body)
		}
	}
	d := detailsRepair(t, tr.Role)
	if d["state"] != "paused" || d["pace_bytes_per_s"] != 0.0 || d["boost_until"] == nil {
		t.Fatalf("details %v", d)
	}
}

// detailsRepair is Details()["repair"] as JSON sees it.
func detailsRepair(t *testing.T, r *Role) map[string]any {
	t.Helper()
	raw, err := json.Marshal(r.Details())
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Repair map[string]any `json:"repair"`
	}
	if err := json.Unmarshal(raw, &d); err != nil {
		t.Fatal(err)
	}
	return d.Repair
}

// TestRepairDetailsShape: the status object has exactly the keys of
// docs/cluster.md §9, eta_s and boost_until null when idle.
func TestRepairDetailsShape(t *testing.T) {
	tr, _ := startRepairRole(t, newKeys(t), "memory")
	d := detailsRepair(t, tr.Role)
	want := []string{"state", "pass", "scanned", "total", "under_replicated", "queued", "skipped", "bytes_pending",
		"bytes_done", "rate_bytes_per_s", "pace_bytes_per_s", "boost_until", "eta_s", "errors", "last_error"}
	if len(d) != len(want) {
		t.Fatalf("keys %v", d)
	}
	for _, k := range want {
		if _, ok := d[k]; !ok {
			t.Fatalf("missing %s in %v", k, d)
		}
	}
	if d["eta_s"] != nil || d["boost_until"] != nil || d["state"] != "idle" || d["pace_bytes_per_s"] != float64(50<<20) {
		t.Fatalf("details %v", d)
	}
	if _, ok := startRole(t, nil).Details().(map[string]any)["repair"]; ok {
		t.Fatal("repair details with cluster mode off")
	}
}

// TestRepairAdminClusterOff: the routes answer 404 on a single box.
func TestRepairAdminClusterOff(t *testing.T) {
	h := adminFront(t, startRole(t, nil).Role)
	resp, body := post(h, "/api/v1/repair/run", ``)
	wantError(t, resp, body, http.StatusNotFound, httpx.CodeNotFound)
}

// TestApplyCluster: a valid [cluster] reload moves the pace; an invalid one
// is refused and changes nothing.
func TestApplyCluster(t *testing.T) {
	tr, _ := startRepairRole(t, newKeys(t), "memory")
	c := cluster.DefaultConfig()
	c.RepairPace = 7 << 20
	if err := tr.ApplyCluster(c); err != nil {
		t.Fatal(err)
	}
	bad := c
	bad.RepairPace = 0
	if err := tr.ApplyCluster(bad); err == nil {
		t.Fatal("pace 0 accepted")
	}
	if d := detailsRepair(t, tr.Role); d["pace_bytes_per_s"] != float64(7<<20) {
		t.Fatalf("pace %v", d["pace_bytes_per_s"])
	}
	if v := tr.metric(series("repair_pace_bytes_per_second")); v != 7<<20 {
		t.Fatalf("pace gauge %v", v)
	}
}
