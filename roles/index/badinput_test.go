package index

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// This file walks every row of docs/index.md §15 that the handlers answer,
// through the shared httpx middleware chain (newEnv). Some rows are also
// covered in depth elsewhere (names_test.go, providers_test.go,
// resolve_test.go); they are repeated here so that one table shows the
// whole of docs/index.md §15.
//
// The admission rows are answered before the handlers and are tested with
// the role's listener and work queue:
//   - more than max_conns_per_ip concurrent connections → 429 busy
//     (httpx connCapMiddleware; httpx/server_test.go and the index role tests),
//   - per-IP token bucket empty (ratelimit_rps) → 429 rate_limited,
//   - queue full or no worker within queue_timeout → 429 busy, Retry-After: 1
//     (the index role's admission tests).

// absent in badRow.details requires the key to be missing.
type absentT struct{}

var absent = absentT{}

// badRow is one docs/index.md §15 input and the answer it must get.
type badRow struct {
	spec    string // the docs/index.md §15 row, as the spec words it
	q       req
	status  int
	code    string         // error.code; "" = no envelope
	details map[string]any // required error.details entries (nil value = JSON null)
	body    string         // exact body when set
}

// Fixture names: blog.example is live at version 7; hist.example has
// versions 3–12 kept, 12 a tombstone; write.example takes the successful
// writes of the table so the others never change.
const (
	liveName = "blog.example"
	histName = "hist.example"
)

// badInputFixture writes the state the rows rely on.
func badInputFixture(t *testing.T, e *env) {
	t.Helper()
	for range 7 {
		expect(t, e.put(liveName, idA, nil), 200, "")
	}
	for range 11 {
		expect(t, e.put(histName, idA, nil), 200, "")
	}
	expect(t, e.do(req{method: "DELETE", path: "/names/" + histName, token: e.writer}), 200, "")
	expect(t, e.announce(batch(rec(idA, "n1", ""))), 200, "")
}

func TestBadInputTable(t *testing.T) {
	e := newEnv(t)
	badInputFixture(t, e)
	var rows []badRow
	for _, part := range []func(*env) []badRow{
		nameSyntaxRows, versionRows, putBodyRows, mediaRows, preconditionRows,
		providerRows, keyAndLimitRows, authRows, unknownParamRows,
	} {
		rows = append(rows, part(e)...)
	}
	for i, row := range rows {
		t.Run(fmt.Sprintf("%03d %s %s %s", i, row.spec, row.q.method, row.q.path), func(t *testing.T) {
			checkRow(t, e.do(row.q), row)
		})
	}
	// No row disturbed the fixture.
	if g := e.do(req{method: "GET", path: "/names/" + liveName}); g.hdr.Get("ETag") != `"7"` {
		t.Fatalf("%s ETag %q", liveName, g.hdr.Get("ETag"))
	}
}

// checkRow compares an answer with its row.
func checkRow(t *testing.T, r resp, row badRow) {
	t.Helper()
	expect(t, r, row.status, row.code)
	if row.body != "" && string(r.body) != row.body {
		t.Fatalf("body %s, want %s", r.body, row.body)
	}
	if row.details == nil {
		return
	}
	got := r.details(t)
	for k, want := range row.details {
		v, ok := got[k]
		switch {
		case want == absent && ok:
			t.Fatalf("details.%s = %v, want absent (%v)", k, v, got)
		case want != absent && (!ok || !reflect.DeepEqual(v, want)):
			t.Fatalf("details.%s = %v (present %v), want %v", k, v, ok, want)
		}
	}
}

// nameRows sends a bad name through every route that takes one.
func nameRows(e *env, spec, name string) []badRow {
	put := `{"b3":"` + idA + `"}`
	return []badRow{
		{spec: spec, q: req{method: "GET", path: "/names/" + name}, status: 400, code: "bad_request"},
		{spec: spec, q: req{method: "GET", path: "/names/" + name + "/versions"}, status: 400, code: "bad_request"},
		{spec: spec, q: req{method: "GET", path: "/names/" + name + "@1"}, status: 400, code: "bad_request"},
		{spec: spec, q: req{method: "PUT", path: "/names/" + name, body: put, token: e.writer}, status: 400, code: "bad_request"},
		{spec: spec, q: req{method: "DELETE", path: "/names/" + name, token: e.writer}, status: 400, code: "bad_request"},
		{spec: spec, q: req{method: "GET", path: "/resolve/" + name}, status: 400, code: "bad_request"},
	}
}

func nameSyntaxRows(e *env) []badRow {
	var rows []badRow
	// bücher.example is sent percent-encoded, as a client must.
	for _, n := range []string{"Blog.example", "blog_example", "-blog.x", "blog-.x", "a..b", ".a", "a.", "b%C3%BCcher.example"} {
		rows = append(rows, nameRows(e, "bad name", n)...)
	}
	label64 := strings.Repeat("a", 64) + ".x"
	name254 := strings.TrimSuffix(strings.Repeat(strings.Repeat("b", 50)+".", 5), ".")
	rows = append(rows, nameRows(e, "label of 64", label64)...)
	return append(rows, nameRows(e, "name of 254", name254)...)
}

func versionRows(*env) []badRow {
	var rows []badRow
	for _, v := range []string{"@0", "@01", "@-1", "@abc", "@"} {
		rows = append(rows,
			badRow{spec: "bad @version", q: req{method: "GET", path: "/names/" + liveName + v}, status: 400, code: "bad_request"},
			badRow{spec: "bad @version", q: req{method: "GET", path: "/resolve/" + liveName + v}, status: 400, code: "bad_request"})
	}
	for _, path := range []string{"/names/", "/resolve/"} {
		rows = append(rows,
			badRow{spec: "@N above current", q: req{method: "GET", path: path + histName + "@13"}, status: 404, code: "not_found",
				details: map[string]any{"reason": absent}},
			badRow{spec: "@N older than history", q: req{method: "GET", path: path + histName + "@2"}, status: 404, code: "not_found",
				details: map[string]any{"reason": "pruned"}},
			badRow{spec: "@N a tombstone", q: req{method: "GET", path: path + histName + "@12"}, status: 404, code: "not_found",
				details: map[string]any{"reason": "deleted"}})
	}
	return rows
}

func putBodyRows(e *env) []badRow {
	put := func(spec, body, code string) badRow {
		return badRow{spec: spec, q: req{method: "PUT", path: "/names/" + liveName, body: body, token: e.writer},
			status: 400, code: code}
	}
	return []badRow{
		put("PUT body not JSON", `not json`, "malformed"),
		put("PUT trailing data", `{"b3":"`+idA+`"} {}`, "malformed"),
		put("PUT unknown field", `{"b3":"`+idA+`","x":1}`, "malformed"),
		put("PUT b3 not a string", `{"b3":7}`, "malformed"),
		{spec: "PUT empty body", q: req{method: "PUT", path: "/names/" + liveName, token: e.writer, ctype: "application/json"},
			status: 400, code: "malformed"},
		put("PUT b3 uppercase", `{"b3":"b3:`+strings.ToUpper(idA[3:])+`"}`, "bad_request"),
		put("PUT b3 bare hex", `{"b3":"`+idA[3:]+`"}`, "bad_request"),
		put("PUT b3 wrong length", `{"b3":"`+idA[:len(idA)-2]+`"}`, "bad_request"),
		put("PUT b3 wrong length", `{"b3":"`+idA+`00"}`, "bad_request"),
	}
}

func mediaRows(e *env) []badRow {
	good := `{"b3":"` + idA + `"}`
	ann := batch(rec(idA, "n2", ""))
	return []badRow{
		{spec: "Content-Type not JSON", q: req{method: "PUT", path: "/names/" + liveName, body: good, token: e.writer, ctype: "text/plain"},
			status: 415, code: "unsupported_media_type"},
		{spec: "Content-Type not JSON", q: req{method: "POST", path: "/providers", body: ann, token: e.writer, ctype: "text/plain"},
			status: 415, code: "unsupported_media_type"},
		{spec: "Content-Type missing", q: req{method: "PUT", path: "/names/" + liveName, token: e.writer},
			status: 415, code: "unsupported_media_type"},
		{spec: "body > 1 MiB", q: req{method: "PUT", path: "/names/" + liveName, token: e.writer,
			body: `{"b3":"` + idA + `","pad":"` + strings.Repeat("x", 1<<20) + `"}`}, status: 413, code: "payload_too_large"},
		{spec: "body > 1 MiB", q: req{method: "POST", path: "/providers", token: e.writer,
			body: `{"records":[],"pad":"` + strings.Repeat("x", 1<<20) + `"}`}, status: 413, code: "payload_too_large"},
	}
}

func preconditionRows(e *env) []badRow {
	good := `{"b3":"` + idB + `"}`
	cur7 := map[string]any{"current_version": 7.0}
	var rows []badRow
	for _, im := range []string{"3", `"x"`} {
		rows = append(rows,
			badRow{spec: "If-Match malformed", q: req{method: "PUT", path: "/names/" + liveName, body: good, token: e.writer,
				hdr: map[string]string{"If-Match": im}}, status: 400, code: "bad_request"},
			badRow{spec: "If-Match malformed", q: req{method: "DELETE", path: "/names/" + liveName, token: e.writer,
				hdr: map[string]string{"If-Match": im}}, status: 400, code: "bad_request"})
	}
	return append(rows,
		badRow{spec: `If-Match "6" when current is 7`, q: req{method: "PUT", path: "/names/" + liveName, body: good, token: e.writer,
			hdr: map[string]string{"If-Match": `"6"`}}, status: 412, code: "precondition_failed", details: cur7},
		badRow{spec: `If-Match "6" when current is 7`, q: req{method: "DELETE", path: "/names/" + liveName, token: e.writer,
			hdr: map[string]string{"If-Match": `"6"`}}, status: 412, code: "precondition_failed", details: cur7},
		badRow{spec: "If-None-Match * on a live name", q: req{method: "PUT", path: "/names/" + liveName, body: good, token: e.writer,
			hdr: map[string]string{"If-None-Match": "*"}}, status: 412, code: "precondition_failed", details: cur7},
		badRow{spec: "If-Match on a deleted name", q: req{method: "PUT", path: "/names/" + histName, body: good, token: e.writer,
			hdr: map[string]string{"If-Match": `"12"`}}, status: 412, code: "precondition_failed",
			details: map[string]any{"current_version": nil}},
	)
}

func providerRows(e *env) []badRow {
	post := func(spec, body string, details map[string]any) badRow {
		return badRow{spec: spec, q: req{method: "POST", path: "/providers", body: body, token: e.writer},
			status: 400, code: "bad_request", details: details}
	}
	at := func(field string) map[string]any { return map[string]any{"index": 1.0, "field": field} }
	good := rec(idA, "n1", "")
	many := make([]string, 1001)
	for i := range many {
		many[i] = rec(idA, fmt.Sprintf("m%d", i), "")
	}
	bad := func(r string) string { return batch(good, r) }
	raw := func(addr string) string { return `{"b3":"` + idA + `","node":"n3","addr":"` + addr + `"}` }
	return []badRow{
		post("providers: 0 records", batch(), map[string]any{"field": "records", "index": absent}),
		post("providers: > 1000 records", batch(many...), map[string]any{"field": "records", "index": absent}),
		post("providers: node a b", bad(rec(idA, "a b", "")), at("node")),
		post("providers: addr ftp", bad(raw("ftp://h.example/")), at("addr")),
		post("providers: addr userinfo", bad(raw("http://u:p@h/")), at("addr")),
		post("providers: addr query", bad(raw("http://h/?q")), at("addr")),
		post("providers: ttl_s -1", bad(rec(idA, "n3", `,"ttl_s":-1`)), at("ttl_s")),
		post("providers: ttl_s 86401", bad(rec(idA, "n3", `,"ttl_s":86401`)), at("ttl_s")),
		post("providers: ttl_s 1.5", bad(rec(idA, "n3", `,"ttl_s":1.5`)), at("ttl_s")),
		{spec: "providers ttl_s 0 for an unknown record", q: req{method: "POST", path: "/providers", token: e.writer,
			body: batch(rec(idB, "nobody", `,"ttl_s":0`))}, status: 200, body: `{"accepted":0,"withdrawn":1}` + "\n"},
	}
}

func keyAndLimitRows(*env) []badRow {
	hex := idA[3:]
	var rows []badRow
	for _, k := range []string{"B3:" + hex, "b3:" + strings.ToUpper(hex), "b3:" + hex[:63], hex, "b3:xyz", "blog.example"} {
		rows = append(rows, badRow{spec: "/providers malformed key", q: req{method: "GET", path: "/providers/" + k},
			status: 400, code: "bad_request"})
	}
	for _, k := range []string{"B3:" + hex, "b3:" + strings.ToUpper(hex), "b3:" + hex[:63], "b3:xyz", "Blog.example", "a..b"} {
		rows = append(rows, badRow{spec: "/resolve malformed key", q: req{method: "GET", path: "/resolve/" + k},
			status: 400, code: "bad_request"})
	}
	for _, l := range []string{"0", "65", "x", "-1", "+5", ""} {
		status, code := 400, "bad_request"
		if l == "" { // an empty limit is the default
			status, code = 200, ""
		}
		rows = append(rows, badRow{spec: "limit=" + l, q: req{method: "GET", path: "/providers/" + idA + "?limit=" + l},
			status: status, code: code})
	}
	return append(rows, badRow{spec: "limit=64", q: req{method: "GET", path: "/providers/" + idA + "?limit=64"}, status: 200})
}

func authRows(e *env) []badRow {
	writes := func(tok string) []req {
		return []req{
			{method: "PUT", path: "/names/" + liveName, body: `{"b3":"` + idB + `"}`, token: tok},
			{method: "DELETE", path: "/names/" + liveName, token: tok},
			{method: "POST", path: "/providers", body: batch(rec(idB, "n9", "")), token: tok},
		}
	}
	var rows []badRow
	for _, q := range writes("") {
		rows = append(rows, badRow{spec: "write without token", q: q, status: 401, code: "unauthorized"})
	}
	for _, q := range writes("not-a-token") {
		rows = append(rows, badRow{spec: "write with a bad token", q: q, status: 401, code: "unauthorized"})
	}
	for _, q := range writes(e.reader) {
		rows = append(rows, badRow{spec: "write lacking index:write", q: q, status: 403, code: "forbidden"})
	}
	return rows
}

func unknownParamRows(e *env) []badRow {
	return []badRow{
		{spec: "unknown query parameters", q: req{method: "GET", path: "/names/" + liveName + "?foo=bar&local=2"}, status: 200},
		{spec: "unknown query parameters", q: req{method: "GET", path: "/names/" + liveName + "@7?x=1"}, status: 200},
		{spec: "unknown query parameters", q: req{method: "GET", path: "/names/" + liveName + "/versions?page=2"}, status: 200},
		{spec: "unknown query parameters", q: req{method: "GET", path: "/providers/" + idA + "?foo=bar&limit=1"}, status: 200},
		{spec: "unknown query parameters", q: req{method: "GET", path: "/resolve/" + liveName + "?foo=bar"}, status: 200},
		{spec: "unknown query parameters", q: req{method: "PUT", path: "/names/write.example?foo=bar",
			body: `{"b3":"` + idA + `"}`, token: e.writer}, status: 200},
		{spec: "unknown query parameters", q: req{method: "POST", path: "/providers?foo=bar",
			body: batch(rec(idB, "n4", "")), token: e.writer}, status: 200},
		{spec: "unknown query parameters", q: req{method: "DELETE", path: "/names/write.example?foo=bar", token: e.writer}, status: 200},
	}
}
