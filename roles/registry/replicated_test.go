package registry

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/ronhq/ron/httpx/auth"
	"github.com/ronhq/ron/httpx/client"
	"github.com/ronhq/ron/roles/registry/committer"
	"github.com/ronhq/ron/roles/registry/registryapi"
	"github.com/ronhq/ron/roles/registry/registryapi/descriptor"
	"github.com/ronhq/ron/roles/registry/segment"
	"github.com/ronhq/ron/roles/registry/tiles"
	"github.com/ronhq/ron/runtime/cluster"
	"github.com/ronhq/ron/runtime/consensus"
	"github.com/ronhq/ron/runtime/consensus/consensustest"
	"github.com/ronhq/ron/store/kv"
)

// TestReplicatedRoles runs three registry roles on one control plane
// (docs/cluster.md §14): the leader initialises the log from trust roots,
// commits go through the leader and through a follower (relayed over HTTP),
// every member's segment log, registry.db and checkpoint end identical, and
// a new leader commits on after the leader is detached.
func TestReplicatedRoles(t *testing.T) {
	signers := newSigners(t, 1)
	trPath, pin := writeTrustRoots(t, t.TempDir(), signers, 1)
	cfg := testConfig()
	cfg.TrustRoots, cfg.TrustRootsB3, cfg.AllowDevSigner = trPath, pin, false
	keys, err := auth.GenerateKeyring()
	if err != nil {
		t.Fatal(err)
	}
	ids := []string{"a", "b", "c"}
	static := cluster.NewStatic(cluster.NewView("a", nil, time.Now()))
	nodes := make([]*node, len(ids))
	planes := make([]*consensus.Plane, len(ids))
	var members []cluster.Member
	for i, id := range ids {
		opt := testOptions(t, cfg, t.TempDir())
		opt.Keys, opt.Plane, opt.Cluster, opt.Node.ID = keys, consensus.NewPlane(), static, id
		opt.ClusterConfig = cluster.Config{Enabled: true, Server: true}
		opt.Fatal = func(err error) { t.Errorf("%s: fatal: %v", id, err) }
		planes[i] = opt.Plane
		nodes[i] = startNode(t, opt, signers, 1)
		members = append(members, cluster.Member{ID: id, Roles: []string{registryapi.RoleName}, State: cluster.StateAlive,
			URLs: map[string]string{registryapi.RoleName: "http://" + nodes[i].Addr()}})
	}
	static.Set(cluster.NewView("a", members, time.Now()))
	consensustest.Planes(t, ids, planes)
	for _, n := range nodes {
		consensustest.Eventually(t, n.opt.Node.ID+" holds genesis", func() bool { return n.com.Head() != nil })
	}
	leader := leaderNode(t, nodes)
	var follower *node
	for _, n := range nodes {
		if n != leader {
			follower = n
		}
	}
	leader.commit("through the leader")

	// A write to a follower's listener is relayed to the leader.
	token, _, err := keys.Mint(auth.MintOptions{Scopes: []string{registryapi.ScopePropose, registryapi.ScopeApprove,
		registryapi.ScopeCommit}, TTL: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	cli := registryapi.NewHTTPClient("http://"+follower.Addr(), func(context.Context) (string, error) { return token, nil },
		client.Options{Timeout: consensustest.WaitBound})
	defer cli.Close()
	consensustest.Eventually(t, "the follower holds version 1", func() bool { return follower.com.Head().Version == 1 })
	ctx, cancel := context.WithTimeout(context.Background(), consensustest.WaitBound)
	defer cancel()
	p, err := cli.Propose(ctx, descriptor.ProposeRequest{SchemaVersion: "1.0.0",
		Payload: nextPayload(t, follower.com.Head().Set, "through a follower", time.Now())})
	if err != nil {
		t.Fatalf("propose on a follower: %v", err)
	}
	if _, err := cli.Approve(ctx, p.ProposalID, descriptor.Sign(signers[0].priv, signers[0].id, p.PayloadB3, time.Now())); err != nil {
		t.Fatalf("approve on a follower: %v", err)
	}
	c, err := cli.Commit(ctx, p.ProposalID)
	if err != nil || c.Version != 2 {
		t.Fatalf("commit on a follower: %+v, %v", c, err)
	}
	sameEverywhere(t, nodes, 2)

	// The leader goes; a new one commits on and keeps every acknowledged version.
	consensustest.Detach(t, leader.opt.Plane)
	var rest []*node
	for _, n := range nodes {
		if n != leader {
			rest = append(rest, n)
		}
	}
	next := leaderNode(t, rest)
	consensustest.Eventually(t, "the new leader takes writes", func() bool {
		return len(next.com.WriteUnready()) == 0
	})
	next.commit("after the change of leader")
	sameEverywhere(t, rest, 3)
}

// leaderNode waits until one of ns leads the control plane.
func leaderNode(t *testing.T, ns []*node) *node {
	t.Helper()
	var l *node
	consensustest.Eventually(t, "a leader", func() bool {
		for _, n := range ns {
			if n.opt.Plane.Group() != nil && n.opt.Plane.Freshness().Leader {
				l = n
				return true
			}
		}
		return false
	})
	return l
}

// sameEverywhere waits until every node holds HEAD head and its
// checkpoint covers it, then compares segment logs, checkpoints and log
// key files.
func sameEverywhere(t *testing.T, ns []*node, head uint64) {
	t.Helper()
	for _, n := range ns {
		consensustest.Eventually(t, fmt.Sprintf("%s covers HEAD %d", n.opt.Node.ID, head), func() bool {
			h := n.com.Head()
			return h != nil && h.Version == head && n.tree.Size() == head+1
		})
	}
	recs := func(n *node) []byte {
		var b bytes.Buffer
		if err := n.st.Log.Scan(0, head, func(r segment.Record) error {
			b.Write(r.Artifact)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	}
	key := func(n *node) []byte {
		b, err := os.ReadFile(tiles.LogKeyPath(n.opt.DataDir))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	db := func(n *node) string {
		var b bytes.Buffer
		err := n.st.RegDB.View(context.Background(), func(tx kv.Tx) error {
			for _, name := range []string{committer.BucketMeta, committer.BucketProposals} {
				if bk := tx.Bucket(name); bk != nil {
					cur := bk.Cursor()
					for k, v := cur.First(); k != nil; k, v = cur.Next() {
						fmt.Fprintf(&b, "%s/%s=%s\n", name, k, v)
					}
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	for _, n := range ns[1:] {
		if a, b := db(n), db(ns[0]); a != b {
			t.Fatalf("%s: registry.db differs:\n%s\n%s", n.opt.Node.ID, a, b)
		}
		if !bytes.Equal(recs(n), recs(ns[0])) {
			t.Fatalf("%s: segment log differs", n.opt.Node.ID)
		}
		if !bytes.Equal(n.tree.Checkpoint().Note, ns[0].tree.Checkpoint().Note) {
			t.Fatalf("%s: checkpoint differs:\n%s\n%s", n.opt.Node.ID, n.tree.Checkpoint().Note, ns[0].tree.Checkpoint().Note)
		}
		if !bytes.Equal(key(n), key(ns[0])) {
			t.Fatalf("%s: log key file differs", n.opt.Node.ID)
		}
	}
}

// TestReplicatedChainImport: the server that bootstraps the cluster alone
// brings the chain it held before the control plane into the log; a member
// added afterwards receives it and ends identical. A node with such a
// chain that is not that server refuses to start, naming the fix.
func TestReplicatedChainImport(t *testing.T) {
	signers := newSigners(t, 1)
	trPath, pin := writeTrustRoots(t, t.TempDir(), signers, 1)
	cfg := testConfig()
	cfg.TrustRoots, cfg.TrustRootsB3, cfg.AllowDevSigner = trPath, pin, false
	keys, err := auth.GenerateKeyring()
	if err != nil {
		t.Fatal(err)
	}
	dirA := t.TempDir()
	seedLog(t, dirA, signers, 1, 300, cfg.SegmentRecords) // more than one import entry
	plain := startNode(t, testOptions(t, cfg, dirA), signers, 1)
	plain.commit("before the control plane")
	plain.stop()

	static := cluster.NewStatic(cluster.NewView("a", nil, time.Now()))
	opts := func(id, dir string, cc cluster.Config) Options {
		opt := testOptions(t, cfg, dir)
		opt.Keys, opt.Plane, opt.Cluster, opt.Node.ID, opt.ClusterConfig = keys, consensus.NewPlane(), static, id, cc
		opt.Fatal = func(err error) { t.Errorf("%s: fatal: %v", id, err) }
		return opt
	}
	if err := New(opts("x", dirA, cluster.Config{Enabled: true, Server: true})).Start(context.Background()); err == nil ||
		!strings.Contains(err.Error(), "bootstrap_expect = 1") {
		t.Fatalf("a chain on a node that does not bootstrap alone: %v", err)
	}

	a := startNode(t, opts("a", dirA, cluster.Config{Enabled: true, Server: true, BootstrapExpect: 1}), signers, 1)
	if got := a.com.WriteUnready(); !slices.Contains(got, reasonImporting) {
		t.Fatalf("writes before the import: %v", got)
	}
	b := startNode(t, opts("b", t.TempDir(), cluster.Config{Enabled: true, Server: true}), signers, 1)
	static.Set(cluster.NewView("a", []cluster.Member{
		{ID: "a", State: cluster.StateAlive, URLs: map[string]string{registryapi.RoleName: "http://" + a.Addr()}},
		{ID: "b", State: cluster.StateAlive, URLs: map[string]string{registryapi.RoleName: "http://" + b.Addr()}}}, time.Now()))
	consensustest.Planes(t, []string{"a"}, []*consensus.Plane{a.opt.Plane})
	consensustest.Eventually(t, "the import", func() bool { return len(a.com.WriteUnready()) == 0 })

	g, err := consensus.Open(consensus.Options{ID: "b", Bind: "127.0.0.1:0", FSM: b.opt.Plane.FSM(),
		Profile: consensus.ProfileLocal, Log: zerolog.Nop()})
	if err != nil {
		t.Fatal(err)
	}
	b.opt.Plane.Attach(g)
	t.Cleanup(func() { consensustest.Detach(t, b.opt.Plane) })
	ctx, cancel := context.WithTimeout(context.Background(), consensustest.WaitBound)
	defer cancel()
	if err := a.opt.Plane.Group().AddServer(ctx, consensus.Server{ID: "b", Addr: g.Addr(), Voter: true}); err != nil {
		t.Fatal(err)
	}
	sameEverywhere(t, []*node{a, b}, 301)
	// a's in-process client writes only while a leads: under load b may
	// have won an election since it was added; hand leadership back.
	consensustest.Eventually(t, "a leads", func() bool {
		if b.opt.Plane.Freshness().Leader {
			hctx, hcancel := context.WithTimeout(context.Background(), 2*time.Second)
			b.opt.Plane.Group().HandOff(hctx)
			hcancel()
		}
		return a.opt.Plane.Freshness().Leader
	})
	a.commit("on the control plane")
	sameEverywhere(t, []*node{a, b}, 302)
}
