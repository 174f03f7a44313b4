package index

import (
	"strings"
	"testing"
	"time"

	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/httpx/auth"
	"github.com/ronhq/ron/roles/index/indexapi"
	"github.com/ronhq/ron/roles/index/indexdb"
	"github.com/ronhq/ron/roles/index/replication"
)

const replicaRecord = `{"name":"blog.example","version":3,"b3":"` + idA +
	`","deleted":false,"updated_at":"2026-11-22T10:00:00.000Z"}`

// TestReplicaRoutesScope: /replica/* needs index:replicate or admin;
// index:write and index:admin do not satisfy the node-only scope. A names
// import taken by the leader is in the log.
func TestReplicaRoutesScope(t *testing.T) {
	ct := newCTest(t, 3, "node-a")
	bodies := map[string]string{
		replication.PathReplicaNames:     `{"records":[` + replicaRecord + `]}`,
		replication.PathReplicaProviders: announceBody(objects(1)),
	}
	cases := []struct {
		token string
		code  int
	}{
		{"", 401},
		{ct.writer, 403},
		{ct.token("index:admin"), 403},
		{ct.token(indexapi.ScopeReplicate), 200},
		{ct.token("admin"), 200},
	}
	for path, body := range bodies {
		for _, tc := range cases {
			if code, _, b := ct.do("node-a", "POST", path, body, tc.token, nil); code != tc.code {
				t.Errorf("%s: %d %s, want %d", path, code, b, tc.code)
			}
		}
	}
	ct.waitApplied("blog.example", 3)
}

// TestReplicaNamesBadInput is the bad-input table of POST /replica/names;
// a follower refuses an import (the importer sends it to the leader).
func TestReplicaNamesBadInput(t *testing.T) {
	ct := newCTest(t, 3, "node-a", "node-b", "node-c")
	leader, follower := ct.leader(), ct.follower()
	tok := ct.token(indexapi.ScopeReplicate)
	many := strings.Repeat(replicaRecord+",", indexdb.MaxReplicaBatch) + replicaRecord
	cases := []struct {
		name, body string
		code       int
		want       string
	}{
		{"not json", `{`, 400, `"code":"malformed"`},
		{"no records", `{"records":[]}`, 400, `"field":"records"`},
		{"too many", `{"records":[` + many + `]}`, 400, `"field":"records"`},
		{"bad name", `{"records":[` + strings.Replace(replicaRecord, "blog.example", "Blog", 1) + `]}`, 400, `"field":"name"`},
		{"version 0", `{"records":[` + strings.Replace(replicaRecord, `"version":3`, `"version":0`, 1) + `]}`, 400, `"field":"version"`},
		{"tombstone with b3", `{"records":[` + strings.Replace(replicaRecord, `"deleted":false`, `"deleted":true`, 1) + `]}`, 400, `"field":"b3"`},
		{"unknown field", `{"records":[` + strings.Replace(replicaRecord, `"deleted"`, `"x":1,"deleted"`, 1) + `]}`, 400, `"index":0`},
	}
	for _, tc := range cases {
		code, _, body := ct.do(leader, "POST", replication.PathReplicaNames, tc.body, tok, nil)
		if code != tc.code || !strings.Contains(body, tc.want) {
			t.Errorf("%s: %d %.200s", tc.name, code, body)
		}
	}
	if code, _, _ := ct.do(leader, "POST", replication.PathReplicaNames, "", tok, map[string]string{"Content-Type": "text/plain"}); code != 415 {
		t.Errorf("text/plain: %d", code)
	}
	code, _, body := ct.do(follower, "POST", replication.PathReplicaNames, `{"records":[`+replicaRecord+`]}`, tok, nil)
	if code != 503 || errorCode([]byte(body)) != httpx.CodeNoQuorum {
		t.Errorf("import on a follower: %d %s", code, body)
	}
}

// TestReplicaRoutesStaticMode: the routes exist only in cluster mode.
func TestReplicaRoutesStaticMode(t *testing.T) {
	e := newEnv(t)
	tok, _, err := e.h.keys.Mint(auth.MintOptions{Scopes: []string{"admin"}, TTL: time.Hour, Now: e.clk.Now()})
	if err != nil {
		t.Fatal(err)
	}
	r := e.do(req{method: "POST", path: replication.PathReplicaProviders, body: announceBody(objects(1)), token: tok})
	if r.code != 404 && r.code != 405 {
		t.Fatalf("static mode /replica/providers: %d", r.code)
	}
}
