package replicate

import (
	"slices"
	"testing"
	"time"

	"github.com/ronhq/ron/runtime/cluster"
	"github.com/ronhq/ron/runtime/cluster/placement"
	"github.com/ronhq/ron/store"
)

var clusterT0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// TestCopyPlanOrder: the spec vector (hello world over node-a…node-d ranks
// b, a, d, c): from node-a with RF 2 the target is node-b, fallbacks d, c;
// with RF 3 (T = {b, a, d}) the targets are b and d.
func TestCopyPlanOrder(t *testing.T) {
	var ms []cluster.Member
	for _, id := range []string{"node-a", "node-b", "node-c", "node-d", "node-e"} {
		st := cluster.StateAlive
		if id == "node-e" {
			st = cluster.StateDead
		}
		ms = append(ms, cluster.Member{ID: id, Roles: []string{"storage"}, State: st})
	}
	ms = append(ms, cluster.Member{ID: "node-i", Roles: []string{"index"}, State: cluster.StateAlive})
	v := cluster.NewView("node-a", ms, clusterT0)
	id := store.Sum([]byte("hello world"))
	cases := []struct {
		rf             int
		targets, order []string
	}{
		{2, []string{"node-b"}, []string{"node-b", "node-d", "node-c"}},
		{3, []string{"node-b", "node-d"}, []string{"node-b", "node-d", "node-c"}},
		{5, []string{"node-b", "node-d", "node-c"}, []string{"node-b", "node-d", "node-c"}},
	}
	for _, c := range cases {
		p := NewPlan(v, c.rf, id)
		if got := placement.IDs(p.Targets); !slices.Equal(got, c.targets) || p.Alive != 4 {
			t.Errorf("RF %d: targets %v (alive %d), want %v", c.rf, got, p.Alive, c.targets)
		}
		if got := placement.IDs(p.Order); !slices.Equal(got, c.order) {
			t.Errorf("RF %d: order %v, want %v", c.rf, got, c.order)
		}
	}
}

// TestRemainingTargets: RF ≥ 3 queues every target but the one that took
// the synchronous copy and those known to hold the object.
func TestRemainingTargets(t *testing.T) {
	ms := func(ids ...string) []cluster.Member {
		var out []cluster.Member
		for _, id := range ids {
			out = append(out, cluster.Member{ID: id})
		}
		return out
	}
	cases := []struct {
		name string
		p    Plan
		held map[string]bool
		done string
		want []string
	}{
		{"RF 2", Plan{RF: 2, Targets: ms("b")}, nil, "", nil},
		{"RF 3 copied", Plan{RF: 3, Targets: ms("b", "c")}, nil, "b", []string{"c"}},
		{"RF 3 fallback", Plan{RF: 3, Targets: ms("b", "c")}, nil, "d", []string{"b", "c"}},
		{"RF 4 held", Plan{RF: 4, Targets: ms("b", "c", "d")}, map[string]bool{"c": true, "d": false}, "", []string{"b", "d"}},
		{"RF 3 all held", Plan{RF: 3, Targets: ms("b", "c")}, map[string]bool{"b": true, "c": true}, "", nil},
	}
	for _, c := range cases {
		if got := remainingTargets(c.p, c.held, c.done); !slices.Equal(got, c.want) {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}
