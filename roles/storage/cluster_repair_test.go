package storage

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/httpx/auth"
	"github.com/ronhq/ron/roles/storage/announcing"
	"github.com/ronhq/ron/roles/storage/repair"
	"github.com/ronhq/ron/runtime/cluster"
	"github.com/ronhq/ron/runtime/cluster/placement"
	"github.com/ronhq/ron/store"
)

var repairT0 = time.Now().Add(-time.Hour)

// repairMember is an alive storage member at base.
func repairMember(id, base string) cluster.Member {
	return cluster.Member{ID: id, Roles: []string{placement.Role}, URLs: map[string]string{placement.Role: base},
		State: cluster.StateAlive, Since: repairT0}
}

// startRepairRole starts a storage role in cluster mode as member "s" of a
// static membership (set later with setMembers); engine fs or memory.
func startRepairRole(t *testing.T, keys *auth.Keyring, engine string) (*testRole, *cluster.Static) {
	t.Helper()
	ms := cluster.NewStatic(cluster.NewView("s", nil, repairT0))
	tr := startRoleOpts(t, func(c *Config) { c.Engine = engine }, func(o *Options) {
		o.Keys = keys
		o.Cluster = ms
		o.ClusterConfig = cluster.DefaultConfig()
		o.Node.Token = auth.TokenSource(keys, cluster.NodeScopes(false)...)
	})
	tr.keys = keys
	t.Cleanup(tr.closePeers)
	return tr, ms
}

func newKeys(t *testing.T) *auth.Keyring {
	t.Helper()
	keys, err := auth.GenerateKeyring()
	if err != nil {
		t.Fatal(err)
	}
	return keys
}

// announced reports whether recs hold a provider record of id with a TTL
// after its last withdrawal.
func announced(recs []announcing.Record, id store.ID, afterWithdraw bool) bool {
	withdrawn := !afterWithdraw
	for _, r := range recs {
		switch {
		case r.ID != id:
		case r.TTL == 0:
			withdrawn = true
		case withdrawn:
			return true
		}
	}
	return false
}

// corruptingSource serves h but flips the first byte of every object body
// it sends, counting them.
func corruptingSource(h http.Handler, bodies *atomic.Int64) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet || strings.HasSuffix(r.URL.Path, "/outboard") {
			h.ServeHTTP(w, r)
			return
		}
		bodies.Add(1)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		body := rec.Body.Bytes()
		if len(body) > 0 {
			body[0] ^= 0xff
		}
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.WriteHeader(rec.Code)
		_, _ = w.Write(body)
	})
}

// TestRepairPullAfterQuarantine: a flipped byte fails the read, the object
// is quarantined and withdrawn, and the urgent pull fetches it back from
// another holder, skipping a source that sends wrong bytes; reads pass
// again and the copy is announced.
func TestRepairPullAfterQuarantine(t *testing.T) {
	keys := newKeys(t)
	s, ms := startRepairRole(t, keys, "fs")
	good := startRoleOpts(t, func(c *Config) { c.Engine = "memory" }, func(o *Options) { o.Keys = keys })
	var badBodies atomic.Int64
	bad := httptest.NewServer(corruptingSource(good.Handler(), &badBodies))
	defer bad.Close()
	body := bigBody()
	id := mustID(t, bigID)
	if _, _, err := good.engine.Put(context.Background(), bytes.NewReader(body), store.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	// The first source the pull tries sends wrong bytes.
	members := []cluster.Member{repairMember("s", s.base), repairMember("a", ""), repairMember("b", "")}
	first := ""
	for _, m := range append(placement.Top(2, members, id), placement.Ranked(members, id)...) {
		if m.ID != "s" && first == "" {
			first = m.ID
		}
	}
	for i := range members[1:] {
		m := &members[i+1]
		m.URLs = map[string]string{placement.Role: good.base}
		if m.ID == first {
			m.URLs = map[string]string{placement.Role: bad.URL}
		}
	}
	ms.Set(cluster.NewView("s", members, repairT0))

	s.put(body, "application/x-test")
	flipByte(t, s, id, 0)
	resp, b := s.do(req{method: http.MethodGet, path: "/o/" + bigID})
	wantError(t, resp, b, http.StatusInternalServerError, httpx.CodeCorrupt)
	s.sink.wait(t, func(recs []announcing.Record) bool { return announced(recs, id, true) })
	resp, got := s.do(req{method: http.MethodGet, path: "/o/" + bigID})
	if resp.StatusCode != http.StatusOK || !bytes.Equal(got, body) {
		t.Fatalf("after the pull: %d, %d bytes", resp.StatusCode, len(got))
	}
	if v := s.metric(series("repair_objects_total", "kind", "pull", "result", "ok", "reason", "copied")); v != 1 || badBodies.Load() != 1 {
		t.Fatalf("pulls ok = %v, bodies from the bad source %d", v, badBodies.Load())
	}
	if v := s.metric(series("repair_bytes_total", "phase", "executed")); v != float64(len(body)) {
		t.Fatalf("executed bytes = %v", v)
	}
}

// TestRepairQueueRemaining: a write's remaining copy queued on the normal
// lane is pushed as a replica to its target.
func TestRepairQueueRemaining(t *testing.T) {
	keys := newKeys(t)
	s, ms := startRepairRole(t, keys, "memory")
	target := startRoleOpts(t, func(c *Config) { c.Engine = "memory" }, func(o *Options) { o.Keys = keys })
	ms.Set(cluster.NewView("s", []cluster.Member{repairMember("s", s.base), repairMember("t", target.base)}, repairT0))
	id := putLocal(t, s, bigBody())
	s.queueRemaining(id, int64(len(bigBody())), []string{"t"})
	target.sink.wait(t, func(recs []announcing.Record) bool { return announced(recs, id, false) })
	if !engineHolds(t, target.Role, id) {
		t.Fatal("target does not hold the copy")
	}
	if v := s.metric(series("repair_objects_total", "kind", "push", "result", "ok", "reason", "copied")); v != 1 {
		t.Fatalf("pushes ok = %v", v)
	}
}

// TestRepairPushConflictRechecks: a 409 from the target re-hashes the
// local copy; a sound copy stays, the push counts as hash_mismatch.
func TestRepairPushConflictRechecks(t *testing.T) {
	keys := newKeys(t)
	s, ms := startRepairRole(t, keys, "fs")
	conflict := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		httpx.WriteError(w, "", httpx.NewError(http.StatusConflict, httpx.CodeHashMismatch, "no"))
	}))
	defer conflict.Close()
	ms.Set(cluster.NewView("s", []cluster.Member{repairMember("s", s.base), repairMember("t", conflict.URL)}, repairT0))
	id := putLocal(t, s, bigBody())
	existing, err := s.repairLink.Push(context.Background(), id, conflict.URL, repair.NewMeter(repair.NewPacer(1<<30, nil), nil))
	if existing || repair.ReasonOf(err) != "hash_mismatch" {
		t.Fatalf("push: existing %t, %v", existing, err)
	}
	if !engineHolds(t, s.Role, id) {
		t.Fatal("a sound copy was quarantined")
	}
	flipByte(t, s, id, 70000)
	s.repairLink.Recheck(context.Background(), id)
	if engineHolds(t, s.Role, id) {
		t.Fatal("a corrupt copy survived the recheck")
	}
}

// putLocal stores body in the role's engine only (no replicated write).
func putLocal(t *testing.T, tr *testRole, body []byte) store.ID {
	t.Helper()
	info, _, err := tr.engine.Put(context.Background(), bytes.NewReader(body), store.PutOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return info.ID
}

// TestReplicaEarlyAnswer: a target that answers 507 after a part of a large
// body makes net/http read the body after PutReplica returned. The local
// object (its pooled chunk buffer, its file) must outlive that late read:
// under -race, both the synchronous copy and a repair push used to release
// it under the transport's reader.
func TestReplicaEarlyAnswer(t *testing.T) {
	keys := newKeys(t)
	s, ms := startRepairRole(t, keys, "fs")
	early := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.CopyN(io.Discard, r.Body, 100<<10)
		httpx.WriteError(w, "", httpx.NewError(http.StatusInsufficientStorage, httpx.CodeInsufficientStorage, "full"))
	}))
	defer early.Close()
	ms.Set(cluster.NewView("s", []cluster.Member{repairMember("s", s.base), repairMember("t", early.URL)}, repairT0))
	body := make([]byte, 16<<20)
	for i := range body {
		body[i] = byte(i * 7)
	}
	id := putLocal(t, s, body)
	info, err := s.engine.Stat(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	for range 8 {
		_, err := s.repairLink.Push(context.Background(), id, early.URL, repair.NewMeter(repair.NewPacer(1<<30, nil), nil))
		if err == nil {
			t.Fatal("push to a full target succeeded")
		}
		if _, err := s.replicate(context.Background(), info, true, false); err == nil {
			t.Fatal("copy to a full target succeeded")
		}
	}
	if !engineHolds(t, s.Role, id) {
		t.Fatal("the local copy is gone")
	}
}
