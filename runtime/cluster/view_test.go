package cluster

import (
	"slices"
	"testing"
	"time"
)

func ids(ms []Member) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.ID
	}
	return out
}

func testView() *View {
	return NewView("b", []Member{
		{ID: "d", Roles: []string{"storage"}, URLs: map[string]string{"storage": "http://d"}, State: StateDead, Since: testEpoch.Add(-time.Hour)},
		{ID: "b", Roles: []string{"storage", "index"}, URLs: map[string]string{"storage": "http://b", "index": "http://b:2"}, Zone: "z1", State: StateAlive, Since: testEpoch},
		{ID: "a", Roles: []string{"index"}, URLs: map[string]string{"index": "http://a:2"}, State: StateAlive, Since: testEpoch},
		{ID: "c", Roles: []string{"storage"}, URLs: map[string]string{"storage": "http://c"}, Zone: "z2", State: StateLeft, Since: testEpoch.Add(-time.Minute)},
	}, testEpoch)
}

func TestViewQueries(t *testing.T) {
	v := testView()
	if got := ids(v.Members); !slices.Equal(got, []string{"a", "b", "c", "d"}) {
		t.Fatalf("members not sorted: %v", got)
	}
	if m, ok := v.Member("c"); !ok || m.Zone != "z2" {
		t.Fatalf("Member(c) = %+v, %v", m, ok)
	}
	if _, ok := v.Member("x"); ok {
		t.Fatal("Member(x) found")
	}
	cases := []struct {
		name string
		got  []Member
		want []string
	}{
		{"WithRole storage", v.WithRole("storage"), []string{"b", "c", "d"}},
		{"Alive storage", v.Alive("storage"), []string{"b"}},
		{"Alive index", v.Alive("index"), []string{"a", "b"}},
		{"Alive edge", v.Alive("edge"), nil},
		{"within 5m", v.AliveOrDepartedWithin("storage", 5*time.Minute, testEpoch), []string{"b", "c"}},
		{"within 1m exactly", v.AliveOrDepartedWithin("storage", time.Minute, testEpoch), []string{"b"}},
		{"within 2h", v.AliveOrDepartedWithin("storage", 2*time.Hour, testEpoch), []string{"b", "c", "d"}},
	}
	for _, tc := range cases {
		if got := ids(tc.got); !slices.Equal(got, tc.want) {
			t.Errorf("%s = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestViewAliveURL(t *testing.T) {
	v := testView()
	cases := []struct {
		role, url    string
		alive, known bool
	}{
		{"storage", "http://b", true, true},
		{"storage", "http://c", false, true},
		{"storage", "http://x", false, false},
		{"index", "http://b", false, false},
	}
	for _, tc := range cases {
		alive, known := v.AliveURL(tc.role, tc.url)
		if alive != tc.alive || known != tc.known {
			t.Errorf("AliveURL(%s, %s) = %v, %v; want %v, %v", tc.role, tc.url, alive, known, tc.alive, tc.known)
		}
	}
}

func TestMemberHelpers(t *testing.T) {
	v := testView()
	b, _ := v.Member("b")
	c, _ := v.Member("c")
	if !b.HasRole("index") || b.HasRole("edge") || b.URL("index") != "http://b:2" || b.URL("edge") != "" {
		t.Fatalf("member b helpers: %+v", b)
	}
	if b.DepartedFor(testEpoch.Add(time.Hour)) != 0 || !b.Alive() {
		t.Fatal("an alive member reports a departure")
	}
	if got := c.DepartedFor(testEpoch); got != time.Minute || c.Alive() {
		t.Fatalf("DepartedFor(c) = %v", got)
	}
	cands := Candidates(v.Alive("storage"))
	if len(cands) != 1 || cands[0].ID != "b" || cands[0].Zone != "z1" {
		t.Fatalf("Candidates = %+v", cands)
	}
}

func TestStatic(t *testing.T) {
	s := NewStatic(testView())
	ch, cancel := s.Subscribe()
	other, cancelOther := s.Subscribe()
	defer cancelOther()
	if signalled(ch) || s.View().Self != "b" {
		t.Fatal("signal before any Set")
	}
	next := NewView("a", nil, testEpoch)
	s.Set(next)
	s.Set(next) // coalesces with the pending signal
	if s.View() != next || !signalled(ch) || signalled(ch) || !signalled(other) {
		t.Fatal("Set did not signal once per pending change")
	}
	cancel()
	s.Set(testView())
	if signalled(ch) || !signalled(other) {
		t.Fatal("a cancelled subscription was signalled")
	}
}

// TestViewAliveKey: alive members of the role only, in id order, with
// their URLs; a departed member or another role changes nothing.
func TestViewAliveKey(t *testing.T) {
	v := testView()
	if got := v.AliveKey("index"); got != "a=http://a:2 b=http://b:2 " {
		t.Fatalf("index key %q", got)
	}
	if got := v.AliveKey("storage"); got != "b=http://b " {
		t.Fatalf("storage key %q", got)
	}
	if got := NewView("x", nil, testEpoch).AliveKey("index"); got != "" {
		t.Fatalf("empty view key %q", got)
	}
}
