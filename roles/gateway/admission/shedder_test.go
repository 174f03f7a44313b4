package admission

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/ronhq/ron/runtime"
)

func TestShedderWritesHysteresis(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := NewShedder(512, 0.5, 5*time.Second) // on at 256, clear below 128
		steps := []struct {
			after   time.Duration // sleep before the step
			observe int           // -1: no observation
			want    bool
		}{
			{0, 255, false},
			{0, 256, true},
			{0, 130, true},               // between the levels: stays on
			{10 * time.Second, -1, true}, // not below half yet
			{0, 127, true},               // below half: the clock starts
			{4 * time.Second, 100, true}, // 4 s
			{time.Second - 1, -1, true},  // 5 s - 1 ns
			{1, -1, false},               // 5 s below half without a call
			{0, 200, false},              // under the on level: stays off
			{0, 300, true},               // on again
			{0, 10, true},                // below half
			{3 * time.Second, 128, true}, // back to half: the stretch breaks
			{0, 127, true},               // a new stretch
			{4 * time.Second, -1, true},  // only 4 s of it
			{time.Second, -1, false},     // 5 s
			{100 * time.Hour, 0, false},
		}
		for i, st := range steps {
			time.Sleep(st.after)
			if st.observe >= 0 {
				s.Observe(st.observe)
			}
			if got := s.Writes(); got != st.want {
				t.Fatalf("step %d (%+v): writes = %v", i, st, got)
			}
		}
	})
}

func TestShedderReads(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := NewShedder(512, 0.5, 5*time.Second)
		if s.Reads() || s.Degraded() {
			t.Fatal("reads shed before any drop")
		}
		s.Dropped()
		time.Sleep(ReadShedWindow - time.Nanosecond)
		if !s.Reads() || !s.Degraded() || s.Writes() {
			t.Fatalf("reads %v degraded %v writes %v just inside the window", s.Reads(), s.Degraded(), s.Writes())
		}
		s.Dropped() // a new drop extends the window
		time.Sleep(ReadShedWindow - time.Nanosecond)
		if !s.Reads() {
			t.Fatal("second drop did not extend the window")
		}
		time.Sleep(time.Nanosecond)
		if s.Reads() || s.Degraded() {
			t.Fatal("reads still shed 5 s after the last drop")
		}
	})
}

func TestShedderSetParams(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := NewShedder(100, 0.5, 5*time.Second)
		s.Observe(40)
		if s.Writes() {
			t.Fatal("on below 50")
		}
		s.SetParams(100, 0.4, 5*time.Second) // 40 ≥ 40: on without a new observation
		if !s.Writes() {
			t.Fatal("lowered threshold not applied to the last count")
		}
		s.SetParams(1000, 0.5, 5*time.Second) // clear level 250: the stretch starts now
		time.Sleep(4 * time.Second)
		s.SetParams(1000, 0.5, 2*time.Second) // shorter clear time, same stretch
		if s.Writes() {
			t.Fatal("4 s below the clear level with clearAfter 2 s")
		}
	})
}

func TestShedderDisabledAndImmediate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tests := []struct {
			name       string
			queueCap   int
			at         float64
			clearAfter time.Duration
			observe    []int
			want       bool
		}{
			{"at 0 disables", 512, 0, time.Second, []int{512}, false},
			{"negative at", 512, -1, time.Second, []int{512}, false},
			{"no queue", 0, 0.5, time.Second, []int{10}, false},
			{"at 1: only a full queue", 10, 1, time.Second, []int{9}, false},
			{"at 1, full", 10, 1, time.Second, []int{10}, true},
			{"fractional level rounds up", 5, 0.5, time.Second, []int{2}, false},
			{"fractional level reached", 5, 0.5, time.Second, []int{3}, true},
			{"clearAfter 0 clears at once", 10, 0.5, 0, []int{5, 2}, false},
			{"clearAfter 0, not below half", 10, 0.5, 0, []int{5, 3}, true},
		}
		for _, tc := range tests {
			s := NewShedder(tc.queueCap, tc.at, tc.clearAfter)
			for _, n := range tc.observe {
				s.Observe(n)
			}
			if got := s.Writes(); got != tc.want {
				t.Errorf("%s: writes = %v", tc.name, got)
			}
		}
	})
}

func TestShedderMetrics(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := runtime.NewMetrics(nil)
		s := NewShedder(10, 0.5, time.Second, m)
		read := func() [3]float64 {
			v := m.Values()
			return [3]float64{v[`ron_gateway_shedding{role="gateway",class="writes"}`],
				v[`ron_gateway_shedding{role="gateway",class="reads"}`], v[`ron_gateway_degraded{role="gateway"}`]}
		}
		if got := read(); got != [3]float64{0, 0, 0} {
			t.Fatalf("idle: %v", got)
		}
		s.Observe(5)
		if got := read(); got != [3]float64{1, 0, 1} {
			t.Fatalf("writes: %v", got)
		}
		s.Observe(0)
		s.Dropped()
		time.Sleep(time.Second)
		if got := read(); got != [3]float64{0, 1, 1} {
			t.Fatalf("reads: %v", got)
		}
		time.Sleep(ReadShedWindow)
		if got := read(); got != [3]float64{0, 0, 0} {
			t.Fatalf("cleared: %v", got)
		}
	})
}

func TestShedderRegisterMetricsRole(t *testing.T) {
	m := runtime.NewMetrics(nil)
	NewShedder(10, 0.5, time.Second, nil).RegisterMetrics(m, "gw")
	if _, ok := m.Values()[`ron_gateway_shedding{role="gw",class="writes"}`]; !ok {
		t.Fatal("not registered under the given role")
	}
}
