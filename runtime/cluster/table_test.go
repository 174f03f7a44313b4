package cluster

import (
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/rs/zerolog"
)

var testEpoch = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// rawMeta encodes metadata for id in zone with roles, failing the test on error.
func rawMeta(t testing.TB, id, zone string, roles ...string) []byte {
	t.Helper()
	urls := map[string]string{}
	for _, r := range roles {
		urls[r] = "http://" + id + ":1/" + r
	}
	b, err := EncodeMeta(Meta{ID: id, Zone: zone, Roles: roles, URLs: urls})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// leavingMeta adds the leaving announcement to encoded metadata.
func leavingMeta(t testing.TB, raw []byte) []byte {
	t.Helper()
	m, _, err := decodeMeta(raw)
	if err != nil {
		t.Fatal(err)
	}
	b, err := encodeWire(wireMeta{Meta: m, Leaving: true})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// counts is a member event counter for tables under test.
type counts map[string]int

func (c counts) add(ev string) { c[ev]++ }

func newTestTable(allowListOn bool) (*table, counts) {
	n := counts{}
	return newTable("self", time.Hour, allowListOn, zerolog.Nop(), n.add), n
}

var selfM = Member{ID: "self", State: StateAlive, Since: testEpoch}

// summary renders members as "id:state:zone:roles@offset" for comparison.
func summary(ms []Member) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = fmt.Sprintf("%s:%s:%s:%v@%s", m.ID, m.State, m.Zone, m.Roles, m.Since.Sub(testEpoch))
	}
	return out
}

func TestTableEvents(t *testing.T) {
	a1, a2 := rawMeta(t, "a", "z1", "storage"), rawMeta(t, "a", "z2", "storage")
	b1 := rawMeta(t, "b", "", "index")
	type step struct {
		at time.Duration
		ev nodeEvent
	}
	cases := []struct {
		name   string
		steps  []step
		now    time.Duration
		want   []string
		counts counts
	}{
		{"join", []step{{1 * time.Second, nodeEvent{kind: evJoin, name: "a", meta: a1}}}, 2 * time.Second,
			[]string{"self:alive::[]@0s", "a:alive:z1:[storage]@1s"}, counts{"join": 1}},
		{"self ignored", []step{{1 * time.Second, nodeEvent{kind: evJoin, name: "self", meta: rawMeta(t, "self", "zz", "edge")}},
			{2 * time.Second, nodeEvent{kind: evLeave, name: "self", left: true}}}, 3 * time.Second,
			[]string{"self:alive::[]@0s"}, counts{}},
		{"update keeps since", []step{{1 * time.Second, nodeEvent{kind: evJoin, name: "a", meta: a1}},
			{5 * time.Second, nodeEvent{kind: evUpdate, name: "a", meta: a2}}}, 6 * time.Second,
			[]string{"self:alive::[]@0s", "a:alive:z2:[storage]@1s"}, counts{"join": 1, "update": 1}},
		{"same meta is no update", []step{{1 * time.Second, nodeEvent{kind: evJoin, name: "a", meta: a1}},
			{2 * time.Second, nodeEvent{kind: evUpdate, name: "a", meta: a1}}}, 3 * time.Second,
			[]string{"self:alive::[]@0s", "a:alive:z1:[storage]@1s"}, counts{"join": 1}},
		{"update of unknown is a join", []step{{1 * time.Second, nodeEvent{kind: evUpdate, name: "a", meta: a1}}}, 2 * time.Second,
			[]string{"self:alive::[]@0s", "a:alive:z1:[storage]@1s"}, counts{"join": 1}},
		{"left and dead", []step{{1 * time.Second, nodeEvent{kind: evJoin, name: "a", meta: a1}},
			{1 * time.Second, nodeEvent{kind: evJoin, name: "b", meta: b1}},
			{3 * time.Second, nodeEvent{kind: evLeave, name: "a", left: true}},
			{4 * time.Second, nodeEvent{kind: evLeave, name: "b"}}}, 5 * time.Second,
			[]string{"self:alive::[]@0s", "a:left:z1:[storage]@3s", "b:dead::[index]@4s"},
			counts{"join": 2, "left": 1, "dead": 1}},
		{"second leave ignored", []step{{1 * time.Second, nodeEvent{kind: evJoin, name: "a", meta: a1}},
			{3 * time.Second, nodeEvent{kind: evLeave, name: "a"}},
			{4 * time.Second, nodeEvent{kind: evLeave, name: "a", left: true}}}, 5 * time.Second,
			[]string{"self:alive::[]@0s", "a:dead:z1:[storage]@3s"}, counts{"join": 1, "dead": 1}},
		{"leave of unknown recorded", []step{{1 * time.Second, nodeEvent{kind: evLeave, name: "a", meta: a1, left: true}}}, 2 * time.Second,
			[]string{"self:alive::[]@0s", "a:left:z1:[storage]@1s"}, counts{"left": 1}},
		{"rejoin resets since", []step{{1 * time.Second, nodeEvent{kind: evJoin, name: "a", meta: a1}},
			{3 * time.Second, nodeEvent{kind: evLeave, name: "a"}},
			{7 * time.Second, nodeEvent{kind: evJoin, name: "a", meta: a2}}}, 8 * time.Second,
			[]string{"self:alive::[]@0s", "a:alive:z2:[storage]@7s"}, counts{"join": 2, "dead": 1}},
		{"leaving announcement is left", []step{{1 * time.Second, nodeEvent{kind: evJoin, name: "a", meta: a1}},
			{3 * time.Second, nodeEvent{kind: evUpdate, name: "a", meta: leavingMeta(t, a1)}},
			{4 * time.Second, nodeEvent{kind: evLeave, name: "a", meta: leavingMeta(t, a1)}}}, 5 * time.Second,
			[]string{"self:alive::[]@0s", "a:left:z1:[storage]@3s"}, counts{"join": 1, "left": 1}},
		{"back after leaving", []step{{1 * time.Second, nodeEvent{kind: evJoin, name: "a", meta: a1}},
			{3 * time.Second, nodeEvent{kind: evUpdate, name: "a", meta: leavingMeta(t, a1)}},
			{4 * time.Second, nodeEvent{kind: evLeave, name: "a", meta: leavingMeta(t, a1)}},
			{6 * time.Second, nodeEvent{kind: evJoin, name: "a", meta: a1}}}, 7 * time.Second,
			[]string{"self:alive::[]@0s", "a:alive:z1:[storage]@6s"}, counts{"join": 2, "left": 1}},
		{"first seen leaving", []step{{1 * time.Second, nodeEvent{kind: evJoin, name: "a", meta: leavingMeta(t, a1)}}}, 2 * time.Second,
			[]string{"self:alive::[]@0s", "a:left:z1:[storage]@1s"}, counts{"left": 1}},
		{"dead returns with the same metadata", []step{{1 * time.Second, nodeEvent{kind: evJoin, name: "a", meta: a1}},
			{2 * time.Second, nodeEvent{kind: evLeave, name: "a", meta: a1}},
			{3 * time.Second, nodeEvent{kind: evJoin, name: "a", meta: a1}}}, 4 * time.Second,
			[]string{"self:alive::[]@0s", "a:alive:z1:[storage]@3s"}, counts{"join": 2, "dead": 1}},
		{"forgotten after forget_after", []step{{1 * time.Second, nodeEvent{kind: evJoin, name: "a", meta: a1}},
			{2 * time.Second, nodeEvent{kind: evLeave, name: "a"}}}, 2*time.Second + time.Hour,
			[]string{"self:alive::[]@0s"}, counts{"join": 1, "dead": 1}},
		{"remembered until forget_after", []step{{1 * time.Second, nodeEvent{kind: evJoin, name: "a", meta: a1}},
			{2 * time.Second, nodeEvent{kind: evLeave, name: "a"}}}, 2*time.Second + time.Hour - 1,
			[]string{"self:alive::[]@0s", "a:dead:z1:[storage]@2s"}, counts{"join": 1, "dead": 1}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tb, n := newTestTable(false)
			for _, s := range tc.steps {
				tb.apply(s.ev, testEpoch.Add(s.at))
			}
			got := summary(NewView("self", tb.members(selfM, testEpoch.Add(tc.now)), testEpoch).Members)
			want := slices.Sorted(slices.Values(tc.want))
			if !slices.Equal(got, want) {
				t.Fatalf("members = %v\nwant      %v", got, want)
			}
			if !maps.Equal(n, tc.counts) {
				t.Fatalf("counts = %v, want %v", n, tc.counts)
			}
		})
	}
}

func TestTableBadMetadata(t *testing.T) {
	cases := []struct {
		name string
		raw  string
	}{
		{"unknown version", `{"v":9,"id":"a","roles":["storage"]}`},
		{"bad json", `{"v":1,`},
		{"other id", `{"v":1,"id":"b","roles":["storage"]}`},
		{"empty", ``},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tb, n := newTestTable(false)
			tb.apply(nodeEvent{kind: evJoin, name: "a", meta: []byte(tc.raw)}, testEpoch)
			got := summary(tb.members(selfM, testEpoch))
			if want := []string{"self:alive::[]@0s", "a:alive::[]@0s"}; !slices.Equal(got, want) {
				t.Fatalf("with bad metadata: %v, want %v (member kept, metadata ignored)", got, want)
			}
			tb.apply(nodeEvent{kind: evUpdate, name: "a", meta: rawMeta(t, "a", "z", "storage")}, testEpoch.Add(time.Second))
			tb.apply(nodeEvent{kind: evUpdate, name: "a", meta: []byte(tc.raw)}, testEpoch.Add(2*time.Second))
			got = summary(tb.members(selfM, testEpoch))
			if want := []string{"self:alive::[]@0s", "a:alive:z:[storage]@0s"}; !slices.Equal(got, want) {
				t.Fatalf("after a bad update: %v, want %v (previous metadata kept)", got, want)
			}
			if want := (counts{"join": 1, "update": 1}); !maps.Equal(n, want) {
				t.Fatalf("counts = %v, want %v", n, want)
			}
		})
	}
}

func TestTableForget(t *testing.T) {
	tb, _ := newTestTable(false)
	tb.apply(nodeEvent{kind: evJoin, name: "a", meta: rawMeta(t, "a", "")}, testEpoch)
	tb.apply(nodeEvent{kind: evJoin, name: "b", meta: rawMeta(t, "b", "")}, testEpoch)
	tb.apply(nodeEvent{kind: evLeave, name: "a"}, testEpoch)
	tb.forget(testEpoch.Add(time.Hour - 1))
	if len(tb.entries) != 2 {
		t.Fatalf("forgot too early: %v", slices.Collect(maps.Keys(tb.entries)))
	}
	tb.forget(testEpoch.Add(time.Hour))
	if _, ok := tb.entries["a"]; ok || len(tb.entries) != 1 {
		t.Fatalf("entries after forget_after: %v", slices.Collect(maps.Keys(tb.entries)))
	}
}

func TestTableAllowList(t *testing.T) {
	tb, n := newTestTable(true)
	for _, id := range []string{"a", "b", "c"} {
		tb.apply(nodeEvent{kind: evJoin, name: id, meta: rawMeta(t, id, "")}, testEpoch)
	}
	ids := func() []string {
		var out []string
		for _, m := range tb.members(selfM, testEpoch) {
			out = append(out, m.ID)
		}
		return out
	}
	steps := []struct {
		name     string
		allowed  map[string]bool
		ok       bool
		want     []string
		unlisted int
	}{
		{"unknown: only self, nothing counted", nil, false, []string{"self"}, 0},
		{"known", map[string]bool{"a": true, "b": true}, true, []string{"self", "a", "b"}, 1},
		{"same answer counts nothing new", map[string]bool{"a": true, "b": true}, true, []string{"self", "a", "b"}, 1},
		{"unknown keeps the last answer", nil, false, []string{"self", "a", "b"}, 1},
		{"c allowed, b removed", map[string]bool{"a": true, "c": true}, true, []string{"self", "a", "c"}, 2},
		{"self need not be listed", map[string]bool{}, true, []string{"self"}, 4},
	}
	for _, s := range steps {
		tb.setAllowList(s.allowed, s.ok)
		if got := ids(); !slices.Equal(got, s.want) {
			t.Fatalf("%s: members %v, want %v", s.name, got, s.want)
		}
		if n["unlisted"] != s.unlisted {
			t.Fatalf("%s: unlisted = %d, want %d", s.name, n["unlisted"], s.unlisted)
		}
	}
	// A new appearance of an unlisted node is counted again.
	tb.apply(nodeEvent{kind: evLeave, name: "a"}, testEpoch)
	ids()
	tb.apply(nodeEvent{kind: evJoin, name: "a", meta: rawMeta(t, "a", "")}, testEpoch)
	ids()
	if n["unlisted"] != 5 {
		t.Fatalf("unlisted after a rejoin = %d, want 5", n["unlisted"])
	}
}

func TestSameMembers(t *testing.T) {
	base := Member{ID: "a", Roles: []string{"s"}, URLs: map[string]string{"s": "u"}, Zone: "z", State: StateAlive, Since: testEpoch}
	variants := []func(m *Member){
		func(m *Member) { m.ID = "b" },
		func(m *Member) { m.Roles = []string{"t"} },
		func(m *Member) { m.URLs = map[string]string{"s": "v"} },
		func(m *Member) { m.Zone = "y" },
		func(m *Member) { m.State = StateDead },
		func(m *Member) { m.Since = testEpoch.Add(1) },
		func(m *Member) { m.Raft = RaftMeta{Addr: "10.0.0.1:7947"} },
		func(m *Member) { m.Raft = RaftMeta{Addr: "10.0.0.1:7947", Server: true} },
		func(m *Member) { m.Raft = RaftMeta{Addr: "10.0.0.1:7947", HasState: true} },
	}
	if !sameMembers([]Member{base}, []Member{base}) {
		t.Fatal("equal lists differ")
	}
	for i, v := range variants {
		m := base
		v(&m)
		if sameMembers([]Member{base}, []Member{m}) {
			t.Errorf("variant %d compares equal", i)
		}
	}
	if sameMembers([]Member{base}, nil) {
		t.Error("lists of different length compare equal")
	}
}

func TestInboxOrderAcrossSpill(t *testing.T) {
	b := newInbox(2)
	var got []string
	apply := func(ev nodeEvent) { got = append(got, fmt.Sprintf("%s%d", ev.name, ev.kind)) }
	b.put(nodeEvent{kind: evJoin, name: "a"})
	b.put(nodeEvent{kind: evJoin, name: "b"})
	b.put(nodeEvent{kind: evJoin, name: "c"})   // spills
	b.put(nodeEvent{kind: evUpdate, name: "c"}) // coalesces: still a join
	b.put(nodeEvent{kind: evLeave, name: "a"})  // spills behind the queued join of a
	select {
	case <-b.signal:
	default:
		t.Fatal("spill not signalled")
	}
	if len(b.ch) != 2 {
		t.Fatalf("channel holds %d events, want 2", len(b.ch))
	}
	b.drain(apply)
	want := []string{"a1", "b1", "a3", "c1"}
	if !slices.Equal(got, want) {
		t.Fatalf("drained %v, want %v", got, want)
	}
	// After a drain the channel is used again.
	got = nil
	b.put(nodeEvent{kind: evLeave, name: "b"})
	b.drain(apply)
	if !slices.Equal(got, []string{"b3"}) || len(b.spill) != 0 {
		t.Fatalf("second drain %v, spill %v", got, b.spill)
	}
}
