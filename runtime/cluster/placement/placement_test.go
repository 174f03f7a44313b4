package placement

import (
	"slices"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/ronhq/ron/runtime/cluster"
	"github.com/ronhq/ron/store"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func member(id string, st cluster.State, since time.Time, roles ...string) cluster.Member {
	return cluster.Member{ID: id, Roles: roles, State: st, Since: since}
}

func TestSets(t *testing.T) {
	now := t0.Add(time.Hour)
	v := cluster.NewView("node-a", []cluster.Member{
		member("node-a", cluster.StateAlive, t0, "storage", "index"),
		member("node-b", cluster.StateDead, now.Add(-time.Minute), "storage"),
		member("node-c", cluster.StateLeft, now.Add(-10*time.Minute), "storage"),
		member("node-d", cluster.StateAlive, t0, "index"),
		member("node-e", cluster.StateAlive, t0, "storage"),
	}, t0)
	cases := []struct {
		name string
		got  []cluster.Member
		want []string
	}{
		{"W", Writable(v), []string{"node-a", "node-e"}},
		{"P", Repairable(v, 5*time.Minute, now), []string{"node-a", "node-b", "node-e"}},
		{"L", Known(v), []string{"node-a", "node-b", "node-c", "node-e"}},
	}
	for _, c := range cases {
		if got := IDs(c.got); !slices.Equal(got, c.want) {
			t.Errorf("%s = %v, want %v", c.name, got, c.want)
		}
	}
}

// TestSpecVector: hello world over node-a…node-d, RF 2 → {node-b, node-a}.
func TestSpecVector(t *testing.T) {
	id := store.Sum([]byte("hello world"))
	var ms []cluster.Member
	for _, n := range []string{"node-a", "node-b", "node-c", "node-d"} {
		ms = append(ms, member(n, cluster.StateAlive, t0, "storage"))
	}
	if got := IDs(Top(2, ms, id)); !slices.Equal(got, []string{"node-b", "node-a"}) {
		t.Fatalf("top 2 = %v", got)
	}
	if got := IDs(Ranked(ms, id)); !slices.Equal(got, []string{"node-b", "node-a", "node-d", "node-c"}) {
		t.Fatalf("ranked = %v", got)
	}
}
