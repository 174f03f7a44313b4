package ownership

import (
	"context"
	"errors"
	"testing"

	"github.com/ronhq/ron/httpx/client/hedge"
	"github.com/ronhq/ron/runtime"
	"github.com/ronhq/ron/runtime/cluster"
)

// TestPeersRetireClients: clients follow the alive index members,
// and a departed member's target series are removed.
func TestPeersRetireClients(t *testing.T) {
	met := runtime.NewMetrics(nil)
	mem := cluster.NewStatic(testView("node-a", nil, "node-a", "node-b", "node-c"))
	cp := NewPeers(PeerOptions{Membership: mem, Replicas: 3, Metrics: met})
	defer cp.Close()
	series := `ron_breaker_state{role="index",target="node-b.test:5304",state="closed"}`
	if cp.Len() != 2 || cp.OpenCount() != 0 {
		t.Fatalf("Len %d", cp.Len())
	}
	if _, ok := met.Values()[series]; !ok {
		t.Fatalf("no %s", series)
	}
	before := cp.current()["node-c"]
	mem.Set(testView("node-a", map[string]cluster.State{"node-b": cluster.StateDead}, "node-a", "node-b", "node-c"))
	if cp.Len() != 1 || cp.current()["node-c"] != before {
		t.Fatalf("after node-b died: Len %d, node-c rebuilt %v", cp.Len(), cp.current()["node-c"] != before)
	}
	if _, ok := met.Values()[series]; ok {
		t.Fatalf("%s still exported", series)
	}
	if _, err := cp.WriteClient("node-b"); err == nil {
		t.Fatal("write client for a dead member")
	}
	mem.Set(testView("node-a", nil, "node-a"))
	if _, err := cp.Name(context.Background(), "blog.example"); !errors.Is(err, hedge.ErrNotFound) {
		t.Fatalf("lone node lookup: %v", err)
	}
}
