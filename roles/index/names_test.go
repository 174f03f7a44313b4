package index

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestBadNames(t *testing.T) {
	e := newEnv(t)
	long := strings.Repeat("a", 64) + ".x"
	// Five 50-character labels: 254 characters, every label valid.
	tooLong := strings.TrimSuffix(strings.Repeat(strings.Repeat("b", 50)+".", 5), ".")
	if len(tooLong) != 254 {
		t.Fatalf("len %d", len(tooLong))
	}
	bad := []string{"Blog.example", "blog_example", "-blog.x", "blog-.x", "a..b", ".a", "a.",
		"b%C3%BCcher.example", "a%20b", long, tooLong}
	for _, n := range bad {
		for _, r := range []req{
			{method: "GET", path: "/names/" + n},
			{method: "GET", path: "/names/" + n + "/versions"},
			{method: "PUT", path: "/names/" + n, body: `{"b3":"` + idA + `"}`, token: e.writer},
			{method: "DELETE", path: "/names/" + n, token: e.writer},
		} {
			t.Run(r.method+" "+r.path, func(t *testing.T) { expect(t, e.do(r), 400, "bad_request") })
		}
	}
	// Boundaries that are valid: 63-character label, 253-character name, punycode.
	ok := []string{strings.Repeat("a", 63) + ".x", tooLong[:253], "xn--bcher-kva.example", "a-b.c0"}
	for _, n := range ok {
		expect(t, e.put(n, idA, nil), 200, "")
	}
}

func TestNameVersionSyntax(t *testing.T) {
	e := newEnv(t)
	expect(t, e.put("blog.example", idA, nil), 200, "")
	for _, s := range []string{"@0", "@01", "@-1", "@abc", "@", "@1@2", "@1.5"} {
		expect(t, e.do(req{method: "GET", path: "/names/blog.example" + s}), 400, "bad_request")
	}
	expect(t, e.do(req{method: "GET", path: "/names/Blog.example@1"}), 400, "bad_request")
	// '@' is not part of name syntax on writes.
	expect(t, e.put("blog.example@1", idA, nil), 400, "bad_request")
}

func TestPutAndGet(t *testing.T) {
	e := newEnv(t)
	r := e.put("blog.example", idA, nil)
	expect(t, r, 200, "")
	if got := r.hdr.Get("ETag"); got != `"1"` {
		t.Fatalf("ETag %q", got)
	}
	want := `{"name":"blog.example","b3":"` + idA + `","version":1,"updated_at":"2026-11-22T10:00:00.000Z"}` + "\n"
	if string(r.body) != want {
		t.Fatalf("body %s", r.body)
	}
	e.clk.Advance(1500 * time.Millisecond)
	r = e.put("blog.example", idA, nil) // unchanged target still adds 1
	expect(t, r, 200, "")
	if r.json(t)["version"] != 2.0 || r.json(t)["updated_at"] != "2026-11-22T10:00:01.500Z" {
		t.Fatalf("body %s", r.body)
	}
	g := e.do(req{method: "GET", path: "/names/blog.example"})
	expect(t, g, 200, "")
	if g.hdr.Get("ETag") != `"2"` || g.hdr.Get("Cache-Control") != "no-cache" || g.hdr.Get("Content-Type") != "application/json" {
		t.Fatalf("headers %v", g.hdr)
	}
	for _, inm := range []string{`"2"`, `W/"2"`, `"1", "2"`, `*`} {
		nm := e.do(req{method: "GET", path: "/names/blog.example", hdr: map[string]string{"If-None-Match": inm}})
		if nm.code != 304 || nm.hdr.Get("ETag") != `"2"` || len(nm.body) != 0 {
			t.Fatalf("If-None-Match %s: %d %v", inm, nm.code, nm.hdr)
		}
	}
	expect(t, e.do(req{method: "GET", path: "/names/blog.example", hdr: map[string]string{"If-None-Match": `"1"`}}), 200, "")
	expect(t, e.do(req{method: "GET", path: "/names/nothing.here"}), 404, "not_found")

	v := e.do(req{method: "GET", path: "/names/blog.example@1"})
	expect(t, v, 200, "")
	if v.hdr.Get("Cache-Control") != "public, max-age=60" || v.json(t)["version"] != 1.0 || v.json(t)["b3"] != idA {
		t.Fatalf("%v %s", v.hdr, v.body)
	}
	r = e.do(req{method: "GET", path: "/names/blog.example@3"})
	expect(t, r, 404, "not_found")
	if _, ok := r.details(t)["reason"]; ok {
		t.Fatalf("above current: details %v", r.details(t))
	}
	expect(t, e.do(req{method: "GET", path: "/names/never.written@1"}), 404, "not_found")
}

func TestPutBodyErrors(t *testing.T) {
	e := newEnv(t)
	cases := []struct {
		body, code string
	}{
		{`not json`, "malformed"},
		{`{"b3":"` + idA + `"} {}`, "malformed"},
		{`{"b3":"` + idA + `"}x`, "malformed"},
		{`{"b3":"` + idA + `","x":1}`, "malformed"},
		{`{"b3":7}`, "malformed"},
		{`[]`, "malformed"},
		{`{"b3":"` + strings.ToUpper(idA[3:]) + `"}`, "bad_request"},
		{`{"b3":"B3:` + idA[3:] + `"}`, "bad_request"},
		{`{"b3":"` + idA[3:] + `"}`, "bad_request"},
		{`{"b3":"` + idA[:len(idA)-1] + `"}`, "bad_request"},
		{`{"b3":"` + idA + `0"}`, "bad_request"},
		{`{}`, "bad_request"},
		{`{"b3":null}`, "bad_request"},
	}
	for _, c := range cases {
		r := e.do(req{method: "PUT", path: "/names/a.b", body: c.body, token: e.writer})
		if r.code != 400 || r.errCode() != c.code {
			t.Errorf("%s: %d %s", c.body, r.code, r.body)
		}
	}
	// Empty body.
	expect(t, e.do(req{method: "PUT", path: "/names/a.b", token: e.writer, ctype: "application/json"}), 400, "malformed")
	// Content-Type.
	for _, ct := range []string{"text/plain", "application/x-www-form-urlencoded", "application/jsonx", ";;"} {
		expect(t, e.do(req{method: "PUT", path: "/names/a.b", body: `{"b3":"` + idA + `"}`, token: e.writer, ctype: ct}),
			415, "unsupported_media_type")
	}
	expect(t, e.do(req{method: "PUT", path: "/names/a.b", token: e.writer}), 415, "unsupported_media_type")
	expect(t, e.do(req{method: "PUT", path: "/names/a.b", body: `{"b3":"` + idA + `"}`, token: e.writer,
		ctype: "application/json; charset=utf-8"}), 200, "")
	// > 1 MiB.
	big := `{"b3":"` + idA + `","pad":"` + strings.Repeat("x", 1<<20) + `"}`
	expect(t, e.do(req{method: "PUT", path: "/names/a.b", body: big, token: e.writer}), 413, "payload_too_large")
	// Nothing above changed the record beyond the one good PUT.
	if g := e.do(req{method: "GET", path: "/names/a.b"}); g.hdr.Get("ETag") != `"1"` {
		t.Fatalf("ETag %q", g.hdr.Get("ETag"))
	}
}

func TestAuth(t *testing.T) {
	e := newEnv(t)
	writes := func(tok string) []req {
		return []req{
			{method: "PUT", path: "/names/a.b", body: `{"b3":"` + idA + `"}`, token: tok},
			{method: "DELETE", path: "/names/a.b", token: tok},
			{method: "POST", path: "/providers", body: `{"records":[{"b3":"` + idA + `","node":"n1","addr":"http://h:1"}]}`, token: tok},
		}
	}
	for _, r := range writes("") {
		got := e.do(r)
		expect(t, got, 401, "unauthorized")
		if got.hdr.Get("WWW-Authenticate") != "Bearer" {
			t.Fatalf("WWW-Authenticate %q", got.hdr.Get("WWW-Authenticate"))
		}
	}
	for _, r := range writes("garbage") {
		expect(t, e.do(r), 401, "unauthorized")
	}
	for _, r := range writes(e.reader) {
		expect(t, e.do(r), 403, "forbidden")
	}
	expect(t, e.put("a.b", idA, nil), 200, "")
	// The injected clock drives token expiry too.
	e.clk.Advance(2 * time.Hour)
	for _, r := range writes(e.expired) {
		expect(t, e.do(r), 401, "unauthorized")
	}
	// Reads need no token.
	expect(t, e.do(req{method: "GET", path: "/names/a.b"}), 200, "")
	expect(t, e.do(req{method: "GET", path: "/names/a.b/versions"}), 200, "")
}

func TestPreconditionHeaders(t *testing.T) {
	e := newEnv(t)
	for i := 0; i < 7; i++ {
		expect(t, e.put("blog.example", idA, nil), 200, "")
	}
	bad := []map[string]string{
		{"If-Match": "3"}, {"If-Match": `"x"`}, {"If-Match": `"0"`}, {"If-Match": `"07"`}, {"If-Match": `W/"7"`},
		{"If-Match": `"6", "7"`}, {"If-Match": `"-1"`}, {"If-Match": `"`},
		{"If-None-Match": `"7"`}, {"If-None-Match": "x"},
		{"If-Match": `"7"`, "If-None-Match": "*"},
	}
	for _, hd := range bad {
		expect(t, e.put("blog.example", idB, hd), 400, "bad_request")
		if _, ok := hd["If-None-Match"]; !ok {
			expect(t, e.do(req{method: "DELETE", path: "/names/blog.example", token: e.writer, hdr: hd}), 400, "bad_request")
		}
	}
	// If-None-Match is PUT only.
	expect(t, e.do(req{method: "DELETE", path: "/names/blog.example", token: e.writer,
		hdr: map[string]string{"If-None-Match": "*"}}), 400, "bad_request")

	for _, hd := range []map[string]string{{"If-Match": `"6"`}, {"If-Match": `"8"`}, {"If-None-Match": "*"}} {
		r := e.put("blog.example", idB, hd)
		expect(t, r, 412, "precondition_failed")
		if d := r.details(t); d["current_version"] != 7.0 {
			t.Fatalf("%v: details %v", hd, d)
		}
		if r.hdr.Get("ETag") != "" {
			t.Fatalf("ETag on error: %q", r.hdr.Get("ETag"))
		}
	}
	r := e.do(req{method: "DELETE", path: "/names/blog.example", token: e.writer, hdr: map[string]string{"If-Match": `"6"`}})
	expect(t, r, 412, "precondition_failed")
	if r.details(t)["current_version"] != 7.0 {
		t.Fatalf("details %v", r.details(t))
	}
	// On GET, a failing If-Match is 412 too.
	r = e.do(req{method: "GET", path: "/names/blog.example", hdr: map[string]string{"If-Match": `"6"`}})
	expect(t, r, 412, "precondition_failed")

	// No live version: current_version is null.
	for _, hd := range []map[string]string{{"If-Match": `"1"`}, {"If-Match": "*"}} {
		r := e.put("new.name", idA, hd)
		expect(t, r, 412, "precondition_failed")
		d := r.details(t)
		if v, ok := d["current_version"]; !ok || v != nil {
			t.Fatalf("details %v", d)
		}
	}
	// Nothing was written by the failures.
	if g := e.do(req{method: "GET", path: "/names/blog.example"}); g.hdr.Get("ETag") != `"7"` {
		t.Fatalf("ETag %q", g.hdr.Get("ETag"))
	}
	expect(t, e.do(req{method: "GET", path: "/names/new.name"}), 404, "not_found")
}

func TestCASFlow(t *testing.T) {
	e := newEnv(t)
	// Create-only.
	r := e.put("blog.example", idA, map[string]string{"If-None-Match": "*"})
	expect(t, r, 200, "")
	if r.hdr.Get("ETag") != `"1"` {
		t.Fatalf("ETag %q", r.hdr.Get("ETag"))
	}
	expect(t, e.put("blog.example", idB, map[string]string{"If-None-Match": "*"}), 412, "precondition_failed")
	// If-Match success and a lost race.
	expect(t, e.put("blog.example", idB, map[string]string{"If-Match": `"1"`}), 200, "")
	r = e.put("blog.example", idA, map[string]string{"If-Match": `"1"`})
	expect(t, r, 412, "precondition_failed")
	if r.details(t)["current_version"] != 2.0 {
		t.Fatalf("details %v", r.details(t))
	}
	expect(t, e.put("blog.example", idA, map[string]string{"If-Match": "*"}), 200, "") // v3
	// Delete with If-Match.
	d := e.do(req{method: "DELETE", path: "/names/blog.example", token: e.writer, hdr: map[string]string{"If-Match": `"3"`}})
	expect(t, d, 200, "")
	want := `{"name":"blog.example","version":4,"deleted":true,"updated_at":"2026-11-22T10:00:00.000Z"}` + "\n"
	if string(d.body) != want {
		t.Fatalf("delete body %s", d.body)
	}
	// Deleted: GET 404 with reason, delete again 404, If-Match fails with null.
	g := e.do(req{method: "GET", path: "/names/blog.example"})
	expect(t, g, 404, "not_found")
	if dt := g.details(t); dt["reason"] != "deleted" || dt["version"] != 4.0 {
		t.Fatalf("details %v", dt)
	}
	expect(t, e.do(req{method: "DELETE", path: "/names/blog.example", token: e.writer}), 404, "not_found")
	expect(t, e.do(req{method: "DELETE", path: "/names/never.was", token: e.writer}), 404, "not_found")
	r = e.put("blog.example", idA, map[string]string{"If-Match": "*"})
	expect(t, r, 412, "precondition_failed")
	if v, ok := r.details(t)["current_version"]; !ok || v != nil {
		t.Fatalf("details %v", r.details(t))
	}
	// name@tombstone.
	r = e.do(req{method: "GET", path: "/names/blog.example@4"})
	expect(t, r, 404, "not_found")
	if r.details(t)["reason"] != "deleted" {
		t.Fatalf("details %v", r.details(t))
	}
	// Recreate: create-only succeeds on a tombstone and continues numbering.
	r = e.put("blog.example", idB, map[string]string{"If-None-Match": "*"})
	expect(t, r, 200, "")
	if r.hdr.Get("ETag") != `"5"` || r.json(t)["b3"] != idB {
		t.Fatalf("%v %s", r.hdr, r.body)
	}
	// Old versions keep their meaning.
	if v := e.do(req{method: "GET", path: "/names/blog.example@1"}); v.json(t)["b3"] != idA {
		t.Fatalf("@1 %s", v.body)
	}
	if v := e.do(req{method: "GET", path: "/names/blog.example@2"}); v.json(t)["b3"] != idB {
		t.Fatalf("@2 %s", v.body)
	}
}

func TestHistory(t *testing.T) {
	e := newEnv(t)
	expect(t, e.do(req{method: "GET", path: "/names/blog.example/versions"}), 404, "not_found")
	for i := 1; i <= 11; i++ {
		expect(t, e.put("blog.example", idA, nil), 200, "")
		e.clk.Advance(time.Second)
	}
	expect(t, e.do(req{method: "DELETE", path: "/names/blog.example", token: e.writer}), 200, "") // v12
	r := e.do(req{method: "GET", path: "/names/blog.example/versions"})
	expect(t, r, 200, "")
	var h struct {
		Name     string
		Versions []map[string]any
	}
	if err := jsonUnmarshal(r.body, &h); err != nil {
		t.Fatal(err)
	}
	if h.Name != "blog.example" || len(h.Versions) != 10 {
		t.Fatalf("history %s", r.body)
	}
	for i, v := range h.Versions {
		if v["version"] != float64(12-i) {
			t.Fatalf("order %s", r.body)
		}
		if len(v) != 4 {
			t.Fatalf("fields %v", v)
		}
	}
	top := h.Versions[0]
	if top["deleted"] != true || top["b3"] != nil || top["updated_at"] != "2026-11-22T10:00:11.000Z" {
		t.Fatalf("tombstone entry %v", top)
	}
	if h.Versions[1]["deleted"] != false || h.Versions[1]["b3"] != idA {
		t.Fatalf("live entry %v", h.Versions[1])
	}
	// Versions 1 and 2 were trimmed.
	for _, v := range []int{1, 2} {
		r := e.do(req{method: "GET", path: fmt.Sprintf("/names/blog.example@%d", v)})
		expect(t, r, 404, "not_found")
		if r.details(t)["reason"] != "pruned" {
			t.Fatalf("@%d details %v", v, r.details(t))
		}
	}
	expect(t, e.do(req{method: "GET", path: "/names/blog.example@3"}), 200, "")
	// Routes not in the spec.
	if r := e.do(req{method: "POST", path: "/names/blog.example", token: e.writer}); r.code != http.StatusMethodNotAllowed {
		t.Fatalf("POST /names: %d", r.code)
	}
}
