package index

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// rec renders one announce record.
func rec(b3, node, extra string) string {
	return `{"b3":"` + b3 + `","node":"` + node + `","addr":"http://` + node + `.example:8080"` + extra + `}`
}

func batch(recs ...string) string { return `{"records":[` + strings.Join(recs, ",") + `]}` }

func (e *env) announce(body string) resp {
	e.t.Helper()
	return e.do(req{method: "POST", path: "/providers", body: body, token: e.writer})
}

func TestAnnounceBatchSize(t *testing.T) {
	e := newEnv(t)
	mk := func(n int) string {
		recs := make([]string, n)
		for i := range recs {
			recs[i] = rec(idA, fmt.Sprintf("n%d", i), "")
		}
		return batch(recs...)
	}
	r := e.announce(mk(1000))
	expect(t, r, 200, "")
	if string(r.body) != `{"accepted":1000,"withdrawn":0}`+"\n" {
		t.Fatalf("body %s", r.body)
	}
	for _, body := range []string{mk(1001), mk(0)} {
		r := e.announce(body)
		expect(t, r, 400, "bad_request")
		if d := r.details(t); d["field"] != "records" {
			t.Fatalf("details %v", d)
		}
	}
	// The per-object cap keeps 64 of the 1000.
	g := e.do(req{method: "GET", path: "/providers/" + idA + "?limit=64"})
	expect(t, g, 200, "")
	if n := len(g.json(t)["providers"].([]any)); n != 64 {
		t.Fatalf("%d providers", n)
	}
}

func TestAnnounceBadRecords(t *testing.T) {
	e := newEnv(t)
	good := rec(idA, "good", "")
	cases := []struct {
		bad, field string
	}{
		{rec(idA, "a b", ""), "node"},
		{rec(idA, strings.Repeat("n", 65), ""), "node"},
		{`{"b3":"` + idA + `","node":"n","addr":"ftp://h/"}`, "addr"},
		{`{"b3":"` + idA + `","node":"n","addr":"http://u:p@h/"}`, "addr"},
		{`{"b3":"` + idA + `","node":"n","addr":"http://h/?q"}`, "addr"},
		{`{"b3":"` + idA + `","node":"n","addr":"http://h/#f"}`, "addr"},
		{`{"b3":"` + idA + `","node":"n","addr":"/relative"}`, "addr"},
		{rec(idA, "n", `,"ttl_s":-1`), "ttl_s"},
		{rec(idA, "n", `,"ttl_s":86401`), "ttl_s"},
		{rec(idA, "n", `,"ttl_s":1.5`), "ttl_s"},
		{rec(idA, "n", `,"region":"a b"`), "region"},
		{rec(idA, "n", `,"type":"`+strings.Repeat("t", 256)+`"`), "type"},
		{rec(strings.ToUpper(idA), "n", ""), "b3"},
		{rec(idA[3:], "n", ""), "b3"},
		{`{"node":"n","addr":"http://h/"}`, "b3"},
	}
	for _, c := range cases {
		r := e.announce(batch(good, good, c.bad, good))
		if r.code != 400 || r.errCode() != "bad_request" {
			t.Errorf("%s: %d %s", c.bad, r.code, r.body)
			continue
		}
		if d := r.details(t); d["index"] != 2.0 || d["field"] != c.field {
			t.Errorf("%s: details %v", c.bad, d)
		}
	}
	// Unknown record field: named by index.
	r := e.announce(batch(good, rec(idA, "n", `,"zz":1`)))
	expect(t, r, 400, "bad_request")
	if r.details(t)["index"] != 1.0 {
		t.Fatalf("details %v", r.details(t))
	}
	// All or nothing: nothing from the bad batches was applied.
	expect(t, e.do(req{method: "GET", path: "/providers/" + idA}), 404, "not_found")

	// Undecodable envelopes are malformed.
	for _, body := range []string{`nope`, `{"records":{}}`, `{"records":[]} x`, `{"recs":[]}`, `{"records":[` + good + `]}{}`} {
		expect(t, e.announce(body), 400, "malformed")
	}
	expect(t, e.do(req{method: "POST", path: "/providers", token: e.writer, ctype: "application/json"}), 400, "malformed")
	expect(t, e.do(req{method: "POST", path: "/providers", body: batch(good), token: e.writer, ctype: "text/plain"}),
		415, "unsupported_media_type")
	big := `{"records":[` + good + `],"pad":"` + strings.Repeat("x", 1<<20) + `"}`
	expect(t, e.announce(big), 413, "payload_too_large")
}

func TestProvidersReadAndWithdraw(t *testing.T) {
	e := newEnv(t)
	e.h.set(func(s *Settings) { s.Zone = "z2" })
	r := e.announce(batch(
		rec(idA, "old", `,"region":"z1","type":"text/plain"`),
		rec(idB, "other", ""),
	))
	expect(t, r, 200, "")
	e.clk.Advance(5 * time.Second)
	r = e.announce(batch(
		rec(idA, "new", `,"region":"z2","ttl_s":60`),
		rec(idA, "mid", `,"region":"z1"`),
		rec(idA, "ghost", `,"ttl_s":0`), // unknown: accepted as a no-op withdrawal
	))
	expect(t, r, 200, "")
	if string(r.body) != `{"accepted":2,"withdrawn":1}`+"\n" {
		t.Fatalf("body %s", r.body)
	}
	e.clk.Advance(2500 * time.Millisecond)

	nodes := func(r resp) string {
		var out []string
		for _, p := range r.json(t)["providers"].([]any) {
			out = append(out, p.(map[string]any)["node"].(string))
		}
		return strings.Join(out, ",")
	}
	g := e.do(req{method: "GET", path: "/providers/" + idA})
	expect(t, g, 200, "")
	if g.hdr.Get("Cache-Control") != "public, max-age=10" {
		t.Fatalf("Cache-Control %q", g.hdr.Get("Cache-Control"))
	}
	if got := nodes(g); got != "new,mid,old" { // zone z2 first, then freshest, then node id
		t.Fatalf("order %s", got)
	}
	if g.json(t)["b3"] != idA {
		t.Fatalf("body %s", g.body)
	}
	first := g.json(t)["providers"].([]any)[2].(map[string]any)
	want := map[string]any{"node": "old", "addr": "http://old.example:8080", "region": "z1", "type": "text/plain",
		"last_seen_s": 7.0, "expires_in_s": 593.0}
	if fmt.Sprint(first) != fmt.Sprint(want) {
		t.Fatalf("record %v", first)
	}
	if got := nodes(e.do(req{method: "GET", path: "/providers/" + idA + "?region=z1&x=ignored"})); got != "mid,old,new" {
		t.Fatalf("region=z1 order %s", got)
	}
	if got := nodes(e.do(req{method: "GET", path: "/providers/" + idA + "?region="})); got != "mid,new,old" {
		t.Fatalf("no region order %s", got)
	}
	if got := nodes(e.do(req{method: "GET", path: "/providers/" + idA + "?limit=1"})); got != "new" {
		t.Fatalf("limit=1 %s", got)
	}
	for _, l := range []string{"0", "65", "x", "-1", "+1", "1.5"} {
		expect(t, e.do(req{method: "GET", path: "/providers/" + idA + "?limit=" + l}), 400, "bad_request")
	}
	for _, id := range []string{"nope", strings.ToUpper(idA), idA[3:], idA + "0"} {
		expect(t, e.do(req{method: "GET", path: "/providers/" + id}), 400, "bad_request")
	}

	// Withdraw one.
	r = e.announce(batch(rec(idA, "mid", `,"ttl_s":0`)))
	expect(t, r, 200, "")
	if string(r.body) != `{"accepted":0,"withdrawn":1}`+"\n" {
		t.Fatalf("body %s", r.body)
	}
	if got := nodes(e.do(req{method: "GET", path: "/providers/" + idA})); got != "new,old" {
		t.Fatalf("after withdraw %s", got)
	}

	// Expiry by the injected clock, before any janitor run: "new" was
	// announced at +5 s with ttl 60 s, "old" at +0 s with the default 600 s.
	e.clk.Advance(58 * time.Second) // +65.5 s
	if got := nodes(e.do(req{method: "GET", path: "/providers/" + idA})); got != "old" {
		t.Fatalf("after 60 s ttl %s", got)
	}
	e.clk.Advance(600 * time.Second)
	n := e.do(req{method: "GET", path: "/providers/" + idA})
	expect(t, n, 404, "not_found")
	if n.hdr.Get("Cache-Control") != "public, max-age=2" {
		t.Fatalf("404 Cache-Control %q", n.hdr.Get("Cache-Control"))
	}
	if n.json(t)["error"].(map[string]any)["corr_id"] == "" {
		t.Fatalf("no corr_id: %s", n.body)
	}
	expect(t, e.do(req{method: "GET", path: "/providers/" + idB}), 404, "not_found")
}

func TestAnnounceDefaultTTL(t *testing.T) {
	e := newEnv(t)
	e.h.set(func(s *Settings) { s.DefaultTTL = 30 * time.Second })
	expect(t, e.announce(batch(rec(idA, "n", ""))), 200, "")
	g := e.do(req{method: "GET", path: "/providers/" + idA})
	if p := g.json(t)["providers"].([]any)[0].(map[string]any); p["expires_in_s"] != 30.0 || p["last_seen_s"] != 0.0 {
		t.Fatalf("record %v", p)
	}
	e.clk.Advance(30 * time.Second)
	expect(t, e.do(req{method: "GET", path: "/providers/" + idA}), 404, "not_found")
}
