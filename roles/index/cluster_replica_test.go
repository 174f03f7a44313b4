package index

import (
	"testing"
	"time"

	"github.com/ronhq/ron/httpx/auth"
	"github.com/ronhq/ron/roles/index/indexapi"
	"github.com/ronhq/ron/roles/index/replication"
)

// TestReplicaRoutesScope: /replica/providers needs index:replicate or
// admin; index:write and index:admin do not satisfy the node-only scope.
func TestReplicaRoutesScope(t *testing.T) {
	ct := newCTest(t, 3, "node-a")
	bodies := map[string]string{
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
