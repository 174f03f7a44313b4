package cluster

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/hashicorp/memberlist"
	"github.com/rs/zerolog"

	"github.com/ronhq/ron/runtime"
)

const testForget = time.Minute

func testKey(b byte) []byte { return slices.Repeat([]byte{b}, KeySize) }

// testOptions returns valid options for node id with the storage role.
func testOptions(id string) Options {
	cfg := DefaultConfig()
	cfg.Enabled = true
	cfg.RepairAfter, cfg.ForgetAfter = 10*time.Second, testForget
	return Options{
		Config:  cfg,
		NodeID:  id,
		Key:     testKey(1),
		Meta:    Meta{Roles: []string{"storage"}, URLs: map[string]string{"storage": "http://" + id + ":5303"}},
		Log:     zerolog.Nop(),
		Metrics: runtime.NewMetrics(nil),
	}
}

func newTestCluster(t *testing.T, id string, edit func(*Options)) *Cluster {
	t.Helper()
	opt := testOptions(id)
	if edit != nil {
		edit(&opt)
	}
	c, err := New(opt)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// runOwner runs c's table owner until the test ends.
func runOwner(t *testing.T, c *Cluster) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { // table owner under test: stopped by the cleanup
		defer close(done)
		c.own(ctx)
	}()
	t.Cleanup(func() { cancel(); <-done })
}

func node(id string, meta []byte, state memberlist.NodeStateType) *memberlist.Node {
	return &memberlist.Node{Name: id, Meta: meta, State: state}
}

func viewSummary(c *Cluster) []string { return summaryAt(c.View().Members, c.born) }

// summaryAt renders members like summary, with since relative to t0.
func summaryAt(ms []Member, t0 time.Time) []string {
	out := summary(ms)
	for i, m := range ms {
		out[i] = strings.Replace(out[i], "@"+m.Since.Sub(testEpoch).String(), "@"+m.Since.Sub(t0).String(), 1)
	}
	return out
}

func metricValue(c *Cluster, series string) float64 {
	return c.metrics.m.Values()["ron_cluster_"+series]
}

func signalled(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

func TestOwnerEvents(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newTestCluster(t, "a", nil)
		sub, unsub := c.Subscribe()
		defer unsub()
		runOwner(t, c)
		d := delegate{c: c}
		synctest.Wait()
		if got := viewSummary(c); !slices.Equal(got, []string{"a:alive::[storage]@0s"}) || signalled(sub) {
			t.Fatalf("initial view %v", got)
		}

		time.Sleep(2 * time.Second)
		d.NotifyJoin(node("a", rawMeta(t, "a", "x", "edge"), memberlist.StateAlive)) // self: ignored
		d.NotifyJoin(node("b", rawMeta(t, "b", "z1", "storage"), memberlist.StateAlive))
		d.NotifyJoin(node("c", rawMeta(t, "c", "z2", "index"), memberlist.StateAlive))
		synctest.Wait()
		want := []string{"a:alive::[storage]@0s", "b:alive:z1:[storage]@2s", "c:alive:z2:[index]@2s"}
		if got := viewSummary(c); !slices.Equal(got, want) || !signalled(sub) {
			t.Fatalf("after joins %v, want %v", got, want)
		}
		if v := c.View(); !v.Changed.Equal(c.born.Add(2*time.Second)) || v.Self != "a" {
			t.Fatalf("changed %v self %q", v.Changed, v.Self)
		}
		if m, _ := c.View().Member("b"); m.URL("storage") != "http://b:1/storage" {
			t.Fatalf("member b = %+v", m)
		}

		time.Sleep(time.Second)
		d.NotifyUpdate(node("b", rawMeta(t, "b", "z9", "storage"), memberlist.StateAlive))
		d.NotifyUpdate(node("c", rawMeta(t, "c", "z2", "index"), memberlist.StateAlive)) // unchanged
		synctest.Wait()
		if got := viewSummary(c); got[1] != "b:alive:z9:[storage]@2s" || !signalled(sub) {
			t.Fatalf("after update %v", got)
		}

		time.Sleep(time.Second)
		d.NotifyLeave(node("b", nil, memberlist.StateLeft))
		d.NotifyLeave(node("c", nil, memberlist.StateDead))
		synctest.Wait()
		want = []string{"a:alive::[storage]@0s", "b:left:z9:[storage]@4s", "c:dead:z2:[index]@4s"}
		if got := viewSummary(c); !slices.Equal(got, want) || !signalled(sub) {
			t.Fatalf("after leaves %v, want %v", got, want)
		}
		wantMetrics := map[string]float64{
			`members{role="node",state="alive"}`: 1, `members{role="node",state="dead"}`: 1, `members{role="node",state="left"}`: 1,
			`member_events_total{role="node",event="join"}`: 2, `member_events_total{role="node",event="update"}`: 1,
			`member_events_total{role="node",event="left"}`: 1, `member_events_total{role="node",event="dead"}`: 1,
			`member_events_total{role="node",event="conflict"}`: 0, `member_events_total{role="node",event="unlisted"}`: 0,
		}
		for series, want := range wantMetrics {
			if got := metricValue(c, series); got != want {
				t.Errorf("%s = %v, want %v", series, got, want)
			}
		}

		// Departed members are forgotten after forget_after, at an owner tick.
		time.Sleep(testForget - time.Second)
		synctest.Wait()
		if got := len(c.View().Members); got != 3 || signalled(sub) {
			t.Fatalf("forgotten early: %v", viewSummary(c))
		}
		time.Sleep(time.Second + ownerTick)
		synctest.Wait()
		if got := viewSummary(c); !slices.Equal(got, []string{"a:alive::[storage]@0s"}) || !signalled(sub) {
			t.Fatalf("after forget_after %v", got)
		}
		if got := metricValue(c, `members{role="node",state="dead"}`); got != 0 {
			t.Fatalf("dead gauge after forgetting = %v", got)
		}
	})
}

func TestOwnerUpdateMeta(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newTestCluster(t, "a", nil)
		runOwner(t, c)
		sub, unsub := c.Subscribe()
		defer unsub()
		bad := []Meta{
			{ID: "b"},
			{V: 2},
			{Zone: "no/zone"},
			{URLs: map[string]string{"storage": strings.Repeat("u", MaxMetaSize)}},
		}
		for _, m := range bad {
			if err := c.UpdateMeta(m); err == nil {
				t.Errorf("UpdateMeta(%+v) accepted", m)
			}
		}
		synctest.Wait()
		if signalled(sub) {
			t.Fatal("a refused update changed the view")
		}
		if err := c.UpdateMeta(Meta{ID: "a", Zone: "eu-1", Roles: []string{"storage", "index"}}); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		if got := viewSummary(c); !slices.Equal(got, []string{"a:alive:eu-1:[storage index]@0s"}) || !signalled(sub) {
			t.Fatalf("after UpdateMeta %v", got)
		}
		if raw := (delegate{c: c}).NodeMeta(MaxMetaSize); !strings.Contains(string(raw), `"zone":"eu-1"`) {
			t.Fatalf("NodeMeta = %s", raw)
		}
		if st := c.Status(); st.Zone != "eu-1" || st.NodeID != "a" || len(st.Members) != 1 {
			t.Fatalf("status %+v", st)
		}
	})
}

func TestOwnerAllowList(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		var listed map[string]bool
		c := newTestCluster(t, "a", func(o *Options) {
			o.AllowList = func() (map[string]bool, bool) {
				mu.Lock()
				defer mu.Unlock()
				return listed, listed != nil
			}
		})
		runOwner(t, c)
		d := delegate{c: c}
		for _, id := range []string{"b", "c"} {
			d.NotifyJoin(node(id, rawMeta(t, id, ""), memberlist.StateAlive))
		}
		synctest.Wait()
		ids := func() []string {
			var out []string
			for _, m := range c.View().Members {
				out = append(out, m.ID)
			}
			return out
		}
		if got := ids(); !slices.Equal(got, []string{"a"}) {
			t.Fatalf("before the registry answered: %v", got)
		}
		mu.Lock()
		listed = map[string]bool{"a": true, "b": true}
		mu.Unlock()
		time.Sleep(ownerTick)
		synctest.Wait()
		if got := ids(); !slices.Equal(got, []string{"a", "b"}) {
			t.Fatalf("with b listed: %v", got)
		}
		if got := metricValue(c, `member_events_total{role="node",event="unlisted"}`); got != 1 {
			t.Fatalf("unlisted = %v, want 1 (c, once)", got)
		}
		time.Sleep(5 * ownerTick)
		synctest.Wait()
		if got := metricValue(c, `member_events_total{role="node",event="unlisted"}`); got != 1 {
			t.Fatalf("unlisted = %v after ticks, want 1", got)
		}
	})
}

func TestConflict(t *testing.T) {
	c := newTestCluster(t, "a", nil)
	d := delegate{c: c}
	d.NotifyConflict(node("x", nil, memberlist.StateAlive), node("x", nil, memberlist.StateAlive))
	if slices.Contains(c.Ready(), NotReadyNameConflict) {
		t.Fatal("a conflict between other nodes made this node not ready")
	}
	d.NotifyConflict(node("a", nil, memberlist.StateAlive), node("a", nil, memberlist.StateAlive))
	if got := c.Ready(); !slices.Equal(got, []string{NotReadyGossip, NotReadyNameConflict}) {
		t.Fatalf("Ready = %v", got)
	}
	if got := metricValue(c, `member_events_total{role="node",event="conflict"}`); got != 2 {
		t.Fatalf("conflicts = %v, want 2", got)
	}
}

func TestOwnerSpill(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newTestCluster(t, "a", nil)
		c.inbox = newInbox(2)
		d := delegate{c: c}
		// Queued before the owner runs (as during Start): most spill.
		for i := range 20 {
			id := string(rune('b' + i))
			d.NotifyJoin(node(id, rawMeta(t, id, ""), memberlist.StateAlive))
			if i%2 == 0 {
				d.NotifyLeave(node(id, nil, memberlist.StateLeft))
			}
		}
		d.NotifyJoin(node("b", rawMeta(t, "b", "back"), memberlist.StateAlive))
		runOwner(t, c)
		synctest.Wait()
		states := map[string]State{}
		for _, m := range c.View().Members {
			states[m.ID+"/"+m.Zone] = m.State
		}
		if len(states) != 21 || states["b/back"] != StateAlive || states["c/"] != StateAlive || states["d/"] != StateLeft {
			t.Fatalf("states after a spill: %v", states)
		}
	})
}

func TestNewRejects(t *testing.T) {
	cases := []struct {
		name string
		edit func(*Options)
		want string
	}{
		{"bad config", func(o *Options) { o.Config.Profile = "wan" }, "cluster.profile"},
		{"bad node id", func(o *Options) { o.NodeID = "a b" }, "node id"},
		{"empty node id", func(o *Options) { o.NodeID = "" }, "node id"},
		{"short key", func(o *Options) { o.Key = testKey(1)[:16] }, "gossip key"},
		{"no key", func(o *Options) { o.Key = nil }, "gossip key"},
		{"meta for another id", func(o *Options) { o.Meta.ID = "other" }, "differs"},
		{"meta too large", func(o *Options) { o.Meta.URLs = map[string]string{"x": strings.Repeat("u", 600)} }, "gossip limit"},
		{"meta version", func(o *Options) { o.Meta.V = 3 }, "version"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			opt := testOptions("a")
			tc.edit(&opt)
			if _, err := New(opt); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("New = %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

func TestLifecycleErrors(t *testing.T) {
	c := newTestCluster(t, "a", nil)
	if err := c.Run(t.Context()); err == nil || !strings.Contains(err.Error(), "before Start") {
		t.Fatalf("Run before Start = %v", err)
	}
	if got := c.Ready(); !slices.Equal(got, []string{NotReadyGossip}) {
		t.Fatalf("Ready before Start = %v", got)
	}
	c.Stop(t.Context())
	c.Stop(t.Context())
	if err := c.Start(t.Context()); !errors.Is(err, errStopped) {
		t.Fatalf("Start after Stop = %v", err)
	}
	if err := c.Run(t.Context()); err != nil {
		t.Fatalf("Run after Stop = %v, want nil (nothing to do)", err)
	}
	if err := c.UpdateMeta(Meta{Zone: "z"}); err != nil {
		t.Fatalf("UpdateMeta after Stop = %v", err)
	}
}
