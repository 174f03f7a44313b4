package runtime

import (
	"testing"
	"testing/synctest"
	"time"
)

func TestBackoffDelay(t *testing.T) {
	b := DefaultBackoff
	tests := []struct {
		attempt int
		rnd     float64
		want    time.Duration
	}{
		{0, 0.5, 100 * time.Millisecond},
		{1, 0.5, 200 * time.Millisecond},
		{4, 0.5, 1600 * time.Millisecond},
		{0, 0, 80 * time.Millisecond},
		{0, 0.75, 110 * time.Millisecond},
		{8, 0.5, 25600 * time.Millisecond},
		{9, 0.5, 30 * time.Second},
		{9, 0, 24 * time.Second},
		{9, 0.999, 30 * time.Second}, // clamped to Max after jitter
		{5000, 0.5, 30 * time.Second},
		{-3, 0.5, 100 * time.Millisecond},
	}
	for _, tt := range tests {
		got := b.Delay(tt.attempt, func() float64 { return tt.rnd })
		if d := got - tt.want; d < -time.Microsecond || d > time.Microsecond {
			t.Errorf("Delay(%d, %v) = %v, want %v", tt.attempt, tt.rnd, got, tt.want)
		}
	}
	for range 1000 {
		if d := b.Delay(3, nil); d < 640*time.Millisecond || d > 960*time.Millisecond {
			t.Fatalf("Delay(3) = %v outside ±20%% of 800ms", d)
		}
	}
}

func TestCrashBudget(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := NewCrashBudget(5, time.Minute, nil)
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for i := range 6 {
			if c.Exceeded() {
				t.Fatalf("exceeded after %d crashes", i)
			}
			c.Record()
			<-tick.C
		}
		if !c.Exceeded() {
			t.Fatal("6 crashes in 60 s: want exceeded")
		}
		if n := len(c.times); n > 6 {
			t.Fatalf("budget keeps %d timestamps", n)
		}
		wait := time.NewTimer(55 * time.Second) // first crash now 61 s old
		<-wait.C
		if c.Exceeded() {
			t.Fatal("window passed: want not exceeded")
		}
	})
}
