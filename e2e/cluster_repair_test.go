package e2e

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"
)

// The paced repair test (docs/cluster.md §13.7): pace 10 MiB/s, so repair
// bytes executed in any 5 s window stay ≤ 5 × 10 MiB + 1 MiB (the burst).
const (
	clPace       = 10 << 20
	clPaceWindow = 5 * time.Second
	clPaceMax    = 51 << 20
	// clPaceShare is what each pushing node must move so that an unpaced
	// push would break the window bound (else the test proves nothing).
	clPaceShare = 64 << 20
)

// TestClusterEmptyDiskRefillPaced: three nodes with repair_pace 10 MiB;
// n3 is the target of every object (half of them shared with n1, half with
// n2). n3 is killed and restarted on an emptied data dir (same node id): n1
// and n2 push its share back, so it is refilled by repair within
// repair_after + 3 × repair_interval + 2 × (bytes it held ÷ pace) + 30 s,
// while sampling shows each pusher's executed repair bytes in every 5 s
// window ≤ 51 MiB (docs/cluster.md §13.7).
func TestClusterEmptyDiskRefillPaced(t *testing.T) {
	c := startTestCluster(t, clusterOpts{nodes: 3, cluster: fmt.Sprintf("repair_pace = %q", "10MiB")})
	n1, n2, n3 := c.nodes[0], c.nodes[1], c.nodes[2]
	objs := objectsTargeting(ids(c.nodes), n3.id, clPaceShare/(4<<20), 4<<20)
	c.writePlaced(objs)
	c.waitPlaced(objs, c.nodes, 10*time.Second)
	held, err := dirObjectBytes(n3)
	if err != nil {
		t.Fatal(err)
	}

	s := startSampler(c, []*clNode{n1, n2}, 200*time.Millisecond)
	n3.kill9()
	restarted := time.Now()
	c.restartEmpty(n3)
	c.waitConverged(clHealLimit, "the empty restart")
	limit := clRepairAfter + 3*clRepairInterval + 2*time.Duration(float64(held)/clPace*float64(time.Second)) + 30*time.Second
	t.Logf("n3 held %d bytes; refill bound %s", held, limit.Round(time.Millisecond))
	waitFor(t, time.Until(restarted.Add(limit)), clPollEvery, "n3 to be refilled by repair", func() (bool, string) {
		inv, err := c.inventoryOf(n3)
		if err != nil {
			return false, err.Error()
		}
		missing := 0
		for _, o := range objs {
			if _, ok := inv[o.id]; !ok {
				missing++
			}
		}
		return missing == 0, fmt.Sprintf("%d of %d objects missing on n3", missing, len(objs))
	})
	t.Logf("refilled %s after the restart", time.Since(restarted).Round(time.Millisecond))
	samples := s.stop()
	for _, n := range []*clNode{n1, n2} {
		checkPaceWindows(t, n.id, samples[n.id])
	}
	c.waitPlaced(objs, c.nodes, 10*time.Second)
	c.checkInventoriesMatch(objs, c.nodes)
}

// objectsTargeting returns 2 × perPartner objects of size bytes whose top 2
// of members contain target, perPartner with each of the other two members.
func objectsTargeting(members []string, target string, perPartner, size int) []clObject {
	counts := map[string]int{}
	var out []clObject
	for seed := uint64(1); len(out) < 2*perPartner; seed++ {
		data := randomBytes(7000+seed, size)
		o := clObject{id: idOf(data), data: data}
		top := hrwTop(2, members, objectKey(o.id))
		if !slices.Contains(top, target) {
			continue
		}
		partner := top[0]
		if partner == target {
			partner = top[1]
		}
		if counts[partner] < perPartner {
			counts[partner]++
			out = append(out, o)
		}
	}
	return out
}

// paceSample is one reading of a node's executed repair bytes: the counter
// was read at some instant between sent and got.
type paceSample struct {
	sent, got time.Time
	bytes     float64
}

// sampler reads ron_repair_bytes_total{phase="executed"} of some nodes
// every interval until stopped.
type sampler struct {
	stopc chan struct{}
	done  sync.WaitGroup
	mu    sync.Mutex
	got   map[string][]paceSample
}

func startSampler(c *testCluster, ns []*clNode, every time.Duration) *sampler {
	s := &sampler{stopc: make(chan struct{}), got: map[string][]paceSample{}}
	s.done.Add(1)
	go func() { // owned by s; ends on stop
		defer s.done.Done()
		tick := time.NewTicker(every)
		defer tick.Stop()
		for {
			for _, n := range ns {
				sent := time.Now()
				v, _, err := n.metricValue("ron_repair_bytes_total", `role="storage"`, `phase="executed"`)
				if err == nil {
					s.mu.Lock()
					s.got[n.id] = append(s.got[n.id], paceSample{sent: sent, got: time.Now(), bytes: v})
					s.mu.Unlock()
				}
			}
			select {
			case <-s.stopc:
				return
			case <-tick.C:
			}
		}
	}()
	return s
}

// stop ends the sampling and returns the samples per node id.
func (s *sampler) stop() map[string][]paceSample {
	close(s.stopc)
	s.done.Wait()
	return s.got
}

// checkPaceWindows fails when two samples at most clPaceWindow apart
// (from the earlier request's send to the later one's answer, so the real
// interval is no longer) differ by more than clPaceMax, and when the node
// moved too little for the check to mean anything.
func checkPaceWindows(t *testing.T, id string, ss []paceSample) {
	t.Helper()
	if len(ss) < 2 {
		t.Fatalf("%s: %d pace samples", id, len(ss))
	}
	moved := ss[len(ss)-1].bytes - ss[0].bytes
	if moved < clPaceShare*0.9 {
		t.Errorf("test premise: %s executed only %.1f MiB of repair while sampled (want ≈ %d MiB, more than one window's %d MiB)",
			id, moved/(1<<20), clPaceShare>>20, clPaceMax>>20)
	}
	var worst float64
	for i := range ss {
		for j := i + 1; j < len(ss) && ss[j].got.Sub(ss[i].sent) <= clPaceWindow; j++ {
			d := ss[j].bytes - ss[i].bytes
			worst = max(worst, d)
			if d > clPaceMax {
				t.Errorf("%s executed %.2f MiB of repair within %s (> %d MiB = 5 s × 10 MiB/s + 1 MiB, docs/cluster.md §5 safety)",
					id, d/(1<<20), ss[j].got.Sub(ss[i].sent).Round(time.Millisecond), clPaceMax>>20)
				return
			}
		}
	}
	t.Logf("%s: %.1f MiB of repair executed; the largest 5 s window moved %.1f MiB", id, moved/(1<<20), worst/(1<<20))
}
