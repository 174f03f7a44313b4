package indexsink

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ronhq/ron/runtime/cluster"
)

// view is a view whose members are given as id → index URL ("" = a storage
// member); ids in dead are dead.
func view(urls map[string]string, dead ...string) *cluster.View {
	var ms []cluster.Member
	for id, u := range urls {
		m := cluster.Member{ID: id, Roles: []string{"storage"}, State: cluster.StateAlive, URLs: map[string]string{}}
		if u != "" {
			m.Roles = []string{"index"}
			m.URLs["index"] = u
		}
		for _, d := range dead {
			if d == id {
				m.State = cluster.StateDead
			}
		}
		ms = append(ms, m)
	}
	return cluster.NewView("self", ms, time.Now())
}

// TestClusterMembersAsTargets: without a local index or index_urls, records
// go to an alive index member; a dead one is skipped, a failing one is
// failed over, a view change re-picks, and index_urls take precedence.
func TestClusterMembersAsTargets(t *testing.T) {
	a, b := newFakeIndex(t, http.StatusOK), newFakeIndex(t, http.StatusOK)
	m := cluster.NewStatic(view(map[string]string{"ia": a.url, "ib": b.url + "/", "s1": ""}, "ib"))
	s := newSink(t, Options{Cluster: m, Token: staticToken("node")})
	if got := s.Target(); got != "cluster index members (1 alive)" {
		t.Fatalf("Target = %q", got)
	}
	if err := announce(s, recs(1, time.Minute, "")); err != nil || a.count() != 1 || b.count() != 0 {
		t.Fatalf("alive member: %v, a=%d b=%d", err, a.count(), b.count())
	}
	if a.lastAuth() != "Bearer node" {
		t.Fatalf("Authorization %q", a.lastAuth())
	}
	m.Set(view(map[string]string{"ia": a.url, "ib": b.url}))
	a.setStatus(http.StatusServiceUnavailable)
	if err := announce(s, recs(1, time.Minute, "")); err != nil || b.count() != 1 {
		t.Fatalf("failover: %v, a=%d b=%d", err, a.count(), b.count())
	}
	m.Set(view(map[string]string{"ia": a.url, "ib": b.url}, "ib"))
	a.setStatus(http.StatusOK)
	if err := announce(s, recs(1, time.Minute, "")); err != nil || b.count() != 1 {
		t.Fatalf("re-pick after b died: %v, a=%d b=%d", err, a.count(), b.count())
	}
	if err := s.Retarget([]string{b.url}, ""); err != nil || s.Target() != "index_urls (1)" {
		t.Fatalf("Retarget: %v, %s", err, s.Target())
	}
	if err := announce(s, recs(1, time.Minute, "")); err != nil || b.count() != 2 {
		t.Fatalf("index_urls first: %v, b=%d", err, b.count())
	}
	if err := s.Retarget(nil, ""); err != nil {
		t.Fatalf("cluster sink needs no URL: %v", err)
	}
	m.Set(view(map[string]string{"s1": ""}))
	if err := announce(s, recs(1, time.Minute, "")); err != ErrNoIndexMember {
		t.Fatalf("no member: %v", err)
	}
}

// TestMemberURLsSpread: the order is the rendezvous order for the node id,
// so different storage nodes prefer different members; unusable URLs are
// skipped.
func TestMemberURLsSpread(t *testing.T) {
	v := view(map[string]string{"i1": "http://i1:1", "i2": "http://i2:1", "i3": "http://i3:1", "bad": "ftp://x", "s": ""})
	first := map[string]bool{}
	for _, n := range []string{"n1", "n2", "n3", "n4", "n5", "n6", "n7", "n8"} {
		urls := memberURLs(v, n)
		if len(urls) != 3 || strings.Contains(strings.Join(urls, " "), "ftp") {
			t.Fatalf("%s: %v", n, urls)
		}
		first[urls[0]] = true
	}
	if len(first) < 2 {
		t.Fatalf("every node prefers %v", first)
	}
}

// TestIndexWatcher: IndexMembers changes only with the alive index members;
// IndexChanges signals view changes; a sink without a cluster never does.
func TestIndexWatcher(t *testing.T) {
	m := cluster.NewStatic(view(map[string]string{"i1": "http://i1:1", "s1": ""}))
	s := newSink(t, Options{Cluster: m})
	ch, cancel := s.IndexChanges()
	defer cancel()
	before := s.IndexMembers()
	m.Set(view(map[string]string{"i1": "http://i1:1", "s2": ""}))
	<-ch
	if s.IndexMembers() != before {
		t.Fatal("a storage member changed the index members")
	}
	m.Set(view(map[string]string{"i1": "http://i1:1", "i2": "http://i2:1"}))
	<-ch
	if s.IndexMembers() == before || !strings.Contains(s.IndexMembers(), "i2=http://i2:1") {
		t.Fatalf("index members %q", s.IndexMembers())
	}
	plain := newSink(t, Options{URLs: []string{"http://i:1"}})
	pch, pcancel := plain.IndexChanges()
	defer pcancel()
	if pch != nil || plain.IndexMembers() != "" {
		t.Fatal("a sink without a cluster watches")
	}
}
