package rendezvous

import (
	"encoding/hex"
	"fmt"
	"slices"
	"testing"

	"github.com/zeebo/blake3"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func nodes(zones ...string) []Candidate {
	out := make([]Candidate, len(zones))
	for i, z := range zones {
		out[i] = Candidate{ID: fmt.Sprintf("node-%c", 'a'+i), Zone: z}
	}
	return out
}

// TestSpecVectors checks the vectors of docs/cluster.md §3.
func TestSpecVectors(t *testing.T) {
	hello := blake3.Sum256([]byte("hello world"))
	wantScores := map[string]string{
		"node-b": "b0653ff333c39fd4", "node-a": "9827c11e16e28a07",
		"node-d": "87cfa5e581dfd003", "node-c": "6c41bdaa97e4705d",
	}
	for id, want := range wantScores {
		if got := fmt.Sprintf("%016x", Score(id, hello[:])); got != want {
			t.Errorf("score(%s) = %s, want %s", id, got, want)
		}
	}
	four := nodes("", "", "", "")
	if got := IDs(Rank(four, hello[:])); !slices.Equal(got, []string{"node-b", "node-a", "node-d", "node-c"}) {
		t.Errorf("rank = %v", got)
	}
	if got := IDs(Top(2, four, hello[:])); !slices.Equal(got, []string{"node-b", "node-a"}) {
		t.Errorf("top 2 = %v", got)
	}
	key := NameKey("blog.example")
	if got := hex.EncodeToString(key); got != "266d3578267ab6f74a143f9a432a8c2fba30d89b3b4d6a70a3bd1d556608f33e" {
		t.Errorf("name key = %s", got)
	}
	if got := IDs(Rank(four, key)); !slices.Equal(got, []string{"node-b", "node-c", "node-d", "node-a"}) {
		t.Errorf("name rank = %v", got)
	}
	if got := IDs(Top(3, four, key)); !slices.Equal(got, []string{"node-b", "node-c", "node-d"}) {
		t.Errorf("owners = %v", got)
	}
}

func TestTopZoneSpread(t *testing.T) {
	hello := blake3.Sum256([]byte("hello world"))
	// rank: b, a, d, c
	cases := []struct {
		name  string
		zones []string
		n     int
		want  []string
	}{
		{"one zone is score order", []string{"z", "z", "z", "z"}, 3, []string{"node-b", "node-a", "node-d"}},
		{"a and b share a zone", []string{"z1", "z1", "z2", "z2"}, 2, []string{"node-b", "node-d"}},
		{"spread then fill by score", []string{"z1", "z1", "z2", "z2"}, 3, []string{"node-b", "node-d", "node-a"}},
		{"three zones", []string{"x", "x", "y", "z"}, 3, []string{"node-b", "node-d", "node-c"}},
		{"n above candidates", []string{"", "", "", ""}, 9, []string{"node-b", "node-a", "node-d", "node-c"}},
		{"n zero", []string{"", ""}, 0, []string{}},
		{"no zone counts as one zone", []string{"", "", "q", ""}, 2, []string{"node-b", "node-c"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := IDs(Top(c.n, nodes(c.zones...), hello[:])); !slices.Equal(got, c.want) {
				t.Errorf("got %v, want %v", got, c.want)
			}
		})
	}
}

func TestTopEmptyAndStable(t *testing.T) {
	if got := Top(2, nil, []byte("k")); len(got) != 0 {
		t.Fatalf("top of none = %v", got)
	}
	in := nodes("", "", "")
	orig := slices.Clone(in)
	_ = Top(2, in, []byte("k"))
	if !slices.Equal(in, orig) {
		t.Fatal("Top modified its input")
	}
	// Equal scores cannot be produced on purpose; duplicates of one id tie.
	dup := []Candidate{{ID: "n2"}, {ID: "n1"}, {ID: "n2"}}
	if got := IDs(Rank(dup, []byte("k"))); got[0] != got[1] && got[1] != got[2] {
		t.Fatalf("duplicate ids not adjacent: %v", got)
	}
}
