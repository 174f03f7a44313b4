package index

import (
	"context"
	"errors"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ronhq/ron/httpx/auth"
	"github.com/ronhq/ron/roles/index/indexapi"
	"github.com/ronhq/ron/roles/index/indexdb"
	"github.com/ronhq/ron/roles/index/replication"
	"github.com/ronhq/ron/runtime/cluster"
)

const replicaRecord = `{"name":"blog.example","version":3,"b3":"` + idA +
	`","deleted":false,"updated_at":"2026-11-22T10:00:00.000Z"}`

// TestReplicaRoutesScope: /replica/* needs index:replicate or admin;
// index:write and index:admin do not satisfy the node-only scope.
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
	rec, err := ct.local("node-a", "blog.example")
	if err != nil || rec.Version != 3 {
		t.Fatalf("replica record: %+v %v", rec, err)
	}
}

// TestReplicaNamesBadInput is the bad-input table of POST /replica/names.
func TestReplicaNamesBadInput(t *testing.T) {
	ct := newCTest(t, 3, "node-a")
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
		code, _, body := ct.do("node-a", "POST", replication.PathReplicaNames, tc.body, tok, nil)
		if code != tc.code || !strings.Contains(body, tc.want) {
			t.Errorf("%s: %d %.200s", tc.name, code, body)
		}
	}
	code, _, _ := ct.do("node-a", "POST", replication.PathReplicaNames, "", tok, map[string]string{"Content-Type": "text/plain"})
	if code != 415 {
		t.Errorf("text/plain: %d", code)
	}
}

// TestReplicaRoutesStaticMode: the routes exist only in cluster mode.
func TestReplicaRoutesStaticMode(t *testing.T) {
	e := newEnv(t)
	tok, _, err := e.h.keys.Mint(auth.MintOptions{Scopes: []string{"admin"}, TTL: time.Hour, Now: e.clk.Now()})
	if err != nil {
		t.Fatal(err)
	}
	r := e.do(req{method: "POST", path: replication.PathReplicaNames, body: `{"records":[` + replicaRecord + `]}`, token: tok})
	if r.code != 404 && r.code != 405 {
		t.Fatalf("static mode /replica/names: %d", r.code)
	}
}

// TestAntiEntropyRepairsAndDrops: an owner that missed a write receives it
// from the next pass, and a node that held the name while it owned it
// drops its copy once all owners confirmed.
func TestAntiEntropyRepairsAndDrops(t *testing.T) {
	ct := newCTest(t, 3, "node-a", "node-b", "node-c", "node-d")
	// node-d is dead: blog.example is owned by node-b, node-c and node-a.
	ct.setViews(map[string]cluster.State{"node-d": cluster.StateDead})
	if code, body := ct.put("node-a", "blog.example", idA, nil); code != 200 {
		t.Fatalf("PUT: %d %s", code, body)
	}
	if _, err := ct.local("node-a", "blog.example"); err != nil {
		t.Fatalf("owner node-a lacks the name: %v", err)
	}
	// node-d is back: it owns the name again and missed the write.
	ct.setViews(nil)
	if _, err := ct.local("node-d", "blog.example"); !errors.Is(err, indexdb.ErrNotFound) {
		t.Fatalf("node-d: %v", err)
	}
	pushed, dropped, err := ct.nodes["node-b"].h.cl.rep.AntiEntropyPass(context.Background())
	if err != nil || pushed != 2 || dropped != 0 {
		t.Fatalf("owner pass: pushed %d dropped %d %v", pushed, dropped, err)
	}
	if rec, err := ct.local("node-d", "blog.example"); err != nil || rec.Version != 1 {
		t.Fatalf("node-d not repaired: %+v %v", rec, err)
	}
	pushed, dropped, err = ct.nodes["node-a"].h.cl.rep.AntiEntropyPass(context.Background())
	if err != nil || pushed != 3 || dropped != 1 {
		t.Fatalf("non-owner pass: pushed %d dropped %d %v", pushed, dropped, err)
	}
	if _, err := ct.local("node-a", "blog.example"); !errors.Is(err, indexdb.ErrNotFound) {
		t.Fatalf("node-a kept its copy: %v", err)
	}
	if v := ct.metric("node-a", `ron_index_antientropy_records_total{role="index"}`); v != 3 {
		t.Fatalf("records pushed: %v", v)
	}
	if code, _, body := ct.do("node-a", "GET", "/names/blog.example", "", "", nil); code != 200 {
		t.Fatalf("read after drop: %d %s", code, body)
	}
}

// TestAntiEntropyKeepsUnconfirmedCopy: a non-owner keeps its copy while an
// owner does not confirm.
func TestAntiEntropyKeepsUnconfirmedCopy(t *testing.T) {
	ct := newCTest(t, 3, "node-a", "node-b", "node-c", "node-d")
	ct.setViews(map[string]cluster.State{"node-d": cluster.StateDead})
	if code, body := ct.put("node-a", "blog.example", idA, nil); code != 200 {
		t.Fatalf("PUT: %d %s", code, body)
	}
	ct.setViews(nil)
	ct.nodes["node-d"].down.Store(true)
	pushed, dropped, err := ct.nodes["node-a"].h.cl.rep.AntiEntropyPass(context.Background())
	if err != nil || pushed != 2 || dropped != 0 {
		t.Fatalf("pass: pushed %d dropped %d %v", pushed, dropped, err)
	}
	if _, err := ct.local("node-a", "blog.example"); err != nil {
		t.Fatalf("node-a dropped an unconfirmed copy: %v", err)
	}
}

// TestAntiEntropyIntervalReload: ApplyCluster's index_sync_interval takes
// effect from the pass after the current wait; a non-positive one is refused.
func TestAntiEntropyIntervalReload(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := &Role{}
		if err := r.ApplyCluster(cluster.Config{}); err == nil {
			t.Fatal("a zero index_sync_interval was accepted")
		}
		_ = r.ApplyCluster(cluster.Config{IndexSyncInterval: time.Minute})
		start := time.Now()
		passes := make(chan time.Duration, 4)
		alone := cluster.NewView("node-a", []cluster.Member{{ID: "node-a", Roles: []string{roleName}, State: cluster.StateAlive}},
			start)
		ae := replication.AntiEntropy{Interval: func() time.Duration { return time.Duration(r.syncInterval.Load()) },
			Settle: time.Second, Membership: cluster.NewStatic(alone), Pass: func(context.Context) { passes <- time.Since(start) }}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- ae.Run(ctx) }()
		defer func() { cancel(); <-done }()
		synctest.Wait() // the first wait (1 min) is armed
		if err := r.ApplyCluster(cluster.Config{IndexSyncInterval: 10 * time.Second}); err != nil {
			t.Fatal(err)
		}
		for _, want := range []time.Duration{time.Minute, 70 * time.Second} {
			if got := <-passes; got != want {
				t.Errorf("pass at %v, want %v", got, want)
				return
			}
		}
	})
}
