package admission

import (
	"slices"
	"sync"
	"testing"
)

// tries returns the results of n TryAcquire calls.
func tries(g *StreamGate, n int) []bool {
	var out []bool
	for range n {
		out = append(out, g.TryAcquire())
	}
	return out
}

func TestStreamGate(t *testing.T) {
	g := NewStreamGate(2)
	if got := tries(g, 3); !slices.Equal(got, []bool{true, true, false}) {
		t.Fatalf("max 2: %v", got)
	}
	g.SetMax(1) // lowering closes nothing
	if g.InUse() != 2 || g.TryAcquire() {
		t.Fatalf("in use %d after lowering", g.InUse())
	}
	g.Release()
	if g.TryAcquire() {
		t.Fatal("admitted at the new maximum")
	}
	g.Release()
	if !g.TryAcquire() || g.InUse() != 1 {
		t.Fatal("room not given back")
	}
	g.SetMax(3)
	if got := tries(g, 3); !slices.Equal(got, []bool{true, true, false}) || g.Max() != 3 {
		t.Fatalf("raised maximum: %v", got)
	}
}

func TestStreamGateDefaults(t *testing.T) {
	for _, max := range []int{0, -5} {
		if g := NewStreamGate(max); g.Max() != DefaultMaxStreams {
			t.Errorf("NewStreamGate(%d).Max() = %d", max, g.Max())
		}
	}
	g := NewStreamGate(4)
	g.SetMax(0)
	if g.Max() != DefaultMaxStreams {
		t.Errorf("SetMax(0) gave %d", g.Max())
	}
}

func TestStreamGateUnmatchedRelease(t *testing.T) {
	g := NewStreamGate(1)
	defer func() {
		if recover() == nil {
			t.Fatal("unmatched Release did not panic")
		}
		if g.InUse() != 0 || !slices.Equal(tries(g, 2), []bool{true, false}) {
			t.Fatal("counter corrupted by the unmatched Release")
		}
	}()
	g.Release()
}

func TestStreamGateConcurrent(t *testing.T) {
	const limit, workers, rounds = 5, 20, 500
	g := NewStreamGate(limit)
	var mu sync.Mutex
	held, peak := 0, 0
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for range rounds {
				if !g.TryAcquire() {
					continue
				}
				mu.Lock()
				held++
				peak = max(peak, held)
				mu.Unlock()
				mu.Lock()
				held--
				mu.Unlock()
				g.Release()
			}
		})
	}
	wg.Wait()
	if peak > limit || g.InUse() != 0 {
		t.Fatalf("peak %d over %d, in use %d at the end", peak, limit, g.InUse())
	}
}
