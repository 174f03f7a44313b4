package e2e

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ronhq/ron/store"
	"github.com/ronhq/ron/store/verified"
)

// Limits of the /o tests.
const (
	// fillStartLimit bounds a fill reaching the fake storage's stall point
	// and its first bytes reaching the edge's blobs/tmp.
	fillStartLimit = 20 * time.Second
	// stalledRequestLimit bounds the client request that hangs on a
	// stalled fill; it ends when the edge is killed.
	stalledRequestLimit = time.Minute
)

// cacheStatus returns the Cache-Status of an answer.
func cacheStatus(r httpResult) string { return r.header.Get("Cache-Status") }

// wantMissStored wants a 200 with data whose Cache-Status says the edge
// went to storage and stored the answer.
func wantMissStored(t *testing.T, what string, r httpResult, data []byte) {
	t.Helper()
	cs := cacheStatus(r)
	if r.status != http.StatusOK || r.err != nil || !bytes.Equal(r.body, data) {
		t.Fatalf("%s: %d (%d bytes, %v), want 200 with the %d-byte object", what, r.status, len(r.body), r.err, len(data))
	}
	if !strings.HasPrefix(cs, "ron-edge;") || !strings.Contains(cs, "fwd=miss") || !strings.Contains(cs, "stored") {
		t.Errorf("%s: Cache-Status %q, want ron-edge; fwd=miss; …; stored", what, cs)
	}
}

// waitHit polls GET path until the edge answers from its cache: the worker
// commits a fill as its first answer ends, and a request right after may
// still join that fill (Cache-Status "…; collapsed"). Every answer must be
// the whole object.
func (e *edgeNode) waitHit(path string, data []byte) {
	e.t.Helper()
	var last httpResult
	if !pollUntilEvery(edgeRemountLimit, edgePollEvery, func() bool {
		last = e.get(http.MethodGet, path, nil)
		if last.status != http.StatusOK || !bytes.Equal(last.body, data) {
			e.t.Fatalf("GET %s: %d (%d bytes, %v), want 200 with the %d-byte object", path, last.status, len(last.body), last.err, len(data))
		}
		return strings.HasPrefix(cacheStatus(last), "ron-edge; hit")
	}) {
		e.t.Fatalf("GET %s: still Cache-Status %q after %s, want a hit", path, cacheStatus(last), edgeRemountLimit)
	}
}

// wantHit wants a 200 with data served from the edge's cache.
func wantHit(t *testing.T, what string, r httpResult, id string, data []byte) {
	t.Helper()
	if r.status != http.StatusOK || r.err != nil || !bytes.Equal(r.body, data) {
		t.Fatalf("%s: %d (%d bytes, %v), want 200 with the %d-byte object", what, r.status, len(r.body), r.err, len(data))
	}
	if cs := cacheStatus(r); !strings.HasPrefix(cs, "ron-edge; hit") {
		t.Errorf("%s: Cache-Status %q, want ron-edge; hit", what, cs)
	}
	wantObjectHeaders(t, what, r, id)
}

// edgeTmp lists <data>/edge/blobs/tmp (none when it does not exist).
func (e *edgeNode) edgeTmp() []string {
	e.t.Helper()
	ents, err := os.ReadDir(filepath.Join(e.dataDir, "edge", "blobs", "tmp"))
	if err != nil && !os.IsNotExist(err) {
		e.t.Fatal(err)
	}
	var names []string
	for _, ent := range ents {
		names = append(names, ent.Name())
	}
	return names
}

// TestEdgeObjectFillSurvivesKill: an object put into the co-located storage
// is fetched through the edge: a miss that fills and stores, then a hit.
// After kill -9 and a restart on the same data dir the object is still a
// hit (the disk cache survives), whole and with its validators, and no
// temp file is left.
func TestEdgeObjectFillSurvivesKill(t *testing.T) {
	t.Parallel()
	e := startEdge(t, edgeSpec{roles: "edge,storage"})
	data := randomBytes(21, 300_000) // 5 groups of 64 KiB, the last one short
	id := e.post(e.token("storage:write"), data).CID
	path := "/o/" + id

	wantMissStored(t, "first GET", e.get(http.MethodGet, path, nil), data)
	e.waitHit(path, data)
	wantHit(t, "GET once the fill is committed", e.get(http.MethodGet, path, nil), id, data)

	e.kill9()
	e2 := e.restartEdge()
	if tmp := e2.edgeTmp(); len(tmp) != 0 {
		t.Errorf("blobs/tmp after the restart: %v, want nothing", tmp)
	}
	wantHit(t, "GET after kill -9 and restart", e2.get(http.MethodGet, path, nil), id, data)
	r := e2.get(http.MethodGet, path, hdr("Range", "bytes=70000-70009"))
	if r.status != http.StatusPartialContent || !bytes.Equal(r.body, data[70000:70010]) {
		t.Errorf("Range on the hit after the restart: %d %q", r.status, r.body)
	}
	if r := e2.get(http.MethodGet, path, hdr("If-None-Match", `W/"`+id+`"`)); r.status != http.StatusNotModified {
		t.Errorf("If-None-Match with the weak tag: %d, want 304", r.status)
	}
}

// fakeObject is what fakeStorage serves for one id.
type fakeObject struct {
	outboard []byte // GET /o/{id}/outboard
	body     []byte // GET /o/{id}
	stall    int    // > 0: send this many body bytes, then hang until released or the client goes
}

// fakeStorage is an HTTP storage that can lie: bodies that do not hash to
// their id, outboards of those bodies, and bodies that stall midway.
type fakeStorage struct {
	*httptest.Server
	mu      sync.Mutex
	objects map[string]fakeObject
	gets    map[string]int // body GETs per id
	stalled chan struct{}  // gets one value when a stalled body reached its stall point
	release chan struct{}  // closed at test end: stalled bodies return
}

// newFakeStorage starts the fake; it is closed at test end.
func newFakeStorage(t *testing.T) *fakeStorage {
	t.Helper()
	f := &fakeStorage{objects: map[string]fakeObject{}, gets: map[string]int{},
		stalled: make(chan struct{}, 4), release: make(chan struct{})}
	f.Server = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(func() {
		close(f.release)
		f.Close()
	})
	return f
}

// put serves body under id with the outboard of outboardOf (body's own:
// a self-consistent lie when body does not hash to id).
func (f *fakeStorage) put(t *testing.T, id string, body, outboardOf []byte, stall int) {
	t.Helper()
	if _, err := store.ParseID(id); err != nil {
		t.Fatal(err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.objects[id] = fakeObject{outboard: verified.TreeOf(outboardOf).Outboard, body: body, stall: stall}
}

// bodyGets is how many body GETs id got.
func (f *fakeStorage) bodyGets(id string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.gets[id]
}

func (f *fakeStorage) serve(w http.ResponseWriter, r *http.Request) {
	rest, ok := strings.CutPrefix(r.URL.Path, "/o/")
	id, outboard := strings.CutSuffix(rest, "/outboard")
	f.mu.Lock()
	obj, found := f.objects[id]
	if ok && found && !outboard && r.Method == http.MethodGet {
		f.gets[id]++
	}
	f.mu.Unlock()
	if !ok || !found {
		http.Error(w, `{"error":{"code":"not_found","message":"no such object","corr_id":"fake"}}`, http.StatusNotFound)
		return
	}
	w.Header().Set("ETag", `"`+id+`"`)
	if outboard {
		w.Header().Set("Content-Type", "application/octet-stream")
		_, _ = w.Write(obj.outboard)
		return
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	if obj.stall == 0 || r.Method != http.MethodGet || r.Header.Get("Range") != "" {
		http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(obj.body))
		return
	}
	f.serveStalled(w, r, obj)
}

// serveStalled sends the first obj.stall bytes of a full answer, reports
// the stall and hangs until the client goes or the test ends.
func (f *fakeStorage) serveStalled(w http.ResponseWriter, r *http.Request, obj fakeObject) {
	w.Header().Set("Content-Length", strconv.Itoa(len(obj.body)))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(obj.body[:obj.stall])
	http.NewResponseController(w).Flush()
	select {
	case f.stalled <- struct{}{}:
	default:
	}
	select {
	case <-r.Context().Done():
	case <-f.release:
	}
}

// TestEdgeObjectsFromHTTPStorage: an edge-only node whose /o source is
// storage_url, a fake storage.
//
//   - A fill that stalls halfway is cut by kill -9 of the edge: after the
//     restart nothing partial is visible (blobs/tmp is empty and the next
//     GET is a miss that fills the whole object).
//   - Storage returns bytes that do not hash to the id (docs/edge.md §13):
//     one-group and four-group bodies with the outboard of those bytes,
//     a one-group body with the right outboard, and a four-group body whose
//     last group is wrong under the right outboard. No client ever receives
//     a complete body; each is 502 (etag_invalid) or aborted before its
//     declared length; nothing is stored (a second GET goes to storage
//     again).
func TestEdgeObjectsFromHTTPStorage(t *testing.T) {
	t.Parallel()
	fake := newFakeStorage(t)
	e := startEdge(t, edgeSpec{roles: "edge", table: "storage_url = \"" + fake.URL + "\""})
	t.Run("kill -9 during a fill", func(t *testing.T) {
		data := randomBytes(31, 300_000)
		id := idOf(data)
		fake.put(t, id, data, data, 128<<10)
		e = stalledFillKilled(t, e, fake, id)
		fake.put(t, id, data, data, 0)
		wantMissStored(t, "GET after the restart", e.get(http.MethodGet, "/o/"+id, nil), data)
		e.waitHit("/o/"+id, data)
	})
	t.Run("storage returns bytes that do not hash to the id", func(t *testing.T) {
		wrongBytesRows(t, e, fake)
	})
}

// stalledFillKilled starts GET /o/id on e, waits until the fake storage
// stalled halfway and the edge wrote part of the body into blobs/tmp,
// kills the edge with SIGKILL and restarts it; blobs/tmp must then be
// empty.
func stalledFillKilled(t *testing.T, e *edgeNode, fake *fakeStorage, id string) *edgeNode {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), stalledRequestLimit)
	defer cancel()
	done := make(chan error, 1)
	go func() { // the client of the stalled fill: ends when the edge dies
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, e.edgeURL("/o/"+id), nil)
		resp, err := httpClient.Do(req)
		if err == nil {
			_, err = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		done <- err
	}()
	select {
	case <-fake.stalled:
	case <-time.After(fillStartLimit):
		t.Fatalf("the fill of %s did not reach the fake storage's stall point within %s", id, fillStartLimit)
	}
	poll(t, fillStartLimit, "part of the stalled fill in blobs/tmp", func() bool { return len(e.edgeTmp()) > 0 })
	e.kill9()
	if err := <-done; err == nil {
		t.Errorf("the client of the stalled fill got a complete answer from a killed edge")
	}
	e2 := e.restartEdge()
	if tmp := e2.edgeTmp(); len(tmp) != 0 {
		t.Errorf("blobs/tmp after the restart: %v, want nothing (leftovers are deleted at start)", tmp)
	}
	return e2
}

// wrongBytesRows: the docs/edge.md §13 row "Storage returns bytes that do not hash to the
// id" in its three shapes.
func wrongBytesRows(t *testing.T, e *edgeNode, fake *fakeStorage) {
	rows := []struct {
		name           string
		right          []byte // the object the id names
		wrong          []byte // what storage sends
		outboardOfSent bool   // the outboard is that of what is sent (else the right one)
	}{
		{"one group, outboard of the wrong bytes", randomBytes(41, edgeSmall), randomBytes(42, edgeSmall), true},
		{"one group, outboard of the right bytes", randomBytes(43, edgeSmall), randomBytes(44, edgeSmall), false},
		{"last of four groups wrong, outboard of the wrong bytes", randomBytes(45, 200_000), nil, true},
		{"last of four groups wrong, outboard of the right bytes", randomBytes(46, 200_000), nil, false},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			id := idOf(row.right)
			wrong := row.wrong
			if wrong == nil {
				wrong = bytes.Clone(row.right)
				wrong[len(wrong)-1] ^= 0xff
			}
			outboardOf := row.right
			if row.outboardOfSent {
				outboardOf = wrong
			}
			fake.put(t, id, wrong, outboardOf, 0)
			for i := 1; i <= 2; i++ {
				wantNoWrongBody(t, e, id, len(row.right))
				if n := fake.bodyGets(id); n != i {
					t.Errorf("GET %d: storage saw %d body GETs, want %d (a failed fill is never cached)", i, n, i)
				}
			}
		})
	}
	if v := e.metric("ron_edge_rejects_total", `reason="etag_invalid"`); v < 1 {
		t.Errorf(`ron_edge_rejects_total{reason="etag_invalid"} = %v, want ≥ 1`, v)
	}
}

// wantNoWrongBody: GET /o/id must be a 502 upstream_unavailable with reason
// etag_invalid, or an answer cut before its declared length; never a whole
// body.
func wantNoWrongBody(t *testing.T, e *edgeNode, id string, size int) {
	t.Helper()
	r := e.get(http.MethodGet, "/o/"+id, nil)
	t.Logf("wrong bytes: %d, %d of %d bytes, body error %v", r.status, len(r.body), size, r.err)
	switch {
	case r.status == http.StatusBadGateway:
		env := wantError(t, "wrong bytes", r, http.StatusBadGateway, "upstream_unavailable")
		if got, _ := env.Error.Details["reason"].(string); got != "etag_invalid" {
			t.Errorf("details.reason %q, want etag_invalid (body %s)", got, r.body)
		}
	case r.status == http.StatusOK && r.err != nil && len(r.body) < size:
		// aborted before the declared length: the client knows it is incomplete
	default:
		t.Errorf("GET of wrong bytes: %d, %d of %d bytes, body error %v; want 502 or an aborted answer", r.status, len(r.body), size, r.err)
	}
}
