package gateway

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/ronhq/ron/store"
	"github.com/ronhq/ron/store/manifest"
)

// objectCap is object_body_max_bytes in the bad-input tests.
const objectCap = 1024

// badInputGateway is a gateway with HTTP stubs for storage, index and edge
// and a small object body cap.
type badInputGateway struct {
	*harness
	storage, index, edge *stub
}

func startBadInput(t *testing.T, inProcess bool) badInputGateway {
	storage, index, edge := newStub(nil), newStub(nil), newStub(nil)
	cfg := baseConfig()
	cfg.ObjectBodyMaxBytes = objectCap
	var loc Locals
	if inProcess {
		loc = Locals{Storage: storage.handler(), Index: index.handler(), Edge: edge.handler()}
	} else {
		cfg.StorageURL, cfg.IndexURL, cfg.EdgeURL = storage.listen(t), index.listen(t), edge.listen(t)
	}
	return badInputGateway{startGateway(t, cfg, loc), storage, index, edge}
}

// wirings runs test once with HTTP upstreams and once in-process.
func wirings(t *testing.T, test func(t *testing.T, inProcess bool)) {
	for _, inProcess := range []bool{false, true} {
		t.Run(map[bool]string{false: "http", true: "in-process"}[inProcess], func(t *testing.T) { test(t, inProcess) })
	}
}

// TestBadInputRefusedBeforeUpstream covers the docs/gateway.md §11 rows the
// shared table leaves out whose answer comes before any upstream I/O: the
// upstream the route would reach receives nothing.
func TestBadInputRefusedBeforeUpstream(t *testing.T) {
	g := startBadInput(t, false)
	id := store.Sum([]byte("x")).String()
	write := g.bearer("", "storage:write")
	big := strings.Repeat("v", 8<<10+1)
	blockOf := func(n, size int) []string { // n headers of size bytes each
		var kv []string
		for i := range n {
			kv = append(kv, fmt.Sprintf("X-Filler-%d", i), strings.Repeat("f", size))
		}
		return kv
	}
	rows := []struct {
		name         string
		method, path string
		body         []byte
		header       []string
		status       int
		code         string // "" for the Go server's own plain-text answers
		untouched    *stub
		reason       string // ron_gateway_rejected_total reason counted (tenant "other")
	}{
		{name: "Content-Length above the object cap", method: "POST", path: "/o", body: make([]byte, objectCap+1),
			header: []string{"Authorization", write}, status: 413, code: "payload_too_large", untouched: g.storage, reason: "body_cap"},
		{name: "PUT Content-Length above the object cap", method: "PUT", path: "/o/" + id, body: make([]byte, 4*objectCap),
			header: []string{"Authorization", write}, status: 413, code: "payload_too_large", untouched: g.storage, reason: "body_cap"},
		{name: "Request-Timeout -1", method: "GET", path: "/o/" + id, header: []string{"Request-Timeout", "-1"},
			status: 400, code: "bad_request", untouched: g.storage},
		{name: "Request-Timeout 0", method: "GET", path: "/o/" + id, header: []string{"Request-Timeout", "0"},
			status: 400, code: "bad_request", untouched: g.storage},
		{name: "one header value over 8 KiB", method: "GET", path: "/o/" + id, header: []string{"X-Big", big},
			status: 431, code: "bad_request", untouched: g.storage},
		{name: "header block over 16 KiB, each value under 8 KiB", method: "GET", path: "/o/" + id,
			header: blockOf(3, 6000), status: 431, code: "bad_request", untouched: g.storage},
		{name: "header block over 20 KiB", method: "GET", path: "/o/" + id,
			header: blockOf(5, 5000), status: 431, untouched: g.storage},
		{name: "edge %2e%2e segment", method: "GET", path: "/edge/%2e%2e/x", status: 400, code: "bad_request", untouched: g.edge},
		{name: "edge .. segment", method: "GET", path: "/edge/a/%2E%2E/x", status: 400, code: "bad_request", untouched: g.edge},
		{name: "edge encoded slash", method: "GET", path: "/edge/a%2Fb", status: 400, code: "bad_request", untouched: g.edge},
		{name: "POST /o Content-Encoding br", method: "POST", path: "/o", body: []byte("brotli?"),
			header: []string{"Authorization", write, "Content-Encoding", "br"}, status: 415, code: "unsupported_media_type", untouched: g.storage},
		{name: "PUT /o Content-Encoding zstd", method: "PUT", path: "/o/" + id, body: []byte("x"),
			header: []string{"Authorization", write, "Content-Encoding", "zstd"}, status: 415, code: "unsupported_media_type", untouched: g.storage},
		{name: "POST /o two codings", method: "POST", path: "/o", body: []byte("x"),
			header: []string{"Authorization", write, "Content-Encoding", "identity", "Content-Encoding", "gzip"}, status: 415, code: "unsupported_media_type", untouched: g.storage},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			before := row.untouched.count()
			counted := g.metric("gateway_rejected_total", "reason", row.reason, "tenant", "other")
			a := g.with(t).do(row.method, row.path, row.body, row.header...)
			want(t, row.name, a, row.status, row.code)
			if n := row.untouched.count(); n != before {
				t.Errorf("the upstream received %d request(s), want none", n-before)
			}
			if got := g.metric("gateway_rejected_total", "reason", row.reason, "tenant", "other"); row.reason != "" && got != counted+1 {
				t.Errorf(`ron_gateway_rejected_total{reason=%q} went from %v to %v, want +1`, row.reason, counted, got)
			}
		})
	}
}

// TestChunkedBodyOverCap: a chunked upload passing object_body_max_bytes is
// answered 413 and the upstream sees the request aborted, never a
// complete body (docs/gateway.md §3.1).
func TestChunkedBodyOverCap(t *testing.T) { wirings(t, testChunkedBodyOverCap) }

func testChunkedBodyOverCap(t *testing.T, inProcess bool) {
	g := startBadInput(t, inProcess)
	req := g.req("POST", "/o", nil, "Authorization", g.bearer("", "storage:write"))
	req.Body = io.NopCloser(bytes.NewReader(bytes.Repeat([]byte("c"), 4*objectCap)))
	req.ContentLength = -1 // chunked
	a := g.send(req)
	if a.err != nil {
		t.Fatal(a.err)
	}
	want(t, "chunked body over the cap", a, 413, "payload_too_large")
	// The link sends the request head before it reads the body, so the
	// upstream always sees the request, then its body cut short.
	eventually(t, "storage to receive the upload", func() bool { return g.storage.count() > 0 })
	for _, r := range g.storage.settled(t) {
		if r.bodyErr == nil || len(r.body) > objectCap {
			t.Errorf("storage read %d body bytes, error %v: want an aborted body of at most %d", len(r.body), r.bodyErr, objectCap)
		}
	}
}

// TestDuplicateContentLength: two differing Content-Length headers are a
// 400 of the Go server; nothing is forwarded.
func TestDuplicateContentLength(t *testing.T) {
	g := startBadInput(t, false)
	resp, body := g.raw("POST /o HTTP/1.1\r\nHost: gw\r\nAuthorization: " + g.bearer("", "storage:write") +
		"\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabcd")
	if resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("two Content-Length: %d %s, want 400", resp.StatusCode, body)
	}
	if n := g.storage.count(); n != 0 {
		t.Fatalf("storage received %d requests, want none", n)
	}
}

// TestChunkedWithContentLength: Transfer-Encoding chunked plus
// Content-Length is read as chunked, and the body reaches storage
// re-framed without the client's Content-Length.
func TestChunkedWithContentLength(t *testing.T) {
	g := startBadInput(t, false)
	resp, body := g.raw("POST /o HTTP/1.1\r\nHost: gw\r\nAuthorization: " + g.bearer("", "storage:write") +
		"\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n")
	if resp.StatusCode != http.StatusOK || string(body) != "ok" {
		t.Fatalf("chunked + Content-Length: %d %s, want storage's 200", resp.StatusCode, body)
	}
	reqs := g.storage.settled(t)
	if len(reqs) != 1 {
		t.Fatalf("storage received %d requests, want 1", len(reqs))
	}
	r := reqs[0]
	if string(r.body) != "hello world" || r.bodyErr != nil {
		t.Errorf("storage body %q (%v), want %q", r.body, r.bodyErr, "hello world")
	}
	if r.contentLength == 3 || r.header.Get("Content-Length") == "3" {
		t.Errorf("the client's Content-Length 3 reached storage: %d %v", r.contentLength, r.header)
	}
}

// TestMalformedManifestBehindName: a name whose target is a manifest with
// unknown fields, a bad id or a ".." key answers 502 malformed (docs/gateway.md §11).
func TestMalformedManifestBehindName(t *testing.T) {
	entry := store.Sum([]byte("x")).String()
	vectors := map[string]string{
		"unknown-field":       `{"entries":{"index.html":{"id":"` + entry + `","size":1,"type":"text/html"}},"extra":1,"meta":{},"version":1}`,
		"unknown-entry-field": `{"entries":{"index.html":{"id":"` + entry + `","mode":420,"size":1,"type":"text/html"}},"meta":{},"version":1}`,
		"bad-id":              `{"entries":{"index.html":{"id":"b3:XYZ","size":1,"type":"text/html"}},"meta":{},"version":1}`,
		"dots":                `{"entries":{"../index.html":{"id":"` + entry + `","size":1,"type":"text/html"}},"meta":{},"version":1}`,
		"mid-dots":            `{"entries":{"a/../index.html":{"id":"` + entry + `","size":1,"type":"text/html"}},"meta":{},"version":1}`,
	}
	var objs []object
	names := map[string]store.ID{}
	for name, m := range vectors {
		objs = append(objs, object{data: []byte(m), ctype: manifest.MediaType})
		names[name] = store.Sum([]byte(m))
	}
	storage, index := newStub(serveObjects(false, objs...)), newStub(serveIndex(nil, names))
	cfg := baseConfig()
	cfg.StorageURL, cfg.IndexURL = storage.listen(t), index.listen(t)
	g := startGateway(t, cfg, Locals{})
	for name := range vectors {
		t.Run(name, func(t *testing.T) {
			env := want(t, name, g.with(t).do("GET", "/n/"+name+"/", nil), 502, "malformed")
			if env.Error.Details["reason"] != "manifest" {
				t.Errorf("details %v, want reason manifest", env.Error.Details)
			}
		})
	}
}

// TestGzipZerosDecodedCap: 1 MiB of zeros gzip-compressed as a PUT /names
// body passes the decoded/encoded ratio: 413 decoded_cap, and the index
// never receives a complete body (docs/gateway.md §3.2).
func TestGzipZerosDecodedCap(t *testing.T) { wirings(t, testGzipZerosDecodedCap) }

func testGzipZerosDecodedCap(t *testing.T, inProcess bool) {
	g := startBadInput(t, inProcess)
	a := g.do("PUT", "/names/zeros", gzipOf(t, make([]byte, 1<<20)), "Authorization", g.bearer("", "index:write"),
		"Content-Type", "application/json", "Content-Encoding", "gzip")
	want(t, "gzip of 1 MiB of zeros", a, 413, "decoded_cap")
	eventually(t, "the index to receive the PUT", func() bool { return g.index.count() > 0 })
	for _, r := range g.index.settled(t) {
		if r.bodyErr == nil {
			t.Errorf("the index received a complete body of %d bytes", len(r.body))
		}
	}
	if got := g.metric("gateway_rejected_total", "reason", "decoded_cap", "tenant", "default"); got != 1 {
		t.Errorf(`ron_gateway_rejected_total{reason="decoded_cap",tenant="default"} = %v, want 1`, got)
	}
}
