package node

import (
	"context"
	"errors"
	"fmt"

	"github.com/ronhq/ron/roles/registry"
	"github.com/ronhq/ron/roles/registry/httpapi"
	"github.com/ronhq/ron/runtime/cluster"
)

// SetReloadSource makes n's next Reload read src instead of the sources it
// started from (tests of reload behaviour).
func SetReloadSource(n *Node, src ConfigSource) { n.src = src }

// ReadyzReply is the /readyz body, for tests that decode it.
type ReadyzReply = readyzReply

// ClusterStatus is n's cluster status (its zone, members).
func ClusterStatus(n *Node) *cluster.Status { return n.cluster.status() }

// MetricValues is every metric of n by its full name.
func MetricValues(n *Node) map[string]float64 { return n.metrics.Values() }

// CheckMemberAllowList checks that n's member allow list runs
// and reads the committed HEAD of the co-located registry.
func CheckMemberAllowList(n *Node) error {
	if n.cluster.allowList == nil || n.cluster.stopAllowList == nil {
		return errors.New("member allow list is not running")
	}
	rg := n.roles["registry"].(*registry.Role)
	if err := n.cluster.allowList.syncHead(context.Background(), httpapi.NewLocalClient(rg.API())); err != nil {
		return fmt.Errorf("reading the co-located HEAD: %w", err)
	}
	if _, ok := n.cluster.allowList.allowed(); !ok {
		return errors.New("HEAD read but nothing known")
	}
	return nil
}
