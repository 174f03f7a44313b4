package root

import (
	"sync"
	"testing"

	"go.uber.org/goleak"

	"github.com/ronhq/ron/internal/node"
	"github.com/ronhq/ron/internal/node/nodetest"
)

// TestMain checks for leaked goroutines. memberlist's probeNode is left
// out: a probe in flight when a node shuts down waits for its ack timeout
// (memberlist does not stop it at Shutdown) and then ends by itself.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.IgnoreTopFunction("github.com/hashicorp/memberlist.(*Memberlist).probeNode"))
}

// startNode runs an ephemeral node (nodetest.Start) and returns it with
// its storage address ("" without storage).
func startNode(t testing.TB, mutate func(*node.Config)) (*node.Node, string) {
	t.Helper()
	n := nodetest.Start(t, mutate)
	return n, n.Addr("storage")
}

// startStoppableNode runs a node of the registry, index, storage and
// gateway roles whose shutdown the test triggers; the returned func
// returns once Run has (admin plane closed).
func startStoppableNode(t *testing.T) (*node.Node, func()) {
	t.Helper()
	n := nodetest.Start(t, func(c *node.Config) { c.Roles = []string{"registry", "index", "storage", "gateway"} })
	var once sync.Once
	shutdown := func() {
		once.Do(func() {
			n.Shutdown("test")
			if err := n.Wait(); err != nil {
				t.Errorf("Run: %v", err)
			}
		})
	}
	return n, shutdown
}
