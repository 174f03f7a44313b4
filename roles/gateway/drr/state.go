package drr

import "slices"

// waiter is one request waiting for a slot. ch receives exactly one answer:
// nil (a slot was granted) or an *httpx.Error.
type waiter struct {
	tenant string
	weight int
	cost   int
	seq    uint64 // arrival order, for drop-oldest
	queued bool   // in a tenant queue (Run only)
	ch     chan error

	stats *labelStats  // the tenant's metric label (Run only; nil in pure state tests)
	tq    *tenantQueue // the queue it joined, for cost accounting (Run only)
}

// tenantQueue is one backlogged tenant: its FIFO, weight and DRR deficit.
type tenantQueue struct {
	name    string
	weight  int
	deficit int
	fifo    []*waiter
	label   string // metric label, fixed while backlogged
	joined  int64  // epoch the tenant became backlogged
	win     window // cost dispatched per epoch while backlogged
}

// state is the DRR state, touched only by the Run goroutine. Only backlogged
// tenants are kept: a tenant whose queue empties leaves with deficit 0.
type state struct {
	tenants map[string]*tenantQueue
	ring    []*tenantQueue // backlogged tenants in round order
	cur     int            // ring index of the tenant being served
	funded  bool           // ring[cur] got its quantum for this turn
	seq     uint64
	epoch   int64 // one-second ticks of Run, for the windowed metrics
}

// enqueue appends w to its tenant's FIFO, adding the tenant to the ring's
// tail when it was idle. The tenant's weight is updated to w's; it counts
// from the tenant's next turn.
func (st *state) enqueue(w *waiter) {
	t := st.tenants[w.tenant]
	if t == nil {
		t = &tenantQueue{name: w.tenant, label: w.tenant, joined: st.epoch}
		if w.stats != nil {
			t.label = w.stats.name
		}
		st.tenants[w.tenant] = t
		st.ring = append(st.ring, t)
	}
	t.weight = w.weight
	st.seq++
	w.seq, w.queued, w.tq = st.seq, true, t
	t.fifo = append(t.fifo, w)
}

// queueLen is the number of requests tenant has waiting.
func (st *state) queueLen(tenant string) int {
	if t := st.tenants[tenant]; t != nil {
		return len(t.fifo)
	}
	return 0
}

// remove takes w out of its tenant's FIFO; false when w is not queued.
func (st *state) remove(w *waiter) bool {
	t := st.tenants[w.tenant]
	if !w.queued || t == nil {
		return false
	}
	i := slices.Index(t.fifo, w)
	if i < 0 {
		return false
	}
	t.fifo = slices.Delete(t.fifo, i, i+1)
	w.queued = false
	if len(t.fifo) == 0 {
		st.retire(t)
	}
	return true
}

// retire drops an emptied tenant from the ring with deficit 0, keeping cur on
// the tenant that follows in round order.
func (st *state) retire(t *tenantQueue) {
	i := slices.Index(st.ring, t)
	st.ring = slices.Delete(st.ring, i, i+1)
	delete(st.tenants, t.name)
	t.deficit = 0
	switch {
	case i < st.cur:
		st.cur--
	case i == st.cur:
		st.funded = false
	}
	if st.cur >= len(st.ring) {
		st.cur = 0
	}
}

// oldest is the longest-waiting request of any tenant (nil when none).
func (st *state) oldest() *waiter {
	var old *waiter
	for _, t := range st.ring {
		if h := t.fifo[0]; old == nil || h.seq < old.seq {
			old = h
		}
	}
	return old
}

// next picks the request to dispatch by deficit round robin (docs/gateway.md §3.5):
// continue with the current tenant while its deficit covers its head's cost;
// otherwise the next backlogged tenant gets quantum × weight added, and so
// on. The head of a tenant is never skipped. It returns nil when nothing waits.
func (st *state) next(quantum int) *waiter {
	for len(st.ring) > 0 {
		t := st.ring[st.cur]
		if !st.funded {
			t.deficit += quantum * t.weight
			st.funded = true
		}
		if h := t.fifo[0]; t.deficit >= h.cost {
			t.deficit -= h.cost
			st.remove(h)
			return h
		}
		st.cur = (st.cur + 1) % len(st.ring)
		st.funded = false
	}
	return nil
}
