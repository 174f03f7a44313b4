package repair

import (
	"slices"
	"testing"
)

func tgt(id string, score uint64, alive bool, h Holding) Target {
	return Target{ID: id, Score: score, Alive: alive, Holding: h}
}

// TestDecide is the decision table of docs/cluster.md §5: self in or out of
// T, holders, departed ages (Assumed = departed within repair_after; Lost =
// a member of top(RF, L, x) departed longer), unanswered members.
func TestDecide(t *testing.T) {
	self := "s"
	cases := []struct {
		name string
		in   Input
		want Decision
	}{
		{"in T, highest holder, other lacks: push normal",
			Input{Self: self, SelfHolds: true, T: []Target{tgt("s", 9, true, Holds), tgt("b", 5, true, Lacks)}},
			Decision{Under: true, Copies: 1, Push: []string{"b"}}},
		{"in T, a higher-scored alive holder acts instead",
			Input{Self: self, SelfHolds: true, T: []Target{tgt("a", 9, true, Holds), tgt("s", 5, true, Holds), tgt("b", 3, true, Lacks)}},
			Decision{Under: true, Copies: 2}},
		{"in T, higher-scored member lacks: self is the best holder",
			Input{Self: self, SelfHolds: true, T: []Target{tgt("a", 9, true, Lacks), tgt("s", 5, true, Holds)}},
			Decision{Under: true, Copies: 1, Push: []string{"a"}}},
		{"in T, all hold: nothing to do",
			Input{Self: self, SelfHolds: true, T: []Target{tgt("s", 9, true, Holds), tgt("b", 5, true, Holds)}},
			Decision{Copies: 2}},
		{"in T alone (one storage member)",
			Input{Self: self, SelfHolds: true, T: []Target{tgt("s", 9, true, Holds)}},
			Decision{Copies: 1}},
		{"in T, higher-scored member departed recently: assumed, cannot take the turn",
			Input{Self: self, SelfHolds: true, T: []Target{tgt("a", 9, false, Assumed), tgt("s", 5, true, Holds), tgt("b", 3, true, Lacks)}},
			Decision{Under: true, Copies: 2, Push: []string{"b"}}},
		{"in T, departed recently and nobody missing: no traffic",
			Input{Self: self, SelfHolds: true, T: []Target{tgt("a", 9, false, Assumed), tgt("s", 5, true, Holds)}},
			Decision{Copies: 2}},
		{"in T, lost replica in top(RF, L): urgent",
			Input{Self: self, SelfHolds: true, Lost: true, T: []Target{tgt("s", 9, true, Holds), tgt("c", 2, true, Lacks)}},
			Decision{Under: true, Copies: 1, Push: []string{"c"}, Urgent: true}},
		{"in T, unanswered member: undecided",
			Input{Self: self, SelfHolds: true, T: []Target{tgt("s", 9, true, Holds), tgt("b", 5, true, Unknown)}},
			Decision{Undecided: true}},
		{"in T, self lacks (object check): pull",
			Input{Self: self, SelfHolds: false, T: []Target{tgt("a", 9, true, Holds), tgt("s", 5, true, Lacks)}},
			Decision{Under: true, Copies: 1, Pull: true}},
		{"out of T, nobody in T holds: push to all, urgent (only copy)",
			Input{Self: self, SelfHolds: true, T: []Target{tgt("a", 9, true, Lacks), tgt("b", 5, true, Lacks)}},
			Decision{Under: true, Copies: 1, Push: []string{"a", "b"}, Urgent: true}},
		{"out of T, one member holds: it acts",
			Input{Self: self, SelfHolds: true, T: []Target{tgt("a", 9, true, Lacks), tgt("b", 5, true, Holds)}},
			Decision{Under: true, Copies: 2}},
		{"out of T, all confirmed, stable, drop_excess: drop",
			Input{Self: self, SelfHolds: true, DropExcess: true, Stable: true, T: []Target{tgt("a", 9, true, Holds), tgt("b", 5, true, Holds)}},
			Decision{Copies: 3, Excess: true, Drop: true}},
		{"out of T, all confirmed, membership changed recently: keep",
			Input{Self: self, SelfHolds: true, DropExcess: true, T: []Target{tgt("a", 9, true, Holds), tgt("b", 5, true, Holds)}},
			Decision{Copies: 3, Excess: true}},
		{"out of T, all confirmed, drop_excess off: keep",
			Input{Self: self, SelfHolds: true, Stable: true, T: []Target{tgt("a", 9, true, Holds), tgt("b", 5, true, Holds)}},
			Decision{Copies: 3, Excess: true}},
		{"out of T, one member only assumed: excess kept",
			Input{Self: self, SelfHolds: true, DropExcess: true, Stable: true, T: []Target{tgt("a", 9, false, Assumed), tgt("b", 5, true, Holds)}},
			Decision{Copies: 3, Excess: true}},
		{"out of T, every member assumed: not urgent, nothing to push",
			Input{Self: self, SelfHolds: true, T: []Target{tgt("a", 9, false, Assumed), tgt("b", 5, false, Assumed)}},
			Decision{Copies: 3, Excess: true}},
		{"out of T, one assumed, one lacking: self pushes, normal",
			Input{Self: self, SelfHolds: true, T: []Target{tgt("a", 9, false, Assumed), tgt("b", 5, true, Lacks)}},
			Decision{Under: true, Copies: 2, Push: []string{"b"}}},
		{"out of T, lost replica: urgent",
			Input{Self: self, SelfHolds: true, Lost: true, T: []Target{tgt("a", 9, true, Lacks), tgt("b", 5, true, Holds)}},
			Decision{Under: true, Copies: 2, Urgent: true}},
		{"out of T, self does not hold: nothing",
			Input{Self: self, SelfHolds: false, T: []Target{tgt("a", 9, true, Holds), tgt("b", 5, true, Holds)}},
			Decision{Copies: 2}},
		{"equal scores: smaller id is higher",
			Input{Self: self, SelfHolds: true, T: []Target{tgt("r", 7, true, Holds), tgt("s", 7, true, Holds), tgt("z", 1, true, Lacks)}},
			Decision{Under: true, Copies: 2}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := Decide(c.in)
			if len(got.Push) == 0 {
				got.Push = nil
			}
			if !equalDecision(got, c.want) {
				t.Fatalf("Decide = %+v, want %+v", got, c.want)
			}
		})
	}
}

func equalDecision(a, b Decision) bool {
	return a.Undecided == b.Undecided && a.Under == b.Under && a.Copies == b.Copies &&
		a.Urgent == b.Urgent && a.Pull == b.Pull && a.Excess == b.Excess && a.Drop == b.Drop &&
		slices.Equal(a.Push, b.Push)
}

// TestDecideHoldersAgree: every alive holder in T evaluates the same
// answers and exactly one of them acts.
func TestDecideHoldersAgree(t *testing.T) {
	ts := []Target{tgt("a", 9, true, Holds), tgt("b", 7, true, Holds), tgt("c", 5, true, Lacks)}
	acting := 0
	for _, self := range []string{"a", "b"} {
		if d := Decide(Input{Self: self, SelfHolds: true, T: ts}); len(d.Push) > 0 {
			acting++
			if !slices.Equal(d.Push, []string{"c"}) {
				t.Fatalf("%s pushes %v", self, d.Push)
			}
		}
	}
	if acting != 1 {
		t.Fatalf("%d holders act, want 1", acting)
	}
}
