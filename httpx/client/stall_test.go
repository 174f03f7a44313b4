package client

import (
	"testing"
	"testing/synctest"
	"time"
)

// fired starts a watch from now and returns it with a func that reports
// how long after the start it fired (-1: not yet).
func fired(floor, stall time.Duration, body bool) (*StallWatch, func() time.Duration) {
	start := time.Now()
	var at time.Duration = -1
	w := WatchStall(start, start.Add(floor), stall, body, func(now time.Time) { at = now.Sub(start) })
	return w, func() time.Duration { synctest.Wait(); return at }
}

func TestStallWatch(t *testing.T) {
	cases := []struct {
		name string
		run  func(t *testing.T) time.Duration
		want time.Duration
	}{
		{"no body fires at the floor", func(t *testing.T) time.Duration {
			_, at := fired(3*time.Second, time.Second, false)
			time.Sleep(10 * time.Second)
			return at()
		}, 3 * time.Second},
		{"a body that stops fires a stall after its last piece", func(t *testing.T) time.Duration {
			w, at := fired(time.Second, 2*time.Second, true)
			for range 3 { // pieces at 1 s, 2 s, 3 s
				time.Sleep(time.Second)
				w.ReadStart()
				w.ReadEnd(false)
			}
			time.Sleep(10 * time.Second)
			return at()
		}, 5 * time.Second},
		{"time inside the body's reads is not the peer's", func(t *testing.T) time.Duration {
			w, at := fired(time.Second, 2*time.Second, true)
			w.ReadStart()
			time.Sleep(7 * time.Second) // a slow source
			w.ReadEnd(false)
			time.Sleep(10 * time.Second)
			return at()
		}, 9 * time.Second},
		{"a body that ends before the floor keeps the floor", func(t *testing.T) time.Duration {
			w, at := fired(4*time.Second, 3*time.Second, true)
			w.ReadStart()
			w.ReadEnd(true)
			time.Sleep(10 * time.Second)
			return at()
		}, 4 * time.Second},
		{"a body that ends after the floor has a stall from its end", func(t *testing.T) time.Duration {
			w, at := fired(time.Second, 3*time.Second, true)
			time.Sleep(2 * time.Second)
			w.ReadStart()
			w.ReadEnd(true)
			time.Sleep(10 * time.Second)
			return at()
		}, 5 * time.Second},
		{"progress after the end moves the stall", func(t *testing.T) time.Duration {
			w, at := fired(0, 2*time.Second, true)
			w.ReadStart()
			w.ReadEnd(true)
			time.Sleep(time.Second)
			w.Progress()
			time.Sleep(10 * time.Second)
			return at()
		}, 3 * time.Second},
		{"stopped in time never fires", func(t *testing.T) time.Duration {
			w, at := fired(time.Second, time.Second, false)
			if !w.Stop() {
				t.Error("Stop before the floor reported a fired watch")
			}
			time.Sleep(10 * time.Second)
			return at()
		}, -1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				if got := c.run(t); got != c.want {
					t.Fatalf("fired after %v, want %v", got, c.want)
				}
			})
		})
	}
	t.Run("stop after firing reports it", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			w, at := fired(time.Second, time.Second, false)
			time.Sleep(2 * time.Second)
			if at() != time.Second || w.Stop() {
				t.Fatal("Stop after the watch fired did not say so")
			}
		})
	})
}
