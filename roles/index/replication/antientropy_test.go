package replication

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ronhq/ron/roles/index/indexapi"
	"github.com/ronhq/ron/runtime/cluster"
)

// TestAntiEntropySchedule: a pass every interval, and one 10 s after an
// index membership change (further changes during the wait do not delay
// it; other changes trigger nothing).
func TestAntiEntropySchedule(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		view := func(states map[string]cluster.State, extra ...cluster.Member) *cluster.View {
			var ms []cluster.Member
			for _, id := range []string{"node-a", "node-b"} {
				st := states[id]
				if st == "" {
					st = cluster.StateAlive
				}
				ms = append(ms, cluster.Member{ID: id, Roles: []string{indexapi.RoleName}, State: st})
			}
			return cluster.NewView("node-a", append(ms, extra...), time.Now())
		}
		mem := cluster.NewStatic(view(nil))
		passes := make(chan time.Duration, 16)
		ae := AntiEntropy{Interval: func() time.Duration { return time.Minute }, Settle: 10 * time.Second, Membership: mem,
			Pass: func(context.Context) { passes <- time.Since(start) }}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- ae.Run(ctx) }()
		synctest.Wait()

		next := func(want time.Duration) {
			t.Helper()
			if got := <-passes; got != want {
				t.Fatalf("pass at %v, want %v", got, want)
			}
		}
		next(time.Minute)
		time.Sleep(5 * time.Second) // t = 65 s
		mem.Set(view(map[string]cluster.State{"node-b": cluster.StateDead}))
		synctest.Wait()
		time.Sleep(5 * time.Second) // t = 70 s: another change does not delay
		mem.Set(view(nil))
		synctest.Wait()
		next(75 * time.Second)
		// A member without the index role changes nothing.
		mem.Set(view(nil, cluster.Member{ID: "node-s", Roles: []string{"storage"}, State: cluster.StateAlive}))
		synctest.Wait()
		next(135 * time.Second)
		cancel()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		select {
		case d := <-passes:
			t.Fatalf("extra pass at %v", d)
		default:
		}
	})
}
