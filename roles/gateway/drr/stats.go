package drr

import (
	"sync/atomic"

	"github.com/VictoriaMetrics/metrics"
)

// Windowed DRR metrics (docs/gateway.md §10): share and fairness look back on
// the last statsWindow one-second epochs of Run.
const (
	statsWindow = 10
	// MaxLabels bounds the distinct tenant label values of the per-tenant
	// metrics: values past the first MaxLabels are reported as OtherLabel.
	MaxLabels = 1024
	// OtherLabel is the label of tenants without a label of their own.
	OtherLabel = "other"
)

// window is the cost dispatched per epoch over the last statsWindow epochs.
type window [statsWindow]struct{ epoch, cost int64 }

// add counts cost in epoch.
func (w *window) add(epoch int64, cost int) {
	b := &w[epoch%statsWindow]
	if b.epoch != epoch {
		b.epoch, b.cost = epoch, 0
	}
	b.cost += int64(cost)
}

// sum is the cost of epochs last-statsWindow+1 … last.
func (w *window) sum(last int64) int64 {
	var n int64
	for _, b := range w {
		if b.epoch <= last && b.epoch > last-statsWindow {
			n += b.cost
		}
	}
	return n
}

// labelStats is the accounting of one tenant label: Run's, except fastCost,
// which the fast path adds to and Run folds into win when it publishes.
type labelStats struct {
	name     string
	win      window
	cost     *metrics.Counter // ron_gateway_drr_dispatched_cost_total{tenant}
	fastCost atomic.Int64     // cost dispatched by the fast path, not yet in win
}

// dispatchedFast counts cost dispatched by the fast path (any goroutine).
func (ls *labelStats) dispatchedFast(cost int) {
	ls.cost.Add(cost)
	ls.fastCost.Add(int64(cost))
}

// stats holds the per-label accounting (Run only).
type stats struct {
	labels map[string]*labelStats
}

// labelSnap is one label's published values.
type labelSnap struct {
	depth, weight int
	share         float64
}

// snapshot is what the DRR gauges read: published by Run once per epoch and
// when it stops, never written after publication.
type snapshot struct {
	labels    map[string]labelSnap
	active    int
	weightSum int
	fairness  float64
}

func emptySnapshot() *snapshot {
	return &snapshot{labels: map[string]labelSnap{}, fairness: 1}
}

// labelOf returns the accounting of tenant's label, creating it (and its
// series) on first use.
func (s *Scheduler) labelOf(tenant string) *labelStats {
	name := tenant
	if s.opt.Label != nil {
		name = s.opt.Label(tenant)
	}
	if name == "" {
		name = OtherLabel
	}
	if ls := s.labels[name]; ls != nil {
		return ls
	}
	if len(s.labels) >= MaxLabels {
		name = OtherLabel
		if ls := s.labels[name]; ls != nil {
			return ls
		}
	}
	ls := &labelStats{name: name, cost: s.registerLabel(name)}
	s.labels[name] = ls
	return ls
}

// account counts w's cost as dispatched now.
func (s *Scheduler) account(w *waiter) {
	if w.stats != nil {
		w.stats.cost.Add(w.cost)
		w.stats.win.add(s.epoch, w.cost)
	}
	if w.tq != nil {
		w.tq.win.add(s.epoch, w.cost)
	}
}

// publish builds the snapshot of epochs up to s.epoch (the fast path's
// dispatches since the last publish counted in s.epoch): per-label depth and
// weight of backlogged tenants, shares of the window's dispatched cost, and
// Jain's index of cost/weight over tenants backlogged since the window's
// first epoch.
func (s *Scheduler) publish() {
	e := s.epoch
	snap := &snapshot{labels: make(map[string]labelSnap, len(s.labels))}
	var total int64
	for _, ls := range s.labels {
		if c := ls.fastCost.Swap(0); c > 0 {
			ls.win.add(e, int(c))
		}
		total += ls.win.sum(e)
	}
	for name, ls := range s.labels {
		var share float64
		if total > 0 {
			share = float64(ls.win.sum(e)) / float64(total)
		}
		snap.labels[name] = labelSnap{share: share}
	}
	var xs []float64
	for _, t := range s.ring {
		l := snap.labels[t.label]
		l.depth += len(t.fifo)
		l.weight += t.weight
		snap.labels[t.label] = l
		snap.active++
		snap.weightSum += t.weight
		if t.joined <= e-statsWindow+1 {
			xs = append(xs, float64(t.win.sum(e))/float64(t.weight))
		}
	}
	snap.fairness = jain(xs)
	s.snap.Store(snap)
}

// jain is Jain's fairness index (Σx)² / (n·Σx²): 1 when all x are equal,
// 1/n when one takes everything; 1 for fewer than two values or all zero.
func jain(xs []float64) float64 {
	if len(xs) < 2 {
		return 1
	}
	var sum, sq float64
	for _, x := range xs {
		sum += x
		sq += x * x
	}
	if sq == 0 {
		return 1
	}
	return sum * sum / (float64(len(xs)) * sq)
}
