package topology

import (
	"context"
	"errors"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ronhq/ron/runtime/cluster"
	"github.com/ronhq/ron/runtime/cluster/rendezvous"
	"github.com/ronhq/ron/store"
)

// zoned is an alive member running roles in zone, at http://<id>:1.
func zoned(id, zone string, st cluster.State, roles ...string) cluster.Member {
	urls := map[string]string{}
	for _, r := range roles {
		urls[r] = "http://" + id + ":1"
	}
	return cluster.Member{ID: id, Roles: roles, URLs: urls, Zone: zone, State: st}
}

// value is a built pool value: which member and URL, and whether retired.
type value struct {
	id, url string
	retired bool
}

func newTestPool(m cluster.Membership, zone string, built *[]*value) *Pool[*value] {
	return NewPool(PoolOptions[*value]{Membership: m, Role: "storage", Zone: zone,
		Build: func(id, url string) (*value, error) {
			if id == "bad" {
				return nil, errors.New("no")
			}
			v := &value{id: id, url: url}
			*built = append(*built, v)
			return v, nil
		},
		Retire: func(v *value) { v.retired = true }})
}

func TestPoolSelectsAliveMembersWithTheRole(t *testing.T) {
	v := cluster.NewView("gw", []cluster.Member{
		zoned("a", "z1", cluster.StateAlive, "storage"), zoned("b", "z1", cluster.StateDead, "storage"),
		zoned("c", "z2", cluster.StateAlive, "index"), zoned("bad", "z1", cluster.StateAlive, "storage"),
		{ID: "nourl", Roles: []string{"storage"}, State: cluster.StateAlive},
		zoned("gw", "z1", cluster.StateAlive, "gateway"), zoned("d", "z2", cluster.StateAlive, "storage", "index"),
	}, time.Time{})
	var built []*value
	p := newTestPool(cluster.NewStatic(v), "z1", &built)
	if got := IDs(p.Entries()); !slices.Equal(got, []string{"a", "d"}) {
		t.Fatalf("entries = %v", got)
	}
	if e := p.Entries()[0]; e.URL != "http://a:1" || e.Value.url != e.URL {
		t.Fatalf("entry = %+v", e)
	}
}

func TestPoolRankedSameZoneFirstThenScore(t *testing.T) {
	ms := []cluster.Member{zoned("node-a", "z2", cluster.StateAlive, "storage"),
		zoned("node-b", "z1", cluster.StateAlive, "storage"), zoned("node-c", "z1", cluster.StateAlive, "storage"),
		zoned("node-d", "z2", cluster.StateAlive, "storage")}
	var built []*value
	p := newTestPool(cluster.NewStatic(cluster.NewView("gw", ms, time.Time{})), "z1", &built)
	key := []byte("some key")
	byScore := func(a, b string) []string {
		if rendezvous.Score(a, key) >= rendezvous.Score(b, key) {
			return []string{a, b}
		}
		return []string{b, a}
	}
	want := append(byScore("node-b", "node-c"), byScore("node-a", "node-d")...)
	if got := IDs(p.Ranked(key)); !slices.Equal(got, want) {
		t.Fatalf("ranked = %v, want %v", got, want)
	}
	// No zone preference: the spec vector order for "hello world" is b, a, d, c.
	for i := range ms {
		ms[i].Zone = ""
	}
	pz := newTestPool(cluster.NewStatic(cluster.NewView("gw", ms, time.Time{})), "", &built)
	hello := helloKey()
	if got := IDs(pz.Ranked(hello)); !slices.Equal(got, []string{"node-b", "node-a", "node-d", "node-c"}) {
		t.Fatalf("ranked = %v", got)
	}
	if len(pz.Ranked(nil)) != 4 {
		t.Fatal("the reader key must rank every member")
	}
}

func TestPoolFollowsMembership(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := cluster.NewStatic(cluster.NewView("gw", []cluster.Member{
			zoned("a", "", cluster.StateAlive, "storage"), zoned("b", "", cluster.StateAlive, "storage")}, time.Time{}))
		var built []*value
		p := newTestPool(m, "", &built)
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() { done <- p.Run(ctx) }()
		synctest.Wait()
		a, b := built[0], built[1]

		// b dies, c joins, a moves to another URL.
		moved := zoned("a", "", cluster.StateAlive, "storage")
		moved.URLs["storage"] = "http://a:2/"
		m.Set(cluster.NewView("gw", []cluster.Member{moved, zoned("b", "", cluster.StateDead, "storage"),
			zoned("c", "", cluster.StateAlive, "storage")}, time.Time{}))
		synctest.Wait()
		if got := IDs(p.Entries()); !slices.Equal(got, []string{"a", "c"}) {
			t.Fatalf("entries = %v", got)
		}
		if !b.retired || !a.retired {
			t.Fatalf("retired: a %v b %v, want both", a.retired, b.retired)
		}
		if e := p.Entries()[0]; e.URL != "http://a:2" || e.Value == a {
			t.Fatalf("a not rebuilt at its new URL: %+v", e)
		}
		c := p.Entries()[1].Value
		// A change that keeps the members keeps their values.
		m.Set(m.View())
		synctest.Wait()
		if p.Entries()[1].Value != c || c.retired || len(built) != 4 {
			t.Fatalf("unchanged member rebuilt or retired (built %d)", len(built))
		}
		cancel()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if !c.retired {
			t.Fatal("Run must retire the values at exit")
		}
	})
}

func TestPoolSynced(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := cluster.NewStatic(cluster.NewView("gw", nil, time.Time{}))
		var built []*value
		p := newTestPool(m, "", &built)
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() { done <- p.Run(ctx) }()
		synctest.Wait()
		ch := p.Synced()
		select {
		case <-ch:
			t.Fatal("closed before a change")
		default:
		}
		m.Set(cluster.NewView("gw", []cluster.Member{zoned("a", "", cluster.StateAlive, "storage")}, time.Time{}))
		<-ch
		if p.Len() != 1 {
			t.Fatalf("len = %d after sync", p.Len())
		}
		cancel()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	})
}

// helloKey is the digest of "hello world" (the docs/cluster.md §3 vector).
func helloKey() []byte {
	id := store.Sum([]byte("hello world"))
	return id[:]
}
