package storage

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	lbao "lukechampine.com/blake3/bao"

	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/httpx/content"
	"github.com/ronhq/ron/store"
	"github.com/ronhq/ron/store/bao"
	"github.com/ronhq/ron/store/storetest"
)

// TestOutboardEndpoint: GET /o/{b3}/outboard serves the library's outboard
// of the object with its headers; HEAD, 304 and 404 as documented.
func TestOutboardEndpoint(t *testing.T) {
	tr := startRole(t, nil)
	for _, data := range [][]byte{nil, []byte("hello world"), bigBody(), storetest.Pattern(5*65536 + 3)} {
		id := tr.put(data, "")
		path := "/o/" + id + "/outboard"
		resp, body := tr.do(req{method: "GET", path: path})
		want := storetest.ExpectedOutboard(data)
		if resp.StatusCode != 200 || !bytes.Equal(body, want) || resp.Header.Get("ETag") != `"`+id+`/outboard"` ||
			resp.Header.Get("Content-Type") != "application/octet-stream" || resp.Header.Get("Cache-Control") != content.Immutable ||
			resp.Header.Get("Content-Length") != strconv.Itoa(len(want)) {
			t.Fatalf("%d bytes: GET outboard %d %x %v", len(data), resp.StatusCode, body, resp.Header)
		}
		resp, body = tr.do(req{method: "HEAD", path: path})
		if resp.StatusCode != 200 || len(body) != 0 || resp.Header.Get("Content-Length") != strconv.Itoa(len(want)) {
			t.Fatalf("HEAD outboard %d %v", resp.StatusCode, resp.Header)
		}
		resp, body = tr.do(req{method: "GET", path: path, header: []string{"If-None-Match", `"` + id + `/outboard"`}})
		if resp.StatusCode != 304 || len(body) != 0 {
			t.Fatalf("If-None-Match: %d", resp.StatusCode)
		}
	}
	resp, body := tr.do(req{method: "GET", path: "/o/" + hex16ID + "/outboard"})
	wantError(t, resp, body, 404, httpx.CodeNotFound)
}

// TestSliceEndpoint: a slice of ranges on and off group boundaries is
// byte for byte what the Bao library extracts, and verifies against the id
// alone to exactly the range's bytes.
func TestSliceEndpoint(t *testing.T) {
	tr := startRole(t, nil)
	data := storetest.Pattern(5*65536 + 1234)
	idStr := tr.put(data, "")
	id := mustID(t, idStr)
	ob := storetest.ExpectedOutboard(data)
	size := int64(len(data))
	for _, c := range []struct{ start, n int64 }{
		{0, 1}, {0, size}, {65536, 65536}, {65530, 20}, {100, 3 * 65536}, {size - 1, 1}, {4 * 65536, size - 4*65536}, {131072, 1},
	} {
		t.Run(fmt.Sprintf("%d+%d", c.start, c.n), func(t *testing.T) {
			resp, body := tr.do(req{method: "GET", path: fmt.Sprintf("/o/%s/slice?start=%d&len=%d", idStr, c.start, c.n)})
			if resp.StatusCode != 200 || resp.Header.Get("ETag") != fmt.Sprintf(`"%s/slice/%d+%d"`, idStr, c.start, c.n) {
				t.Fatalf("slice: %d %v %s", resp.StatusCode, resp.Header, body)
			}
			from, to, err := bao.Span(c.start, c.n, size)
			if err != nil {
				t.Fatal(err)
			}
			var want bytes.Buffer
			if err := lbao.ExtractSlice(&want, bytes.NewReader(data[from:to]), bytes.NewReader(ob), 6, uint64(c.start), uint64(c.n)); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(body, want.Bytes()) {
				t.Fatalf("slice is not the library's (%d bytes, want %d)", len(body), want.Len())
			}
			var got bytes.Buffer
			if err := bao.VerifySlice(&got, bytes.NewReader(body), id, c.start, c.n); err != nil ||
				!bytes.Equal(got.Bytes(), data[c.start:c.start+c.n]) {
				t.Fatalf("slice does not verify to the range: %v", err)
			}
		})
	}
}

// TestParseSliceQuery is the slice query's table of good and malformed
// parameters.
func TestParseSliceQuery(t *testing.T) {
	for _, c := range []struct {
		start, n   string
		wantS, wN  int64
		wantFailed bool
	}{
		{"0", "1", 0, 1, false}, {"123", "456", 123, 456, false}, {"9223372036854775807", "1", 1<<63 - 1, 1, false},
		{"", "1", 0, 0, true}, {"0", "", 0, 0, true}, {"0", "0", 0, 0, true}, {"-1", "1", 0, 0, true},
		{"0", "-1", 0, 0, true}, {"+1", "1", 0, 0, true}, {"1e3", "1", 0, 0, true}, {"0x10", "1", 0, 0, true},
		{" 1", "1", 0, 0, true}, {"1", "1 ", 0, 0, true}, {"9223372036854775808", "1", 0, 0, true}, {"1.5", "1", 0, 0, true},
	} {
		s, n, err := ParseSliceQuery(c.start, c.n)
		if c.wantFailed {
			if he := httpx.AsError(err); err == nil || he.Status != http.StatusBadRequest || he.Code != httpx.CodeBadRequest {
				t.Errorf("start=%q len=%q: %v, want 400 bad_request", c.start, c.n, err)
			}
			continue
		}
		if err != nil || s != c.wantS || n != c.wN {
			t.Errorf("start=%q len=%q: %d %d %v", c.start, c.n, s, n, err)
		}
	}
}

func FuzzParseSliceQuery(f *testing.F) {
	for _, s := range [][2]string{{"0", "1"}, {"", ""}, {"-1", "0"}, {"99999999999999999999", "1"}, {"1e3", "0x1"}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, start, n string) {
		s, l, err := ParseSliceQuery(start, n)
		if err != nil {
			return
		}
		if s < 0 || l < 1 || strconv.FormatInt(s, 10) != start || strconv.FormatInt(l, 10) != n {
			t.Fatalf("accepted start=%q len=%q as %d, %d", start, n, s, l)
		}
	})
}

// v1Store is a data directory whose objects' sidecars were written by a
// ron before the outboard: n objects (pattern bodies of growing size), the
// corrupt ones' data changed after the fact.
type v1Store struct {
	dir     string
	objects map[store.ID][]byte
}

// newV1Store fills a data directory through a role, stops it and rewrites
// every sidecar as v1; corrupt objects get a byte of their data flipped.
func newV1Store(t *testing.T, n, corrupt int) *v1Store {
	t.Helper()
	vs := &v1Store{dir: t.TempDir(), objects: map[store.ID][]byte{}}
	tr := startRoleOpts(t, nil, func(o *Options) { o.DataDir = vs.dir })
	for i := range n {
		data := storetest.Pattern(1000 + 40000*i)[i:]
		id := mustID(t, tr.put(data, "text/x"))
		vs.objects[id] = data
	}
	stopRole(t, tr)
	i := 0
	for id, data := range vs.objects {
		sc := storetest.SidecarV1(data, "text/x", time.UnixMilli(1_600_000_000_000))
		if err := os.WriteFile(vs.path(id)+".meta", store.EncodeSidecar(sc), 0o640); err != nil {
			t.Fatal(err)
		}
		if i < corrupt {
			flipFileByte(t, vs.path(id), int64(len(data)/2))
			delete(vs.objects, id)
		}
		i++
	}
	return vs
}

func (vs *v1Store) path(id store.ID) string { return objectPath(vs.dir, id) }

// objectPath is the fs engine's data file of id under the data directory.
func objectPath(dataDir string, id store.ID) string {
	h := id.Hex()
	return filepath.Join(dataDir, "storage", "objects", h[:2], h[2:4], h)
}

// versions counts the sidecars on disk by version.
func (vs *v1Store) versions(t *testing.T) map[int]int {
	out := map[int]int{}
	for id := range vs.objects {
		b, err := os.ReadFile(vs.path(id) + ".meta")
		if err != nil {
			t.Fatal(err)
		}
		out[store.SidecarVersion(b)]++
	}
	return out
}

// flipFileByte inverts the byte at off of the file at path in place.
func flipFileByte(t *testing.T, path string, off int64) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b := []byte{0}
	if _, err := f.ReadAt(b, off); err != nil {
		t.Fatal(err)
	}
	b[0] ^= 0xff
	if _, err := f.WriteAt(b, off); err != nil {
		t.Fatal(err)
	}
}

// stopRole stops a test role before the end of its test.
func stopRole(t *testing.T, tr *testRole) {
	t.Helper()
	tr.http.CloseIdleConnections()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	if err := tr.Stop(ctx); err != nil {
		t.Fatal(err)
	}
}

// upgradeDone waits until the sidecar upgrade pass has ended (at most
// 20 s) and returns its details from the role's status.
func upgradeDone(t *testing.T, tr *testRole) map[string]any {
	t.Helper()
	select {
	case <-tr.upgrade.ended:
	case <-time.After(20 * time.Second):
		t.Fatalf("sidecar upgrade not ended after 20 s: %v", tr.Details().(map[string]any)["sidecar_upgrade"])
	}
	return tr.Details().(map[string]any)["sidecar_upgrade"].(map[string]any)
}

// TestSidecarUpgradePass: a role started on v1 sidecars upgrades all of
// them in the background; each object reads back, its outboard is the
// library's, its metadata kept; the corrupt one is quarantined, counted.
func TestSidecarUpgradePass(t *testing.T) {
	vs := newV1Store(t, 6, 1)
	tr := startRoleOpts(t, nil, func(o *Options) { o.DataDir = vs.dir })
	d := upgradeDone(t, tr)
	if d["state"] != "done" || d["scanned"] != int64(6) || d["upgraded"] != int64(5) || d["corrupt"] != int64(1) {
		t.Fatalf("upgrade details %v", d)
	}
	if v := vs.versions(t); v[store.SidecarV2] != 5 {
		t.Fatalf("sidecar versions on disk %v", v)
	}
	for id, data := range vs.objects {
		resp, body := tr.do(req{method: "GET", path: "/o/" + id.String()})
		if resp.StatusCode != 200 || !bytes.Equal(body, data) || resp.Header.Get("Content-Type") != "text/x" {
			t.Fatalf("GET after the upgrade: %d, %d bytes, %q", resp.StatusCode, len(body), resp.Header.Get("Content-Type"))
		}
		if _, ob := tr.do(req{method: "GET", path: "/o/" + id.String() + "/outboard"}); !bytes.Equal(ob, storetest.ExpectedOutboard(data)) {
			t.Fatal("outboard after the upgrade is not the object's")
		}
	}
	if tr.metric(series("storage_sidecar_upgrades_total", "result", "upgraded")) != 5 ||
		tr.metric(series("storage_sidecar_upgrades_total", "result", "corrupt")) != 1 {
		t.Fatalf("upgrade metrics: %v", tr.scrape())
	}
}

// TestOutboardUpgradesOnDemand: the outboard of an object whose sidecar
// is still v1 is served (the object upgraded on the spot) even when the
// background pass has not reached it; every client path agrees.
func TestOutboardUpgradesOnDemand(t *testing.T) {
	vs := newV1Store(t, 3, 0)
	tr := startRoleOpts(t, nil, func(o *Options) { o.DataDir = vs.dir })
	lc := NewLocalClient(tr.Role)
	for id, data := range vs.objects {
		ob, err := lc.Outboard(context.Background(), id)
		if err != nil || !bytes.Equal(ob, storetest.ExpectedOutboard(data)) {
			t.Fatalf("local outboard: %v", err)
		}
	}
	upgradeDone(t, tr)
	if v := vs.versions(t); v[store.SidecarV2] != 3 {
		t.Fatalf("sidecar versions on disk %v", v)
	}
}
