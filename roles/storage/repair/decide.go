package repair

// Holding is what the planner knows of one target's copy of an object.
type Holding uint8

// Holdings.
const (
	// Lacks: the member answered that it does not hold the object.
	Lacks Holding = iota
	// Holds: the member answered that it holds the object (or it is self
	// and holds it locally).
	Holds
	// Assumed: the member departed less than repair_after ago; it is not
	// asked and is assumed to hold its share.
	Assumed
	// Unknown: the member did not answer this pass.
	Unknown
)

// Target is one member of T = top(RF, P, x) as the planner saw it.
type Target struct {
	ID      string
	Score   uint64 // rendezvous score for x
	Alive   bool
	Holding Holding
}

// Input is everything the decision for one object depends on.
type Input struct {
	Self      string
	SelfHolds bool     // the local copy exists (always true in a pass)
	T         []Target // T in choice order; self's entry, if any, reflects SelfHolds
	// Lost: top(RF, L, x) holds a member departed longer than repair_after.
	Lost bool
	// DropExcess is cluster.drop_excess.
	DropExcess bool
	// Stable: membership has not changed for repair_after.
	Stable bool
}

// Decision is what self does about one object.
type Decision struct {
	// Undecided: some member of T did not answer; nothing else is set.
	Undecided bool
	// Under: some alive member of T lacks the object (M is not empty).
	Under bool
	// Copies is |H|: self when it holds x, plus the members of T that hold
	// it or are assumed to.
	Copies int
	// Push lists the members of M self pushes to (empty unless self acts).
	Push []string
	// Urgent classifies the pushes (and a pull).
	Urgent bool
	// Pull: self ∈ T lacks the object and should fetch it.
	Pull bool
	// Excess: self ∉ T while every member of T holds x (or is assumed to).
	Excess bool
	// Drop: the excess copy may be deleted now (drop_excess, every member
	// of T confirmed x this pass, membership stable for repair_after).
	Drop bool
}

// Decide applies docs/cluster.md §5 to one object. It is a pure function.
//
// M = {t ∈ T alive, lacking x}. Who acts: with self ∈ T, self acts only if
// it has the highest score among the alive holders in T (itself included);
// with self ∉ T, only if no alive member of T holds x. Holders assumed
// because they departed recently cannot push, so they do not take the turn
// from an alive holder. Urgent when a replica is lost (Lost) or when
// self ∉ T and no member of T holds x, not even by assumption (self may
// hold the only copy).
func Decide(in Input) Decision {
	var d Decision
	selfIn := false
	var missing []string
	var alive []Target // alive holders in T, self included
	assumed := 0
	for _, t := range in.T {
		if t.ID == in.Self {
			selfIn = true
			t = Target{ID: t.ID, Score: t.Score, Alive: true, Holding: holding(in.SelfHolds)}
		}
		switch {
		case t.Holding == Unknown:
			return Decision{Undecided: true}
		case t.Holding == Assumed:
			assumed++
		case t.Holding == Holds && t.Alive:
			alive = append(alive, t)
		case t.Holding == Lacks && t.Alive:
			missing = append(missing, t.ID)
		}
	}
	d.Under = len(missing) > 0
	d.Copies = len(alive) + assumed
	if in.SelfHolds && !selfIn {
		d.Copies++
	}
	d.Urgent = in.Lost || (!selfIn && len(alive)+assumed == 0)
	if !in.SelfHolds {
		d.Pull = selfIn
		return d
	}
	if selfIn && highest(alive, in.Self) || !selfIn && len(alive) == 0 {
		d.Push = missing // self holds x here, so it is not in missing
	}
	if !selfIn && len(in.T) > 0 && len(missing) == 0 {
		d.Excess = true
		d.Drop = in.DropExcess && in.Stable && assumed == 0 && len(alive) == len(in.T)
	}
	return d
}

func holding(held bool) Holding {
	if held {
		return Holds
	}
	return Lacks
}

// highest reports whether self has the highest score among ts (ties: the
// smaller id, as rendezvous ranks them).
func highest(ts []Target, self string) bool {
	var best *Target
	for i := range ts {
		t := &ts[i]
		if best == nil || t.Score > best.Score || t.Score == best.Score && t.ID < best.ID {
			best = t
		}
	}
	return best != nil && best.ID == self
}
