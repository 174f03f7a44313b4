package cluster

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestEncodeMetaSpecExample(t *testing.T) {
	m := Meta{ID: "node-a", Roles: []string{"storage", "index"}, Zone: "eu-1",
		URLs: map[string]string{"storage": "http://10.0.0.1:5303", "index": "http://10.0.0.1:5304"}}
	got, err := EncodeMeta(m)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"v":1,"id":"node-a","roles":["storage","index"],"urls":{"index":"http://10.0.0.1:5304","storage":"http://10.0.0.1:5303"},"zone":"eu-1"}`
	if string(got) != want {
		t.Fatalf("EncodeMeta = %s\nwant          %s", got, want)
	}
	back, leaving, err := decodeMeta(got)
	if err != nil || leaving || back.ID != "node-a" || back.URLs["index"] != "http://10.0.0.1:5304" || back.V != 1 {
		t.Fatalf("decodeMeta = %+v, %v, %v", back, leaving, err)
	}
}

func TestEncodeMetaEmpty(t *testing.T) {
	got, err := EncodeMeta(Meta{ID: "n1"})
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"v":1,"id":"n1","roles":[],"urls":{},"zone":""}`; string(got) != want {
		t.Fatalf("EncodeMeta = %s, want %s", got, want)
	}
}

func TestEncodeMetaRejects(t *testing.T) {
	long := "http://" + strings.Repeat("h", 500) + ":1"
	cases := []struct {
		name string
		m    Meta
		want string
	}{
		{"too large", Meta{ID: "a", Roles: []string{"storage"}, URLs: map[string]string{"storage": long}}, "gossip limit"},
		{"unknown version", Meta{V: 2, ID: "a"}, "unknown metadata version"},
		{"empty id", Meta{}, "node id"},
		{"bad id", Meta{ID: "a b"}, "node id"},
		{"long id", Meta{ID: strings.Repeat("x", 65)}, "node id"},
		{"bad zone", Meta{ID: "a", Zone: "eu/1"}, "zone"},
		{"empty role", Meta{ID: "a", Roles: []string{""}}, "empty role"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b, err := EncodeMeta(tc.m)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("EncodeMeta = %s, %v; want error containing %q", b, err, tc.want)
			}
		})
	}
}

func TestEncodeMetaAtLimit(t *testing.T) {
	base, err := EncodeMeta(Meta{ID: "a", URLs: map[string]string{"s": ""}})
	if err != nil {
		t.Fatal(err)
	}
	pad := strings.Repeat("u", MaxMetaSize-len(base))
	if b, err := EncodeMeta(Meta{ID: "a", URLs: map[string]string{"s": pad}}); err != nil || len(b) != MaxMetaSize {
		t.Fatalf("at the limit: %d bytes, %v", len(b), err)
	}
	if _, err := EncodeMeta(Meta{ID: "a", URLs: map[string]string{"s": pad + "u"}}); err == nil {
		t.Fatal("one byte above the limit was accepted")
	}
}

func TestDecodeMetaRejects(t *testing.T) {
	cases := []struct {
		name, raw string
		version   bool // the error is errMetaVersion
	}{
		{"unknown version", `{"v":2,"id":"a","roles":[],"urls":{},"zone":""}`, true},
		{"missing version", `{"id":"a"}`, true},
		{"bad json", `{"v":1,"id":`, false},
		{"not an object", `[1]`, false},
		{"empty", ``, false},
		{"bad id", `{"v":1,"id":"a b"}`, false},
		{"bad zone", `{"v":1,"id":"a","zone":"a/b"}`, false},
		{"wrong type", `{"v":1,"id":"a","roles":"storage"}`, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m, _, err := decodeMeta([]byte(tc.raw))
			if err == nil {
				t.Fatalf("decodeMeta(%s) = %+v, want an error", tc.raw, m)
			}
			if errors.Is(err, errMetaVersion) != tc.version {
				t.Fatalf("decodeMeta(%s) error %v: version error %v, want %v", tc.raw, err, !tc.version, tc.version)
			}
		})
	}
}

func TestDecodeMetaIgnoresUnknownFields(t *testing.T) {
	m, leaving, err := decodeMeta([]byte(`{"v":1,"id":"a","roles":["edge"],"urls":{},"zone":"z","extra":{"x":1}}`))
	if err != nil || leaving || m.ID != "a" || len(m.Roles) != 1 || m.Zone != "z" {
		t.Fatalf("decodeMeta = %+v, %v, %v", m, leaving, err)
	}
}

func TestLeavingAnnouncement(t *testing.T) {
	c := newTestCluster(t, "a", nil)
	lm := c.local.Load()
	want := strings.TrimSuffix(string(lm.raw), "}") + `,"leaving":true}`
	if string(lm.leaving) != want {
		t.Fatalf("leaving encoding %s, want %s", lm.leaving, want)
	}
	m, leaving, err := decodeMeta(lm.leaving)
	if err != nil || !leaving || m.ID != "a" {
		t.Fatalf("decodeMeta(leaving) = %+v, %v, %v", m, leaving, err)
	}
	d := delegate{c: c}
	if got := d.NodeMeta(MaxMetaSize); string(got) != string(lm.raw) {
		t.Fatalf("NodeMeta before Stop = %s", got)
	}
	c.leaving.Store(true)
	if got := d.NodeMeta(MaxMetaSize); string(got) != want {
		t.Fatalf("NodeMeta while leaving = %s", got)
	}
	if got := d.NodeMeta(10); got != nil {
		t.Fatalf("NodeMeta above the limit = %s", got)
	}

	// Metadata just under the limit has no room for the announcement: the
	// node then leaves without it (others see it dead).
	base, _ := EncodeMeta(Meta{ID: "a", URLs: map[string]string{"s": ""}})
	full := Meta{ID: "a", URLs: map[string]string{"s": strings.Repeat("u", MaxMetaSize-len(base))}}
	lm, err = c.encodeLocal(full)
	if err != nil || len(lm.raw) != MaxMetaSize || lm.leaving != nil {
		t.Fatalf("full metadata: %d bytes, leaving %s, %v", len(lm.raw), lm.leaving, err)
	}
}

func TestMetaMemberTrimsURLs(t *testing.T) {
	m := Meta{V: 1, ID: "a", Roles: []string{"storage"}, URLs: map[string]string{"storage": "http://h:1/"}}
	got := m.member(StateAlive, testEpoch)
	if got.URL("storage") != "http://h:1" || !got.HasRole("storage") || !got.Since.Equal(testEpoch) {
		t.Fatalf("member = %+v", got)
	}
	m.Roles[0] = "changed"
	if got.Roles[0] != "storage" {
		t.Fatal("member shares the roles slice with the metadata")
	}
}

func TestStatusJSON(t *testing.T) {
	v := NewView("b", []Member{
		{ID: "b", Roles: []string{"storage"}, Zone: "z1", State: StateAlive, Since: testEpoch},
		{ID: "a", State: StateDead, Since: testEpoch},
	}, testEpoch)
	b, err := json.Marshal(StatusOf(v, "z1"))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"node_id":"b","zone":"z1","members":[` +
		`{"id":"a","state":"dead","roles":[],"zone":"","since":"2026-01-02T03:04:05Z"},` +
		`{"id":"b","state":"alive","roles":["storage"],"zone":"z1","since":"2026-01-02T03:04:05Z"}]}`
	if string(b) != want {
		t.Fatalf("status = %s\nwant     %s", b, want)
	}
}
