package cluster

import (
	"net"
	"slices"
	"testing"
	"time"

	"github.com/hashicorp/memberlist"
)

// TestGossipReconnect: a member that a marked dead comes back on the same
// address knowing nobody (no join addresses), and a has stopped gossiping
// to it (GossipToTheDeadTime of 1 ns): memberlist alone never brings them
// together (a probes and exchanges state only with members it holds alive;
// b knows no one), only a's reconnect does. Both must see each other alive
// within convergeTimeout (10 s; a's reconnect interval here is 300 ms, the
// TCP timeout of fastGossip).
func TestGossipReconnect(t *testing.T) {
	noDeadGossip := func(conf *memberlist.Config) { conf.GossipToTheDeadTime = time.Nanosecond }
	a := startNode(t, nodeSpec{id: "a", key: 1, tune: noDeadGossip})
	port := freePort(t)
	b := startNode(t, nodeSpec{id: "b", key: 1, port: port.n, join: []string{a.addr()}})
	waitView(t, a, "a and b alive", allAlive("a", "b"))
	waitView(t, b, "a and b alive", allAlive("a", "b"))

	b.stopNode(false) // a crash: no goodbye
	waitView(t, a, "b dead", memberIs("b", StateDead))
	if got := a.rejoin.Load(); got.dead != 1 || len(got.targets) != 1 || got.targets[0].addr != net.JoinHostPort("127.0.0.1", port.str) {
		t.Fatalf("a's reconnect plan: %+v", got)
	}

	start := time.Now()
	b2 := startNode(t, nodeSpec{id: "b", key: 1, port: port.n}) // joins nobody
	waitView(t, a, "b back", allAlive("a", "b"))
	waitView(t, b2, "a seen", allAlive("a", "b"))
	t.Logf("both alive %s after b restarted", time.Since(start).Round(time.Millisecond))
	if got := a.rejoin.Load(); got.dead != 0 {
		t.Fatalf("a's reconnect plan after b is back: %+v", got)
	}
	// The attempt is counted when Join returns, which may be after b's
	// answer made it alive in a's View.
	ok := `reconnects_total{role="node",result="ok"}`
	poll(t, "a counts a successful reconnect", func() bool { return metricValue(a.Cluster, ok) >= 1 })
}

// poll checks cond every 10 ms until it holds, failing the test after
// convergeTimeout.
func poll(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(convergeTimeout)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s", what, convergeTimeout)
		}
		<-tick.C
	}
}

func TestRejoinPlan(t *testing.T) {
	tb, _ := newTestTable(false)
	ev := func(kind eventKind, id, addr string, left bool) {
		tb.apply(nodeEvent{kind: kind, name: id, meta: rawMeta(t, id, ""), addr: addr, left: left}, testEpoch)
	}
	ev(evJoin, "alive", "10.0.0.1:7946", false)
	ev(evJoin, "dead", "10.0.0.2:7946", false)
	ev(evLeave, "dead", "", false) // no address: the last one stays
	ev(evJoin, "left", "10.0.0.3:7946", false)
	ev(evLeave, "left", "10.0.0.3:7946", true)
	ev(evJoin, "moved", "10.0.0.1:7946", false) // its address now belongs to "alive"
	ev(evLeave, "moved", "", false)
	ev(evLeave, "noaddr", "", false)
	ev(evJoin, "dead2", "10.0.0.0:7946", false)
	ev(evLeave, "dead2", "10.0.0.0:7946", false)

	p := tb.rejoinPlan()
	if p.dead != 4 || p.alive != 2 {
		t.Fatalf("dead %d alive %d, want 4 and 2 (self counts)", p.dead, p.alive)
	}
	want := []rejoinTarget{{"dead2", "10.0.0.0:7946"}, {"dead", "10.0.0.2:7946"}}
	if !slices.Equal(p.targets, want) {
		t.Fatalf("targets %v, want %v (no left member, no taken or unknown address)", p.targets, want)
	}
	if !p.taken["10.0.0.1:7946"] || len(p.taken) != 1 {
		t.Fatalf("taken %v", p.taken)
	}

	// Back alive: no longer a target.
	ev(evJoin, "dead", "10.0.0.2:7946", false)
	ev(evJoin, "dead2", "10.0.0.0:7946", false)
	if p := tb.rejoinPlan(); p.dead != 2 || len(p.targets) != 0 || p.alive != 4 {
		t.Fatalf("after the rejoins: %+v", p)
	}
}

func TestRejoinNext(t *testing.T) {
	p := &rejoinPlan{
		dead: 2, alive: 3,
		targets: []rejoinTarget{{"d1", "10.0.0.1:7946"}, {"d2", "10.0.0.2:7946"}},
		taken:   map[string]bool{"10.0.0.9:7946": true},
	}
	join := []string{"10.0.0.2:7946", "10.0.0.9:7946", "10.0.0.5:7946", "seed.example:7946", "10.0.0.8:7946"}
	self := "10.0.0.8:7946"
	var got []rejoinTarget
	last := ""
	for range 5 {
		tg, ok := p.next(last, join, self)
		if !ok {
			t.Fatal("no target")
		}
		got, last = append(got, tg), tg.addr
	}
	// Address order, wrapping; d2's address once and as d2; the taken
	// address and self skipped.
	want := []rejoinTarget{{"d1", "10.0.0.1:7946"}, {"d2", "10.0.0.2:7946"}, {"", "10.0.0.5:7946"}, {"", "seed.example:7946"}, {"d1", "10.0.0.1:7946"}}
	if !slices.Equal(got, want) {
		t.Fatalf("rotation %v\nwant     %v", got, want)
	}
	if _, ok := (&rejoinPlan{}).next("", join, self); ok {
		t.Fatal("a target although no member is dead")
	}
	if _, ok := (&rejoinPlan{dead: 1, alive: 2}).next("", []string{self}, self); ok {
		t.Fatal("a target although only self is a candidate")
	}
}

func TestRejoinAttempt(t *testing.T) {
	cases := []struct {
		dead, alive int
		r           float64
		want        bool
	}{
		{0, 1, 0, false},
		{1, 1, 0.999, true},
		{2, 2, 0.999, true},
		{3, 1, 0.999, true},
		{1, 4, 0.24, true},
		{1, 4, 0.25, false},
		{1, 4, 0.9, false},
	}
	for _, tc := range cases {
		if got := (&rejoinPlan{dead: tc.dead, alive: tc.alive}).attempt(tc.r); got != tc.want {
			t.Errorf("dead %d alive %d r %v: attempt %t, want %t", tc.dead, tc.alive, tc.r, got, tc.want)
		}
	}
}

// TestReconnectInterval holds the documented intervals (docs/cluster.md §2).
func TestReconnectInterval(t *testing.T) {
	for profile, want := range map[string]time.Duration{ProfileLocal: time.Second, ProfileLAN: 10 * time.Second} {
		c := newTestCluster(t, "a", func(o *Options) { o.Config.Profile = profile })
		conf, err := c.memberlistConfig(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if got := reconnectInterval(conf); got != want {
			t.Errorf("%s: reconnect interval %s, want %s", profile, got, want)
		}
	}
	if got := reconnectInterval(&memberlist.Config{PushPullInterval: time.Second, TCPTimeout: 2 * time.Second}); got != 2*time.Second {
		t.Errorf("below the TCP timeout: %s", got)
	}
}
