package ownership

import (
	"slices"
	"testing"
	"time"

	"github.com/ronhq/ron/roles/index/indexapi"
	"github.com/ronhq/ron/runtime/cluster"
	"github.com/ronhq/ron/runtime/cluster/rendezvous"
	"github.com/ronhq/ron/store"
)

// testView is a View of members with the given roles ("index" unless
// listed in others) and states ("" = alive).
func testView(self string, states map[string]cluster.State, ids ...string) *cluster.View {
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	ms := make([]cluster.Member, 0, len(ids))
	for _, id := range ids {
		st := states[id]
		if st == "" {
			st = cluster.StateAlive
		}
		ms = append(ms, cluster.Member{ID: id, Roles: []string{indexapi.RoleName}, State: st, Since: now,
			URLs: map[string]string{indexapi.RoleName: "http://" + id + ".test:5304"}})
	}
	return cluster.NewView(self, ms, now)
}

// memberIDs returns the ids of ms, in order.
func memberIDs(ms []cluster.Member) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.ID
	}
	return out
}

// TestOwnersSpecVector is docs/cluster.md §3: blog.example over node-a…d
// has owners node-b, node-c, node-d (R 3) and primary node-b.
func TestOwnersSpecVector(t *testing.T) {
	own := Of(testView("node-a", nil, "node-a", "node-b", "node-c", "node-d"), 3, "")
	key := NameKey("blog.example")
	if got := memberIDs(own.Owners(key)); !slices.Equal(got, []string{"node-b", "node-c", "node-d"}) {
		t.Fatalf("owners %v", got)
	}
	if p, ok := own.Primary(key); !ok || p.ID != "node-b" {
		t.Fatalf("primary %v %v", p.ID, ok)
	}
	if own.Owns(key) {
		t.Fatal("node-a owns blog.example")
	}
	if got := memberIDs(own.candidates(key)); !slices.Equal(got, []string{"node-b", "node-c", "node-d"}) {
		t.Fatalf("candidates %v", got)
	}
	b := Of(own.view, 3, "node-b")
	if !b.Owns(key) {
		t.Fatal("node-b does not own blog.example")
	}
	if got := memberIDs(b.candidates(key)); !slices.Equal(got, []string{"node-c", "node-d", "node-a"}) {
		t.Fatalf("candidates from node-b %v", got)
	}
}

// TestOwnersMoveOnDeath: ownership moves to the next alive member at once
// while R_eff still counts the departed one.
func TestOwnersMoveOnDeath(t *testing.T) {
	key := NameKey("blog.example")
	dead := map[string]cluster.State{"node-b": cluster.StateDead}
	own := Of(testView("node-a", dead, "node-a", "node-b", "node-c", "node-d"), 3, "")
	if got := memberIDs(own.Owners(key)); !slices.Equal(got, []string{"node-c", "node-d", "node-a"}) {
		t.Fatalf("owners %v", got)
	}
	if p, _ := own.Primary(key); p.ID != "node-c" {
		t.Fatalf("primary %s", p.ID)
	}
	if !own.Owns(key) || own.REff() != 3 || own.WIdx() != 2 {
		t.Fatalf("owns %v rEff %d wIdx %d", own.Owns(key), own.REff(), own.WIdx())
	}
}

func TestOwnershipQuorum(t *testing.T) {
	dead := cluster.StateDead
	cases := []struct {
		name       string
		r          int
		states     map[string]cluster.State
		ids        []string
		rEff, wIdx int
		owners     int
	}{
		{"single node", 3, nil, []string{"a"}, 1, 1, 1},
		{"two nodes", 3, nil, []string{"a", "b"}, 2, 2, 2},
		{"three nodes", 3, nil, []string{"a", "b", "c"}, 3, 2, 3},
		{"five nodes", 3, nil, []string{"a", "b", "c", "d", "e"}, 3, 2, 3},
		{"R 1", 1, nil, []string{"a", "b", "c"}, 1, 1, 1},
		{"one of three down", 3, map[string]cluster.State{"c": dead}, []string{"a", "b", "c"}, 3, 2, 2},
		{"lone survivor", 3, map[string]cluster.State{"b": dead, "c": cluster.StateLeft}, []string{"a", "b", "c"}, 3, 2, 1},
	}
	for _, tc := range cases {
		own := Of(testView("a", tc.states, tc.ids...), tc.r, "")
		if own.REff() != tc.rEff || own.WIdx() != tc.wIdx || len(own.Owners(NameKey("x"))) != tc.owners {
			t.Errorf("%s: rEff %d wIdx %d owners %d", tc.name, own.REff(), own.WIdx(), len(own.Owners(NameKey("x"))))
		}
	}
}

// TestOwnersFollowRendezvous: provider keys are raw digests and owners are
// the rendezvous top R in choice order, whatever the key.
func TestOwnersFollowRendezvous(t *testing.T) {
	ids := []string{"node-a", "node-b", "node-c", "node-d", "node-e"}
	own := Of(testView("node-a", nil, ids...), 3, "")
	for i := range 50 {
		id := store.Sum([]byte{byte(i)})
		want := rendezvous.IDs(rendezvous.Top(3, cluster.Candidates(own.Alive()), id[:]))
		if got := memberIDs(own.Owners(ObjectKey(id))); !slices.Equal(got, want) {
			t.Fatalf("%d: owners %v, want %v", i, got, want)
		}
		cands := memberIDs(own.candidates(ObjectKey(id)))
		if slices.Contains(cands, "node-a") || len(cands) != 4 {
			t.Fatalf("candidates %v", cands)
		}
	}
}
