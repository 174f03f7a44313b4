package e2e

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// rawResult is an answer read off a raw TCP connection.
type rawResult struct {
	httpResult
	readErr error // set when no answer could be read
}

// rawRequest writes req (already framed) to a new connection, in a
// goroutine so that a server answering before the whole body arrived does not
// block the write, and reads one answer.
func rawRequest(t *testing.T, addr string, req []byte, limit time.Duration) rawResult {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { // ends when the write ends or the connection is closed below
		defer close(done)
		_, _ = conn.Write(req)
	}()
	defer func() { conn.Close(); <-done }()
	_ = conn.SetReadDeadline(time.Now().Add(limit))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		return rawResult{readErr: err}
	}
	defer resp.Body.Close()
	body, rerr := io.ReadAll(resp.Body)
	return rawResult{httpResult: httpResult{status: resp.StatusCode, header: resp.Header, body: body, err: rerr}}
}

// holdUpload starts a POST /o that sends its headers and a few body bytes,
// then stays silent; the connection is closed at test end.
func holdUpload(t *testing.T, n *node, tok string) net.Conn {
	t.Helper()
	conn, err := net.Dial("tcp", n.storage)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	if _, err := fmt.Fprintf(conn, "POST /o HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nContent-Length: 1000\r\n\r\n0123456789", tok); err != nil {
		t.Fatal(err)
	}
	return conn
}

func wantRetryAfter(t *testing.T, what string, r httpResult, want string) {
	t.Helper()
	if got := r.header.Get("Retry-After"); got != want {
		t.Errorf("%s: Retry-After %q, want %q", what, got, want)
	}
}

// TestBadInput sends every row of docs/storage.md §10 over the wire.
func TestBadInput(t *testing.T) {
	t.Parallel()
	n := startNode(t, nodeOpts{args: []string{"--storage.max-object-bytes", "1MiB", "--storage.upload-stall-timeout", "1s"}})
	wtok := n.token("storage:write")
	itok := n.token("storage:read_inventory")
	auth := func(tok string, kv ...string) http.Header {
		return hdr(append([]string{"Authorization", "Bearer " + tok}, kv...)...)
	}
	data := randomBytes(21, 100_000)
	id := n.post(wtok, data).CID
	hexID := strings.TrimPrefix(id, "b3:")
	size := strconv.Itoa(len(data))
	u := n.url("/o/" + id)

	t.Run("ids", func(t *testing.T) {
		bad := map[string]string{
			"B3: prefix":        "B3:" + hexID,
			"uppercase hex":     "b3:" + strings.ToUpper(hexID),
			"63 hex":            "b3:" + hexID[:63],
			"65 hex":            "b3:" + hexID + "0",
			"bare hex":          hexID,
			"non-hex":           "b3:" + strings.Repeat("g", 64),
			"surrounding space": "%20" + id + "%20",
		}
		for name, p := range bad {
			wantError(t, "GET "+name, do(t, http.MethodGet, n.url("/o/"+p), nil, nil), http.StatusBadRequest, "bad_request")
			wantError(t, "GET outboard "+name, do(t, http.MethodGet, n.url("/o/"+p+"/outboard"), nil, nil), http.StatusBadRequest, "bad_request")
			wantError(t, "GET slice "+name, do(t, http.MethodGet, n.url("/o/"+p+"/slice?start=0&len=1"), nil, nil), http.StatusBadRequest, "bad_request")
			wantError(t, "PUT "+name, do(t, http.MethodPut, n.url("/o/"+p), auth(wtok), []byte("x")), http.StatusBadRequest, "bad_request")
		}
		if r := do(t, http.MethodHead, n.url("/o/"+hexID), nil, nil); r.status != http.StatusBadRequest {
			t.Errorf("HEAD bare hex: %d, want 400", r.status)
		}
	})

	t.Run("paths and methods", func(t *testing.T) {
		for _, p := range []string{"/o/" + id + "/", "/o/" + id + "/other", "/nope", "/o/" + id + "/outboard/x"} {
			wantError(t, "GET "+p, do(t, http.MethodGet, n.url(p), nil, nil), http.StatusNotFound, "not_found")
		}
		r := do(t, http.MethodPatch, u, auth(wtok), []byte("x"))
		wantError(t, "PATCH /o/{b3}", r, http.StatusMethodNotAllowed, "method_not_allowed")
		wantAllow(t, "PATCH /o/{b3}", r, "GET", "HEAD", "PUT", "DELETE")
		r = do(t, http.MethodGet, n.url("/o"), nil, nil)
		wantError(t, "GET /o", r, http.StatusMethodNotAllowed, "method_not_allowed")
		wantAllow(t, "GET /o", r, "POST", "PUT")
	})

	t.Run("hash mismatch", func(t *testing.T) {
		body := []byte("not the bytes of that id")
		r := do(t, http.MethodPut, u, auth(wtok), body) // id held: 200 without reading
		if r.status != http.StatusOK {
			t.Errorf("PUT of a held id: %d, want 200 created:false (%s)", r.status, r.body)
		}
		other := "b3:" + strings.Repeat("ab", 32)
		env := wantError(t, "PUT body hashing to another id", do(t, http.MethodPut, n.url("/o/"+other), auth(wtok), body), http.StatusConflict, "hash_mismatch")
		if env.Error.Details["expected"] != other || env.Error.Details["actual"] != idOf(body) {
			t.Errorf("hash_mismatch details %v, want expected %s actual %s", env.Error.Details, other, idOf(body))
		}
		for _, x := range []string{other, idOf(body)} {
			if r := do(t, http.MethodHead, n.url("/o/"+x), nil, nil); r.status != http.StatusNotFound {
				t.Errorf("after a mismatch, HEAD %s: %d, want 404 (nothing stored)", x[:11], r.status)
			}
		}
		// PUT /o/{b3} with the right bytes is stored.
		good := []byte("the right bytes")
		if r := do(t, http.MethodPut, n.url("/o/"+idOf(good)), auth(wtok), good); r.status != http.StatusCreated || r.header.Get("Location") != "/o/"+idOf(good) {
			t.Errorf("PUT /o/{b3} matching: %d, Location %q", r.status, r.header.Get("Location"))
		}
	})

	t.Run("too large", func(t *testing.T) {
		const max = 1 << 20
		r := rawRequest(t, n.storage, fmt.Appendf(nil, "POST /o HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nContent-Length: %d\r\n\r\n", wtok, max+1), 10*time.Second)
		if r.readErr != nil {
			t.Fatalf("Content-Length above max: no answer before the body: %v", r.readErr)
		}
		wantError(t, "Content-Length above max_object_bytes", r.httpResult, http.StatusRequestEntityTooLarge, "payload_too_large")
		// Exactly max is fine.
		n.post(wtok, randomBytes(22, max))
		// Chunked body growing past the cap.
		var req bytes.Buffer
		fmt.Fprintf(&req, "POST /o HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nTransfer-Encoding: chunked\r\n\r\n", wtok)
		big := randomBytes(23, max+1)
		fmt.Fprintf(&req, "%x\r\n", len(big))
		req.Write(big)
		req.WriteString("\r\n0\r\n\r\n")
		r = rawRequest(t, n.storage, req.Bytes(), 10*time.Second)
		if r.readErr != nil {
			t.Fatalf("chunked body past max: %v", r.readErr)
		}
		wantError(t, "chunked body past max_object_bytes", r.httpResult, http.StatusRequestEntityTooLarge, "payload_too_large")
		if r := do(t, http.MethodHead, n.url("/o/"+idOf(big)), nil, nil); r.status != http.StatusNotFound {
			t.Errorf("the too-large body was stored: %d", r.status)
		}
	})

	t.Run("Content-Length malformed", func(t *testing.T) {
		for _, cl := range []string{"abc", "-1", "1x"} {
			r := rawRequest(t, n.storage, fmt.Appendf(nil, "POST /o HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nContent-Length: %s\r\n\r\n", wtok, cl), 5*time.Second)
			if r.readErr != nil || r.status != http.StatusBadRequest {
				t.Errorf("Content-Length %s: %d (%v), want 400", cl, r.status, r.readErr)
			} else if ct := r.header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
				t.Errorf("Content-Length %s: Content-Type %q, want net/http's plain text", cl, ct)
			}
		}
	})

	t.Run("content encoding and type", func(t *testing.T) {
		body := []byte("typed body")
		for _, h := range [][]string{{"Content-Encoding", "gzip"}, {"Content-Encoding", "br"}, {"Content-Type", "multipart/form-data; boundary=xyz"}} {
			wantError(t, h[0]+": "+h[1], do(t, http.MethodPost, n.url("/o"), auth(wtok, h...), body), http.StatusUnsupportedMediaType, "unsupported_media_type")
		}
		for _, ct := range []string{"text/", ";;", "text/plain; charset", "text/" + strings.Repeat("x", 251)} {
			wantError(t, "Content-Type "+ct[:min(len(ct), 20)], do(t, http.MethodPost, n.url("/o"), auth(wtok, "Content-Type", ct), body), http.StatusBadRequest, "bad_request")
		}
		if r := do(t, http.MethodHead, n.url("/o/"+idOf(body)), nil, nil); r.status != http.StatusNotFound {
			t.Errorf("a refused body was stored: %d", r.status)
		}
		// identity is allowed; form-urlencoded is treated as absent; others are kept.
		cases := []struct{ ct, enc, want string }{
			{"application/x-www-form-urlencoded", "identity", "application/octet-stream"},
			{"text/plain; charset=utf-8", "", "text/plain; charset=utf-8"},
		}
		for i, c := range cases {
			b := fmt.Appendf(nil, "typed body %d", i)
			h := auth(wtok, "Content-Type", c.ct)
			if c.enc != "" {
				h.Set("Content-Encoding", c.enc)
			}
			if r := do(t, http.MethodPost, n.url("/o"), h, b); r.status != http.StatusCreated {
				t.Errorf("Content-Type %q: %d %s", c.ct, r.status, r.body)
				continue
			}
			if r := do(t, http.MethodGet, n.url("/o/"+idOf(b)), nil, nil); r.header.Get("Content-Type") != c.want {
				t.Errorf("stored with %q, served as %q, want %q", c.ct, r.header.Get("Content-Type"), c.want)
			}
		}
	})

	t.Run("stalled upload", func(t *testing.T) {
		before := n.metric("ron_io_timeouts_total", `role="storage"`, `op="read_body"`)
		start := time.Now()
		r := rawRequest(t, n.storage, fmt.Appendf(nil, "POST /o HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nContent-Length: 100\r\n\r\n0123456789", wtok), 10*time.Second)
		if r.readErr != nil {
			t.Fatalf("stalled upload: no answer: %v", r.readErr)
		}
		wantError(t, "upload silent for upload_stall_timeout", r.httpResult, http.StatusRequestTimeout, "timeout")
		t.Logf("408 after %s (upload_stall_timeout 1s)", time.Since(start).Round(time.Millisecond))
		if after := n.metric("ron_io_timeouts_total", `role="storage"`, `op="read_body"`); after < max(before, 0)+1 {
			t.Errorf(`ron_io_timeouts_total{op="read_body"}: %v → %v, want +1`, before, after)
		}
		poll(t, 5*time.Second, "tmp/ to be empty after a stalled upload", func() bool { return len(n.partialTmp()) == 0 })
	})

	t.Run("client disconnects", func(t *testing.T) {
		aborted := func() float64 { return max(n.metric("ron_storage_writes_total", `result="aborted"`), 0) }
		before := aborted()
		conn, err := net.Dial("tcp", n.storage)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(conn, "POST /o HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nContent-Length: 1000000\r\n\r\n", wtok)
		conn.Write(randomBytes(24, 300_000))
		conn.Close()
		poll(t, 5*time.Second, `ron_storage_writes_total{result="aborted"} to grow`, func() bool { return aborted() >= before+1 })
		poll(t, 5*time.Second, "tmp/ to be empty after a disconnect", func() bool { return len(n.partialTmp()) == 0 })
		inv := n.inventory(itok)
		for got := range inv {
			if got == idOf(randomBytes(24, 300_000)) {
				t.Errorf("a partial upload was stored")
			}
		}
	})

	t.Run("empty body", func(t *testing.T) {
		r := do(t, http.MethodPost, n.url("/o"), auth(wtok), nil)
		if r.status != http.StatusCreated || !bytes.Contains(r.body, []byte(`"cid":"`+emptyID+`","size":0,"created":true`)) {
			t.Errorf("empty POST: %d %s", r.status, r.body)
		}
		for _, rg := range []string{"", "bytes=0-0", "bytes=-5", "bytes=5-"} {
			r := do(t, http.MethodGet, n.url("/o/"+emptyID), hdr("Range", rg), nil)
			if r.status != http.StatusOK || len(r.body) != 0 || r.header.Get("Content-Length") != "0" {
				t.Errorf("empty object, Range %q: %d, Content-Length %q, want 200 and 0", rg, r.status, r.header.Get("Content-Length"))
			}
		}
	})

	t.Run("tokens", func(t *testing.T) {
		expired := n.token("storage:write", "--ttl", "1ns")
		failures := func(kind string) float64 {
			return max(n.metric("ron_storage_auth_failures_total", `kind="`+kind+`"`), 0)
		}
		beforeExpired := failures("expired")
		cases := []struct {
			name   string
			h      http.Header
			status int
			code   string
		}{
			{"no token", nil, http.StatusUnauthorized, "unauthorized"},
			{"not a bearer token", hdr("Authorization", "Basic Zm9vOmJhcg=="), http.StatusUnauthorized, "unauthorized"},
			{"garbage token", auth("not-a-token"), http.StatusUnauthorized, "unauthorized"},
			{"badly signed token", auth(wtok[:len(wtok)-4] + "AAAA"), http.StatusUnauthorized, "unauthorized"},
			{"expired token", auth(expired), http.StatusUnauthorized, "unauthorized"},
			{"token lacking the scope", auth(itok), http.StatusForbidden, "forbidden"},
		}
		for _, c := range cases {
			for _, m := range []string{http.MethodPost, http.MethodPut} {
				path := "/o"
				if m == http.MethodPut {
					path = "/o/" + idOf([]byte(c.name))
				}
				r := do(t, m, n.url(path), c.h, []byte(c.name))
				wantError(t, m+" "+c.name, r, c.status, c.code)
				if c.status == http.StatusUnauthorized && !strings.HasPrefix(r.header.Get("WWW-Authenticate"), "Bearer") {
					t.Errorf("%s %s: WWW-Authenticate %q, want Bearer", m, c.name, r.header.Get("WWW-Authenticate"))
				}
			}
		}
		if got := failures("expired"); got < beforeExpired+2 {
			t.Errorf(`ron_storage_auth_failures_total{kind="expired"}: %v → %v, want +2`, beforeExpired, got)
		}
		wantError(t, "inventory without token", do(t, http.MethodGet, n.url("/inventory"), nil, nil), http.StatusUnauthorized, "unauthorized")
		wantError(t, "inventory with a write token", do(t, http.MethodGet, n.url("/inventory"), auth(wtok), nil), http.StatusForbidden, "forbidden")
		wantError(t, "DELETE with a write token", do(t, http.MethodDelete, u, auth(wtok), nil), http.StatusForbidden, "forbidden")
	})

	t.Run("ranges", func(t *testing.T) {
		for _, rg := range []string{"bytes=5-2", "bytes=x-", "bytes=", "bytes=" + size + "-", "bytes=-0"} {
			r := do(t, http.MethodGet, u, hdr("Range", rg), nil)
			wantError(t, "Range "+rg, r, http.StatusRequestedRangeNotSatisfiable, "range_not_satisfiable")
			if got := r.header.Get("Content-Range"); got != "bytes */"+size {
				t.Errorf("Range %s: Content-Range %q, want bytes */%s", rg, got, size)
			}
		}
		var many []string
		for i := range 17 {
			many = append(many, fmt.Sprintf("%d-%d", i, i))
		}
		full := [][]string{
			{"Range", "items=0-1"},
			{"Range", "bytes=" + strings.Join(many, ",")},
			{"Range", "bytes=0-99999,0-1"},
			{"Range", "bytes=0-9", "If-Range", `W/"` + id + `"`},
			{"Range", "bytes=0-9", "If-Range", `"b3:other"`},
			{"Range", "bytes=0-9", "If-Range", "Mon, 02 Jan 2006 15:04:05 GMT"},
		}
		for _, h := range full {
			r := do(t, http.MethodGet, u, hdr(h...), nil)
			if r.status != http.StatusOK || !bytes.Equal(r.body, data) {
				t.Errorf("%v: %d, %d bytes; want 200 and the whole object", h, r.status, len(r.body))
			}
		}
		for _, rg := range []string{"bytes=0-9", "bytes=5-2", "bytes=-0"} {
			if r := do(t, http.MethodHead, u, hdr("Range", rg), nil); r.status != http.StatusOK || r.header.Get("Content-Length") != size {
				t.Errorf("HEAD with Range %s: %d, Content-Length %q; want 200 and %s", rg, r.status, r.header.Get("Content-Length"), size)
			}
		}
	})

	t.Run("conditionals", func(t *testing.T) {
		for _, inm := range []string{`"` + id + `"`, `W/"` + id + `"`, "*"} {
			if r := do(t, http.MethodGet, u, hdr("If-None-Match", inm), nil); r.status != http.StatusNotModified || len(r.body) != 0 {
				t.Errorf("If-None-Match %s: %d, want 304", inm, r.status)
			}
		}
		wantError(t, `If-Match "other"`, do(t, http.MethodGet, u, hdr("If-Match", `"other"`), nil), http.StatusPreconditionFailed, "precondition_failed")
	})

	t.Run("inventory", func(t *testing.T) {
		for _, q := range []string{"after=xyz", "limit=0", "limit=10001", "limit=abc", "after=" + strings.ToUpper(id)} {
			wantError(t, "inventory "+q, do(t, http.MethodGet, n.url("/inventory?"+q), auth(itok), nil), http.StatusBadRequest, "bad_request")
		}
		for _, q := range []string{"limit=1", "limit=10000", "foo=bar", "after=" + id + "&x=y"} {
			if r := do(t, http.MethodGet, n.url("/inventory?"+q), auth(itok), nil); r.status != http.StatusOK {
				t.Errorf("inventory %s: %d %s", q, r.status, r.body)
			}
		}
		ids1001 := make([]string, 1001)
		for i := range ids1001 {
			ids1001[i] = `"` + id + `"`
		}
		hasCases := []struct{ body, code string }{
			{`{"ids":[]}`, "bad_request"},
			{`{"ids":[` + strings.Join(ids1001, ",") + `]}`, "bad_request"},
			{`{"ids":["b3:nope"]}`, "bad_request"},
			{`{"ids":["` + id + `"],"extra":1}`, "malformed"},
			{`{"ids":["` + id + `"]`, "malformed"},
			{`not json`, "malformed"},
		}
		for _, c := range hasCases {
			r := do(t, http.MethodPost, n.url("/inventory/has"), auth(itok, "Content-Type", "application/json"), []byte(c.body))
			wantError(t, "has "+c.body[:min(len(c.body), 30)], r, http.StatusBadRequest, c.code)
		}
		absent := "b3:" + strings.Repeat("0", 64)
		r := do(t, http.MethodPost, n.url("/inventory/has?unknown=1"), auth(itok, "Content-Type", "application/json"), []byte(`{"ids":["`+absent+`","`+id+`"]}`))
		if r.status != http.StatusOK || !bytes.Contains(r.body, []byte(`"present":["`+id+`"]`)) {
			t.Errorf("has: %d %s", r.status, r.body)
		}
	})

	t.Run("unknown query parameters", func(t *testing.T) {
		if r := do(t, http.MethodGet, u+"?foo=bar&download=1", nil, nil); r.status != http.StatusOK || !bytes.Equal(r.body, data) {
			t.Errorf("GET with unknown parameters: %d", r.status)
		}
		if r := do(t, http.MethodPost, n.url("/o?foo=bar"), auth(wtok), []byte("query")); r.status != http.StatusCreated {
			t.Errorf("POST with unknown parameters: %d %s", r.status, r.body)
		}
	})
}

func wantAllow(t *testing.T, what string, r httpResult, methods ...string) {
	t.Helper()
	allow := strings.Split(r.header.Get("Allow"), ",")
	for i := range allow {
		allow[i] = strings.TrimSpace(allow[i])
	}
	for _, m := range methods {
		if !slices.Contains(allow, m) {
			t.Errorf("%s: Allow %q lacks %s", what, r.header.Get("Allow"), m)
		}
	}
}

// TestNoSpace: free space under min_free_bytes → 507 insufficient_storage;
// reads still work; the node reports itself degraded.
func TestNoSpace(t *testing.T) {
	t.Parallel()
	n := startNode(t, nodeOpts{args: []string{"--storage.min-free-bytes", "1000000GiB"}, degradedOK: true})
	st, body := n.readyzStatus()
	if st != http.StatusServiceUnavailable || !strings.Contains(body, "storage:disk") {
		t.Errorf("/readyz with no space: %d %s, want 503 degraded storage:disk", st, body)
	}
	tok := n.token("storage:write")
	for _, m := range []string{http.MethodPost, http.MethodPut} {
		path := "/o"
		if m == http.MethodPut {
			path = "/o/" + idOf([]byte("no room"))
		}
		wantError(t, m+" with no space", do(t, m, n.url(path), hdr("Authorization", "Bearer "+tok), []byte("no room")), http.StatusInsufficientStorage, "insufficient_storage")
	}
	if v := n.metric("ron_storage_writes_total", `result="no_space"`); v < 2 {
		t.Errorf(`ron_storage_writes_total{result="no_space"} = %v, want ≥ 2`, v)
	}
	if r := do(t, http.MethodGet, n.url("/o/"+emptyID), nil, nil); r.status != http.StatusNotFound {
		t.Errorf("reads on a full node: %d, want 404 for an absent id", r.status)
	}
	if res := ron(t, cliOpts{}, "status", "--admin", n.admin); res.code != 1 {
		t.Errorf("ron status on a degraded node: exit %d, want 1", res.code)
	}
}

// TestBusy: no PUT pool slot within queue_timeout, and a full work queue,
// both answer 429 busy with Retry-After: 1.
func TestBusy(t *testing.T) {
	t.Parallel()
	t.Run("no pool slot", func(t *testing.T) {
		t.Parallel()
		n := startNode(t, nodeOpts{args: []string{"--storage.put-workers", "1", "--storage.queue-timeout", "200ms"}})
		tok := n.token("storage:write")
		holdUpload(t, n, tok)
		poll(t, 5*time.Second, "the held upload to take the PUT slot", func() bool {
			return n.metric("ron_storage_pool_inflight", `pool="put"`) == 1
		})
		r := do(t, http.MethodPost, n.url("/o"), hdr("Authorization", "Bearer "+tok), []byte("second"))
		wantError(t, "write with no PUT slot", r, http.StatusTooManyRequests, "busy")
		wantRetryAfter(t, "write with no PUT slot", r, "1")
		if v := n.metric("ron_busy_rejections_total", `role="storage"`, `endpoint="/o"`); v < 1 {
			t.Errorf(`ron_busy_rejections_total{endpoint="/o"} = %v, want ≥ 1`, v)
		}
		// Reads have their own pool.
		if r := do(t, http.MethodGet, n.url("/o/"+emptyID), nil, nil); r.status != http.StatusNotFound {
			t.Errorf("GET while the PUT pool is full: %d, want 404", r.status)
		}
	})
	t.Run("queue full", func(t *testing.T) {
		t.Parallel()
		n := startNode(t, nodeOpts{args: []string{"--storage.queue-capacity", "1"}})
		tok := n.token("storage:write")
		holdUpload(t, n, tok)
		poll(t, 5*time.Second, "the held upload to enter the work queue", func() bool {
			return n.metric("ron_queue_depth", `role="storage"`, `queue="work"`) == 1
		})
		for _, req := range []struct{ m, path string }{{http.MethodPost, "/o"}, {http.MethodGet, "/o/" + emptyID}} {
			r := do(t, req.m, n.url(req.path), hdr("Authorization", "Bearer "+tok), nil)
			wantError(t, req.m+" with a full queue", r, http.StatusTooManyRequests, "busy")
			wantRetryAfter(t, req.m+" with a full queue", r, "1")
		}
	})
}
