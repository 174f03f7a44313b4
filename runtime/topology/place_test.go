package topology

import (
	"testing"
	"time"

	"github.com/ronhq/ron/runtime/cluster"
)

func TestFindOrdersInProcessThenConfiguredThenMembers(t *testing.T) {
	m := cluster.NewStatic(cluster.NewView("self", nil, time.Time{}))
	for _, tc := range []struct {
		local bool
		url   string
		m     cluster.Membership
		want  Place
	}{
		{true, "http://x", m, InProcess},
		{true, "", nil, InProcess},
		{false, "http://x", m, Configured},
		{false, "http://x", nil, Configured},
		{false, "", m, Members},
		{false, "", nil, Nowhere},
	} {
		if got := Find(tc.local, tc.m, tc.url); got != tc.want {
			t.Errorf("Find(%v, %q, cluster=%v) = %v, want %v", tc.local, tc.url, tc.m != nil, got, tc.want)
		}
	}
	if Find(false, nil, "", "http://y") != Configured || Find(false, nil, "", "") != Nowhere || Find(false, m) != Members {
		t.Error("Find over a list of URLs")
	}
	for p, s := range map[Place]string{Nowhere: "none", InProcess: "in-process", Configured: "http", Members: "cluster members"} {
		if p.String() != s {
			t.Errorf("%d.String() = %q, want %q", p, p.String(), s)
		}
	}
}

func TestRouteRanksItsFixedValueOrItsPool(t *testing.T) {
	var nilRoute *Route[int]
	if es := nilRoute.Ranked(nil); es != nil || nilRoute.Pool() != nil {
		t.Fatalf("nil route ranked %v", es)
	}
	if _, ok := nilRoute.Fixed(); ok {
		t.Fatal("nil route has a fixed value")
	}
	url := "http://a"
	r := FixedRoute(7, func() string { return url })
	url = "http://b" // asked at every Ranked
	if es := r.Ranked([]byte("k")); len(es) != 1 || es[0].Value != 7 || es[0].URL != "http://b" {
		t.Fatalf("fixed ranked %+v", es)
	}
	if v, ok := r.Fixed(); !ok || v != 7 || r.Pool() != nil {
		t.Fatalf("fixed = %v %v", v, ok)
	}
	if es := FixedRoute(1, nil).Ranked(nil); es[0].URL != "" {
		t.Fatalf("fixed without url ranked %+v", es)
	}
	v := cluster.NewView("gw", []cluster.Member{zoned("a", "", cluster.StateAlive, "storage"),
		zoned("b", "", cluster.StateAlive, "storage")}, time.Time{})
	var built []*value
	p := newTestPool(cluster.NewStatic(v), "", &built)
	pr := PoolRoute(p)
	if _, ok := pr.Fixed(); ok || pr.Pool() != p {
		t.Fatal("pool route has a fixed value")
	}
	key := []byte("k")
	if got, want := IDs(pr.Ranked(key)), IDs(p.Ranked(key)); len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("pool route ranked %v, pool %v", got, want)
	}
}
