package storage

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/roles/storage/announcing"
	"github.com/ronhq/ron/roles/storage/storageapi"
)

// TestWriteCheckOrder checks that the first failing check of
// docs/storage.md §3 answers when several fail.
func TestWriteCheckOrder(t *testing.T) {
	tr := startRole(t, func(c *Config) { c.MaxObjectBytes = 100; c.QueueCapacity = 1 })
	tr.put([]byte("hello world"), "")
	big := strings.Repeat("x", 200)
	cases := []struct {
		name   string
		q      req
		before func(tr *testRole) func()
		status int
		code   string
	}{
		{"token before id", req{method: "PUT", path: "/o/b3:xyz", token: "garbage", body: strings.NewReader("x")}, nil, 401, httpx.CodeUnauthorized},
		{"scope before id", req{method: "PUT", path: "/o/b3:xyz", token: tokInv, body: strings.NewReader("x")}, nil, 403, httpx.CodeForbidden},
		{"id before encoding", req{method: "PUT", path: "/o/b3:xyz", token: tokWrite, body: strings.NewReader("x"), header: []string{"Content-Encoding", "gzip"}}, nil, 400, httpx.CodeBadRequest},
		{"encoding before length", req{method: "POST", path: "/o", token: tokWrite, body: strings.NewReader(big), header: []string{"Content-Encoding", "gzip"}}, nil, 415, httpx.CodeUnsupportedMedia},
		{"type before length", req{method: "POST", path: "/o", token: tokWrite, body: strings.NewReader(big), header: []string{"Content-Type", "a b"}}, nil, 400, httpx.CodeBadRequest},
		{"length before draining", req{method: "POST", path: "/o", token: tokWrite, body: strings.NewReader(big)}, drain, 413, httpx.CodePayloadTooLarge},
		{"draining before busy", req{method: "POST", path: "/o", token: tokWrite, body: strings.NewReader("x")}, both(fill, drain), 503, httpx.CodeDraining},
		{"not ready before busy", req{method: "POST", path: "/o", token: tokWrite, body: strings.NewReader("x")}, both(fill, unready), 503, httpx.CodeNotReady},
		{"busy before existing", req{method: "PUT", path: "/o/" + helloID, token: tokWrite, body: strings.NewReader("hello world")}, fill, 429, httpx.CodeBusy},
		{"existing before space", req{method: "PUT", path: "/o/" + helloID, token: tokWrite, body: strings.NewReader("hello world")}, noSpace, 200, ""},
		{"space", req{method: "PUT", path: "/o/" + hex16ID, token: tokWrite, body: strings.NewReader("0123456789abcdef")}, noSpace, 507, httpx.CodeInsufficientStorage},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.before != nil {
				defer tc.before(tr)()
			}
			q := tc.q
			q.token = tr.tokenFor(q.token)
			resp, body := tr.do(q)
			checkRow(t, row{status: tc.status, code: tc.code}, resp, body)
		})
	}
}

func drain(tr *testRole) func() {
	tr.SetDraining(true)
	return func() { tr.SetDraining(false) }
}

func unready(tr *testRole) func() {
	last := tr.lastProbe.Swap(0)
	return func() { tr.lastProbe.Store(last) }
}

// fill takes the one queue place (capacity 1) so the next request is busy.
func fill(tr *testRole) func() {
	release, err := tr.work.enter(context.Background(), tr.work.put)
	if err != nil {
		tr.t.Fatal(err)
	}
	return release
}

func noSpace(tr *testRole) func() {
	cfg := *tr.Cfg.Load()
	old := cfg
	cfg.MinFreeBytes = 1 << 62
	if err := tr.Apply(cfg); err != nil {
		tr.t.Fatal(err)
	}
	return func() { _ = tr.Apply(old) }
}

func both(a, b func(*testRole) func()) func(*testRole) func() {
	return func(tr *testRole) func() {
		ua, ub := a(tr), b(tr)
		return func() { ub(); ua() }
	}
}

// TestExpectContinue: an error answers before the body is sent.
func TestExpectContinue(t *testing.T) {
	tr := startRole(t, func(c *Config) { c.MaxObjectBytes = 100 })
	tok := tr.token(storageapi.ScopeWrite)
	for _, tc := range []struct{ hdr string }{
		{"Authorization: Bearer garbage\r\nContent-Length: 5\r\n"},
		{"Authorization: Bearer " + tok + "\r\nContent-Length: 500\r\n"},
		{"Authorization: Bearer " + tok + "\r\nContent-Length: 5\r\nContent-Encoding: gzip\r\n"},
	} {
		resp, body := rawRequest(t, tr, "POST /o HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nConnection: close\r\n"+tc.hdr+"\r\n")
		if resp.StatusCode < 400 {
			t.Fatalf("%q: got %d %s before sending the body", tc.hdr, resp.StatusCode, body)
		}
	}
}

func TestWriteReplies(t *testing.T) {
	tr := startRole(t, nil)
	tok := tr.token(storageapi.ScopeWrite)
	for i, want := range []struct {
		status  int
		created bool
	}{{201, true}, {200, false}} {
		resp, body := tr.do(req{method: "PUT", path: "/o", token: tok, body: strings.NewReader("hello world")})
		var got putReply
		if err := json.Unmarshal(body, &got); err != nil || resp.StatusCode != want.status || got != (putReply{CID: helloID, Size: 11, Created: want.created}) {
			t.Fatalf("write %d: %d %s", i, resp.StatusCode, body)
		}
		if loc := resp.Header.Get("Location"); want.created != (loc == "/o/"+helloID) {
			t.Fatalf("write %d: Location %q", i, loc)
		}
	}
	resp, body := tr.do(req{method: "PUT", path: "/o/" + helloID, token: tok, body: strings.NewReader("hello world")})
	if resp.StatusCode != 200 || !bytes.Contains(body, []byte(`"created":false`)) {
		t.Fatalf("PUT existing: %d %s", resp.StatusCode, body)
	}
	recs := tr.sink.wait(t, func(r []announcing.Record) bool { return len(r) >= 3 })
	if recs[0].ID != mustID(t, helloID) || recs[0].TTL != tr.Cfg.Load().ProviderTTL {
		t.Fatalf("announced %v", recs)
	}
}

func TestWriteMetrics(t *testing.T) {
	tr := startRole(t, func(c *Config) { c.MaxObjectBytes = 1000; c.QueueCapacity = 1 })
	tok := tr.token(storageapi.ScopeWrite)
	post := func(body string, h ...string) {
		tr.do(req{method: "POST", path: "/o", token: tok, body: strings.NewReader(body), header: h})
	}
	post("hello world")
	post("hello world")
	tr.do(req{method: "PUT", path: "/o/" + bigID, token: tok, body: strings.NewReader("nope")})
	post(strings.Repeat("x", 1001))
	release := noSpace(tr)
	post("new")
	release()
	release = fill(tr)
	post("busy")
	release()
	for result, want := range map[string]float64{"created": 1, "existing": 1, "hash_mismatch": 1, "too_large": 1, "no_space": 1} {
		if got := tr.metric(series("storage_writes_total", "result", result)); got != want {
			t.Errorf("writes_total{result=%s} = %v, want %v", result, got, want)
		}
	}
	if got := tr.metric(series("busy_rejections_total", "endpoint", "/o")); got != 1 {
		t.Errorf("busy_rejections_total = %v", got)
	}
	if got := tr.metric(series("storage_bytes_in_total", "route", "/o")); got != 22 {
		t.Errorf("bytes_in_total = %v", got)
	}
}

func TestAuthFailureMetrics(t *testing.T) {
	tr := startRole(t, nil)
	for _, tok := range []string{"", "garbage", tr.expiredToken(), tr.token(storageapi.ScopeInventory)} {
		tr.do(req{method: "POST", path: "/o", token: tok, body: strings.NewReader("x")})
	}
	for _, kind := range []string{"missing", "invalid", "expired", "scope"} {
		if got := tr.metric(series("storage_auth_failures_total", "kind", kind)); got != 1 {
			t.Errorf("auth_failures_total{kind=%s} = %v", kind, got)
		}
	}
}

func TestReadVerifiesChunks(t *testing.T) {
	tr := startRole(t, nil)
	tr.put(bigBody(), "")
	resp, body := tr.do(req{method: "GET", path: "/o/" + bigID})
	if resp.StatusCode != 200 || !bytes.Equal(body, bigBody()) {
		t.Fatalf("GET: %d, %d bytes", resp.StatusCode, len(body))
	}
	resp, body = tr.do(req{method: "GET", path: "/o/" + bigID, header: []string{"Range", "bytes=65530-65540"}})
	if resp.StatusCode != 206 || !bytes.Equal(body, bigBody()[65530:65541]) {
		t.Fatalf("range across chunks: %d %v", resp.StatusCode, body)
	}
	if got := tr.metric(series("storage_chunks_verified_total")); got != 4 {
		t.Fatalf("chunks_verified_total = %v, want 4", got)
	}
}

func TestCorruptAfterHeadersAborts(t *testing.T) {
	tr := startRole(t, nil)
	tr.put(bigBody(), "")
	id := mustID(t, bigID)
	flipByte(t, tr, id, 70000)
	hr, _ := http.NewRequest("GET", tr.base+"/o/"+bigID, nil)
	resp, err := tr.http.Do(hr)
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || err == nil || len(body) >= 102400 {
		t.Fatalf("corrupt chunk 1: %d, %d bytes, err %v", resp.StatusCode, len(body), err)
	}
	if got := tr.metric(series("storage_corruptions_total", "kind", "data")); got != 1 {
		t.Fatalf("corruptions_total = %v", got)
	}
	resp2, body2 := tr.do(req{method: "GET", path: "/o/" + bigID})
	wantError(t, resp2, body2, 404, httpx.CodeNotFound)
	tr.sink.wait(t, func(r []announcing.Record) bool { return slices.Contains(r, announcing.Record{ID: id}) })
}

func TestInventoryPaging(t *testing.T) {
	tr := startRole(t, nil)
	var ids []string
	for i := range 5 {
		ids = append(ids, tr.put([]byte(fmt.Sprint("object ", i)), ""))
	}
	tr.put(nil, "")
	ids = append(ids, emptyID)
	slices.Sort(ids)
	tok := tr.token(storageapi.ScopeInventory)
	var got []string
	after := ""
	for page := 0; ; page++ {
		resp, body := tr.do(req{method: "GET", path: "/inventory?limit=2&after=" + after, token: tok})
		var rep inventoryReply
		if err := json.Unmarshal(body, &rep); err != nil || resp.StatusCode != 200 {
			t.Fatalf("page %d: %d %s", page, resp.StatusCode, body)
		}
		for _, it := range rep.Items {
			got = append(got, it.ID)
		}
		if rep.Next == nil {
			if len(rep.Items) == 2 {
				t.Fatalf("page %d: full page without next", page)
			}
			break
		}
		if len(rep.Items) != 2 || *rep.Next != rep.Items[1].ID {
			t.Fatalf("page %d: next %v with %d items", page, *rep.Next, len(rep.Items))
		}
		after = *rep.Next
	}
	if !slices.Equal(got, ids) {
		t.Fatalf("inventory %v, want %v", got, ids)
	}
	resp, body := tr.do(req{method: "GET", path: "/inventory", token: tr.token(storageapi.ScopeWrite)})
	wantError(t, resp, body, 403, httpx.CodeForbidden)
}

func TestInventoryHasOrder(t *testing.T) {
	tr := startRole(t, nil)
	a := tr.put([]byte("a"), "")
	b := tr.put([]byte("b"), "")
	q := fmt.Sprintf(`{"ids":[%q,%q,%q,%q]}`, b, helloID, a, b)
	resp, body := tr.do(req{method: "POST", path: "/inventory/has", token: tr.token(storageapi.ScopeAdmin), body: strings.NewReader(q)})
	var rep struct{ Present []string }
	if err := json.Unmarshal(body, &rep); err != nil || resp.StatusCode != 200 || !slices.Equal(rep.Present, []string{b, a, b}) {
		t.Fatalf("has: %d %s", resp.StatusCode, body)
	}
}

func TestDelete(t *testing.T) {
	tr := startRole(t, nil)
	tr.put([]byte("hello world"), "")
	path := "/o/" + helloID
	resp, body := tr.do(req{method: "DELETE", path: path, token: tr.token(storageapi.ScopeWrite)})
	wantError(t, resp, body, 403, httpx.CodeForbidden)
	resp, body = tr.do(req{method: "DELETE", path: path})
	wantError(t, resp, body, 401, httpx.CodeUnauthorized)
	if resp, _ = tr.do(req{method: "DELETE", path: path, token: tr.token(storageapi.ScopeAdmin)}); resp.StatusCode != 204 {
		t.Fatalf("DELETE: %d", resp.StatusCode)
	}
	resp, body = tr.do(req{method: "GET", path: path})
	wantError(t, resp, body, 404, httpx.CodeNotFound)
	resp, body = tr.do(req{method: "DELETE", path: path, token: tr.token("admin")})
	wantError(t, resp, body, 404, httpx.CodeNotFound)
	tr.sink.wait(t, func(r []announcing.Record) bool { return slices.Contains(r, announcing.Record{ID: mustID(t, helloID)}) })
}

func TestPrivateReads(t *testing.T) {
	tr := startRole(t, func(c *Config) { c.PublicReads = false })
	tr.put([]byte("hello world"), "")
	for _, path := range []string{"/o/" + helloID, "/o/" + helloID + "/outboard", "/o/" + helloID + "/slice?start=0&len=5"} {
		resp, body := tr.do(req{method: "GET", path: path})
		wantError(t, resp, body, 401, httpx.CodeUnauthorized)
		resp, body = tr.do(req{method: "GET", path: path, token: tr.token(storageapi.ScopeWrite)})
		wantError(t, resp, body, 403, httpx.CodeForbidden)
		if resp, body = tr.do(req{method: "GET", path: path, token: tr.token(storageapi.ScopeRead)}); resp.StatusCode != 200 {
			t.Fatalf("%s with storage:read: %d %s", path, resp.StatusCode, body)
		}
	}
	resp, body := tr.do(req{method: "GET", path: "/o/B3:x"})
	wantError(t, resp, body, 401, httpx.CodeUnauthorized) // token before id syntax
	cfg := *tr.Cfg.Load()
	cfg.PublicReads = true
	if err := tr.Apply(cfg); err != nil {
		t.Fatal(err)
	}
	if resp, _ = tr.do(req{method: "GET", path: "/o/" + helloID}); resp.StatusCode != 200 {
		t.Fatalf("public after reload: %d", resp.StatusCode)
	}
}

func TestApply(t *testing.T) {
	tr := startRole(t, nil)
	cfg := *tr.Cfg.Load()
	cfg.QueueTimeout = 1500 * time.Millisecond
	cfg.UploadStallTimeout = time.Second
	if err := tr.Apply(cfg); err != nil {
		t.Fatal(err)
	}
	if got := tr.work.q.Timeout(); got != cfg.QueueTimeout {
		t.Fatalf("queue timeout %v", got)
	}
	bad := cfg
	bad.Listen = "127.0.0.1:1"
	bad.GetWorkers = 3
	err := tr.Apply(bad)
	if err == nil || !strings.Contains(err.Error(), "storage.listen") || !strings.Contains(err.Error(), "storage.get_workers") {
		t.Fatalf("Apply(listen) = %v", err)
	}
	if tr.Cfg.Load().Listen != cfg.Listen {
		t.Fatal("rejected config was applied")
	}
	if err := tr.Apply("nope"); err == nil {
		t.Fatal("Apply accepted a non-Config")
	}
}

func TestReadiness(t *testing.T) {
	tr := startRole(t, nil)
	tr.put([]byte("hello world"), "")
	if rd := tr.Ready(context.Background()); !rd.Ready() {
		t.Fatalf("fresh role not ready: %+v", rd)
	}
	tmp := filepath.Join(tr.opt.DataDir, "storage", "tmp")
	if err := os.RemoveAll(tmp); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(tmp, nil, 0o600); err != nil { // probes now fail
		t.Fatal(err)
	}
	tr.probe(context.Background())
	if rd := tr.Ready(context.Background()); !slices.Equal(rd.Missing, []string{"storage:disk"}) {
		t.Fatalf("failed probe: %+v", rd)
	}
	resp, body := tr.do(req{method: "POST", path: "/o", token: tr.token(storageapi.ScopeWrite), body: strings.NewReader("x")})
	wantError(t, resp, body, 503, httpx.CodeNotReady)
	if resp, _ = tr.do(req{method: "GET", path: "/o/" + helloID}); resp.StatusCode != 200 {
		t.Fatalf("reads must continue: %d", resp.StatusCode)
	}
	_ = os.Remove(tmp)
	_ = os.Mkdir(tmp, 0o750)
	tr.probe(context.Background())
	defer noSpace(tr)()
	if rd := tr.Ready(context.Background()); len(rd.Missing) != 0 || !slices.Equal(rd.Degraded, []string{"storage:disk"}) {
		t.Fatalf("low space: %+v", rd)
	}
}

func TestMemoryFullDegraded(t *testing.T) {
	tr := startRole(t, func(c *Config) { c.Engine = "memory"; c.MemoryMaxBytes = 11 })
	if rd := tr.Ready(context.Background()); !rd.Ready() {
		t.Fatalf("empty memory engine: %+v", rd)
	}
	tr.put([]byte("hello world"), "")
	if rd := tr.Ready(context.Background()); !slices.Equal(rd.Degraded, []string{"storage:disk"}) {
		t.Fatalf("full memory engine: %+v", rd)
	}
}

func TestDraining(t *testing.T) {
	tr := startRole(t, nil)
	tr.put([]byte("hello world"), "")
	tr.Drain()
	if rd := tr.Ready(context.Background()); !slices.Equal(rd.Missing, []string{"storage"}) {
		t.Fatalf("draining: %+v", rd)
	}
	resp, body := tr.do(req{method: "PUT", path: "/o/" + hex16ID, token: tr.token(storageapi.ScopeWrite), body: strings.NewReader("0123456789abcdef")})
	if e := wantError(t, resp, body, 503, httpx.CodeDraining); resp.Header.Get("Retry-After") != "5" || e.RetryAfter != 5 {
		t.Fatalf("Retry-After %q", resp.Header.Get("Retry-After"))
	}
	if resp, _ = tr.do(req{method: "GET", path: "/o/" + helloID}); resp.StatusCode != 200 {
		t.Fatalf("reads while draining: %d", resp.StatusCode)
	}
}

// failingBody yields some bytes, then fails like a reset connection.
type failingBody struct{ n int }

func (b *failingBody) Read(p []byte) (int, error) {
	if b.n > 0 {
		n := min(b.n, len(p))
		b.n -= n
		return n, nil
	}
	return 0, errors.New("connection reset by peer")
}

// TestClientGoneAborts: a body that fails mid-upload stores nothing, sends
// no response (the handler aborts) and counts result="aborted".
func TestClientGoneAborts(t *testing.T) {
	tr := startRole(t, nil)
	hr := httptest.NewRequest("POST", "/o", &failingBody{n: 3 << 20})
	hr.ContentLength = 10 << 20
	hr.Header.Set("Authorization", "Bearer "+tr.token(storageapi.ScopeWrite))
	func() {
		defer func() {
			if p := recover(); p != http.ErrAbortHandler {
				t.Fatalf("recovered %v, want http.ErrAbortHandler", p)
			}
		}()
		tr.Server().Echo().ServeHTTP(httptest.NewRecorder(), hr)
	}()
	if got := tr.metric(series("storage_writes_total", "result", "aborted")); got != 1 {
		t.Fatalf("aborted = %v", got)
	}
	if infos, err := tr.engine.List(context.Background(), nil, 0); err != nil || len(infos) != 0 {
		t.Fatalf("stored %v (%v)", infos, err)
	}
	if ents, _ := os.ReadDir(filepath.Join(tr.opt.DataDir, "storage", "tmp")); len(ents) != 0 {
		t.Fatalf("temp files left: %v", ents)
	}
}
