package cluster

import (
	"context"
	"net"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/memberlist"

	"github.com/ronhq/ron/runtime"
)

// convergeTimeout bounds every wait on real gossip in these tests.
const convergeTimeout = 10 * time.Second

// fastGossip is DefaultLocalConfig with an ephemeral port (unless the test
// pinned one) and shorter intervals, so loopback clusters converge and
// detect failures in well under a second. memberlist's shutdown does not
// wait for a probe in flight; without awareness scaling such a probe ends
// within one 100 ms probe interval, well inside goleak's retries.
func fastGossip(port int) func(*memberlist.Config) {
	return func(conf *memberlist.Config) {
		conf.BindPort, conf.AdvertisePort = port, port
		conf.ProbeInterval, conf.ProbeTimeout = 100*time.Millisecond, 50*time.Millisecond
		conf.AwarenessMaxMultiplier, conf.SuspicionMaxTimeoutMult = 1, 2
		conf.GossipInterval, conf.PushPullInterval = 20*time.Millisecond, 500*time.Millisecond
		conf.GossipToTheDeadTime, conf.TCPTimeout = time.Second, 300*time.Millisecond
	}
}

// gossipNode starts a Cluster on 127.0.0.1 running until the test ends.
type gossipNode struct {
	*Cluster
	wg sync.WaitGroup
}

type nodeSpec struct {
	id   string
	key  byte
	join []string
	port int // 0: ephemeral
	// tune adjusts the memberlist config after fastGossip (nil: nothing).
	tune func(*memberlist.Config)
}

func startNode(t *testing.T, spec nodeSpec) *gossipNode {
	t.Helper()
	fast := runtime.Backoff{Base: 20 * time.Millisecond, Max: 50 * time.Millisecond, Factor: 2}
	c := newTestCluster(t, spec.id, func(o *Options) {
		o.Config.Profile = ProfileLocal
		o.Config.Join = spec.join
		o.Key = testKey(spec.key)
		o.tune, o.joinBackoff = fastGossip(spec.port), &fast
		if spec.tune != nil {
			base := o.tune
			o.tune = func(conf *memberlist.Config) { base(conf); spec.tune(conf) }
		}
	})
	if err := c.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	n := &gossipNode{Cluster: c}
	n.wg.Go(func() { // the node's Run: ended by Stop in the cleanup
		if err := c.Run(context.Background()); err != nil {
			t.Errorf("Run(%s): %v", spec.id, err)
		}
	})
	t.Cleanup(func() { n.stopNode(true) })
	return n
}

// stopNode stops the node (with a goodbye when leave) and waits for Run.
func (n *gossipNode) stopNode(leave bool) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	n.stop(ctx, leave)
	n.wg.Wait()
}

func (n *gossipNode) addr() string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.ml.LocalNode().Address()
}

// waitView waits until cond holds for n's View, failing after convergeTimeout.
func waitView(t *testing.T, n *gossipNode, what string, cond func(*View) bool) {
	t.Helper()
	sub, cancel := n.Subscribe()
	defer cancel()
	deadline := time.NewTimer(convergeTimeout)
	defer deadline.Stop()
	for !cond(n.View()) {
		select {
		case <-sub:
		case <-deadline.C:
			t.Fatalf("%s: %s not reached; view %v", n.id, what, summary(n.View().Members))
		}
	}
}

// states returns id → state of v's members.
func states(v *View) map[string]State {
	out := map[string]State{}
	for _, m := range v.Members {
		out[m.ID] = m.State
	}
	return out
}

func allAlive(ids ...string) func(*View) bool {
	return func(v *View) bool {
		st := states(v)
		for _, id := range ids {
			if st[id] != StateAlive {
				return false
			}
		}
		return len(st) == len(ids)
	}
}

func memberIs(id string, state State) func(*View) bool {
	return func(v *View) bool { return states(v)[id] == state }
}

// TestGossip runs three nodes on loopback through convergence, a metadata
// update, a graceful stop and a crash.
func TestGossip(t *testing.T) {
	a := startNode(t, nodeSpec{id: "a", key: 1})
	b := startNode(t, nodeSpec{id: "b", key: 1, join: []string{a.addr()}})
	c := startNode(t, nodeSpec{id: "c", key: 1, join: []string{b.addr(), a.addr()}})
	nodes := []*gossipNode{a, b, c}
	if !b.joined.Load() || !c.joined.Load() || !a.joined.Load() {
		t.Fatal("a join at Start did not count as joined")
	}

	t.Run("converge", func(t *testing.T) {
		for _, n := range nodes {
			waitView(t, n, "all alive", allAlive("a", "b", "c"))
			if got := n.Ready(); len(got) != 0 {
				t.Fatalf("%s not ready: %v", n.id, got)
			}
		}
		m, _ := a.View().Member("b")
		if m.URL("storage") != "http://b:5303" || !m.HasRole("storage") {
			t.Fatalf("b as a sees it: %+v", m)
		}
		if got := metricValue(a.Cluster, `members{role="node",state="alive"}`); got != 3 {
			t.Fatalf("alive gauge on a = %v", got)
		}
	})

	t.Run("metadata update", func(t *testing.T) {
		if err := b.UpdateMeta(Meta{ID: "b", Zone: "eu-2", Roles: []string{"storage", "index"}}); err != nil {
			t.Fatal(err)
		}
		for _, n := range nodes {
			waitView(t, n, "b in eu-2", func(v *View) bool {
				m, ok := v.Member("b")
				return ok && m.Zone == "eu-2" && m.HasRole("index")
			})
		}
	})

	t.Run("stop is left", func(t *testing.T) {
		c.stopNode(true)
		for _, n := range []*gossipNode{a, b} {
			waitView(t, n, "c left", memberIs("c", StateLeft))
		}
		if got := c.Ready(); !slices.Equal(got, []string{NotReadyGossip}) {
			t.Fatalf("Ready after Stop = %v", got)
		}
	})

	t.Run("crash is dead", func(t *testing.T) {
		b.stopNode(false)
		waitView(t, a, "b dead", memberIs("b", StateDead))
		st := a.Status()
		if len(st.Members) != 3 || st.NodeID != "a" {
			t.Fatalf("status %+v", st)
		}
	})
}

// TestGossipOtherKey: a node with another key cannot join.
func TestGossipOtherKey(t *testing.T) {
	a := startNode(t, nodeSpec{id: "a", key: 1})
	x := startNode(t, nodeSpec{id: "x", key: 2, join: []string{a.addr()}})
	if x.joined.Load() {
		t.Fatal("a node with another key joined")
	}
	if n := x.ml.NumMembers(); n != 1 {
		t.Fatalf("x knows %d members", n)
	}
	if n := a.ml.NumMembers(); n != 1 {
		t.Fatalf("a knows %d members", n)
	}
	if got := len(x.View().Members); got != 1 {
		t.Fatalf("x's view has %d members", got)
	}
}

// TestGossipRejoin: a node whose seed is down at start joins it once it is up.
func TestGossipRejoin(t *testing.T) {
	port := freePort(t)
	seed := net.JoinHostPort("127.0.0.1", port.str)
	b := startNode(t, nodeSpec{id: "b", key: 1, join: []string{seed}})
	if b.joined.Load() {
		t.Fatal("joined a seed that is not running")
	}
	startNode(t, nodeSpec{id: "a", key: 1, port: port.n})
	waitView(t, b, "a alive", allAlive("a", "b"))
}

// TestGossipNameConflict: a second node claiming an id is not ready.
func TestGossipNameConflict(t *testing.T) {
	a := startNode(t, nodeSpec{id: "a", key: 1})
	dup := startNode(t, nodeSpec{id: "a", key: 1, join: []string{a.addr()}})
	if got := dup.Ready(); !slices.Contains(got, NotReadyNameConflict) {
		t.Fatalf("Ready of the duplicate = %v", got)
	}
	if got := metricValue(dup.Cluster, `member_events_total{role="node",event="conflict"}`); got < 1 {
		t.Fatalf("conflicts counted = %v", got)
	}
}

type portNum struct {
	n   int
	str string
}

// freePort returns a loopback port that was free a moment ago.
func freePort(t *testing.T) portNum {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	_, p, _ := net.SplitHostPort(l.Addr().String())
	return portNum{n: l.Addr().(*net.TCPAddr).Port, str: p}
}
