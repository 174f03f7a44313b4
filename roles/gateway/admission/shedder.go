package admission

import (
	"sync"
	"time"

	"github.com/ronhq/ron/roles/gateway/gatewayapi"
	"github.com/ronhq/ron/runtime"
)

// ReadShedWindow is how long shedding.reads stays on after the scheduler
// dropped a request (docs/gateway.md §8).
const ReadShedWindow = 5 * time.Second

// Shedder keeps the two shedding flags of docs/gateway.md §8.
//
// shedding.writes turns on when an observed waiting count reaches at ×
// queueCap, and off once the count has stayed below half of that for
// clearAfter without interruption. The count is taken to hold its last
// observed value until the next Observe, so Observe must see every change
// (drr.Options.OnWaiting) or be called often. shedding.reads is on while the
// scheduler dropped a request (drop-oldest or queue_wait: Dropped) within
// the last ReadShedWindow. Flags are evaluated when read, so they clear
// without further calls. All methods are safe for concurrent use; time is
// time.Now (testing/synctest in tests).
type Shedder struct {
	mu         sync.Mutex
	queueCap   int
	at         float64
	clearAfter time.Duration

	waiting    int       // last observed count
	writes     bool      // shedding.writes
	belowSince time.Time // start of the current stretch below the clear level; zero if not below
	lastDrop   time.Time // zero: never dropped
}

// NewShedder returns a Shedder for a scheduler of queueCap waiting requests
// (queue_cap), turning write shedding on at at × queueCap (shed_writes_at)
// and off after clearAfter below half of it (shed_clear_after). at ≤ 0 or
// queueCap ≤ 0 disable write shedding; clearAfter ≤ 0 clears at the first
// observation below the clear level. An optional non-nil m gets the
// shedding metrics under role "gateway" (RegisterMetrics).
func NewShedder(queueCap int, at float64, clearAfter time.Duration, m ...*runtime.Metrics) *Shedder {
	s := &Shedder{queueCap: queueCap, at: at, clearAfter: clearAfter}
	for _, mm := range m {
		if mm != nil {
			s.RegisterMetrics(mm, gatewayapi.RoleName)
		}
	}
	return s
}

// SetParams changes the parameters live and re-evaluates the last observed
// count against them; a stretch below the clear level already running
// keeps its start.
func (s *Shedder) SetParams(queueCap int, at float64, clearAfter time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.queueCap, s.at, s.clearAfter = queueCap, at, clearAfter
	s.update(time.Now())
}

// Observe records the scheduler's current waiting count.
func (s *Shedder) Observe(waiting int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.waiting = waiting
	s.update(time.Now())
}

// Dropped records that the scheduler dropped a request now (drop-oldest or
// queue_wait); it fits drr.Options.OnDrop.
func (s *Shedder) Dropped() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lastDrop = time.Now()
}

// Writes reports shedding.writes: new POST/PUT get 503 degraded.
func (s *Shedder) Writes() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.settle(time.Now())
	return s.writes
}

// Reads reports shedding.reads: a drop within the last ReadShedWindow.
func (s *Shedder) Reads() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return !s.lastDrop.IsZero() && time.Since(s.lastDrop) < ReadShedWindow
}

// Degraded reports whether either flag is on.
func (s *Shedder) Degraded() bool { return s.Writes() || s.Reads() }

// RegisterMetrics registers ron_gateway_shedding{class="writes"|"reads"}
// and ron_gateway_degraded (1 while either flag is on) under role. The
// gateway may register ron_gateway_degraded again with a wider callback
// (runtime.Metrics keeps the newest).
func (s *Shedder) RegisterMetrics(m *runtime.Metrics, role string) {
	m.Gauge("gateway_shedding", func() float64 { return one(s.Writes()) }, "role", role, "class", "writes")
	m.Gauge("gateway_shedding", func() float64 { return one(s.Reads()) }, "role", role, "class", "reads")
	m.Gauge("gateway_degraded", func() float64 { return one(s.Degraded()) }, "role", role)
}

func one(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// levels are the on and clear thresholds; ok is false when write shedding
// is disabled.
func (s *Shedder) levels() (on, clear float64, ok bool) {
	if s.at <= 0 || s.queueCap <= 0 {
		return 0, 0, false
	}
	on = s.at * float64(s.queueCap)
	return on, on / 2, true
}

// update applies the last observed count at now (s.mu held).
func (s *Shedder) update(now time.Time) {
	on, clear, ok := s.levels()
	w := float64(s.waiting)
	switch {
	case !ok:
		s.writes, s.belowSince = false, time.Time{}
		return
	case w >= on:
		s.writes, s.belowSince = true, time.Time{}
	case w >= clear:
		s.belowSince = time.Time{}
	case s.belowSince.IsZero():
		s.belowSince = now
	}
	s.settle(now)
}

// settle turns write shedding off once the count has been below the clear
// level for clearAfter (s.mu held).
func (s *Shedder) settle(now time.Time) {
	if s.writes && !s.belowSince.IsZero() && now.Sub(s.belowSince) >= s.clearAfter {
		s.writes = false
	}
}
