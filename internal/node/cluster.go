package node

import (
	"context"
	"fmt"
	"maps"
	"reflect"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/ronhq/ron/httpx/auth"
	"github.com/ronhq/ron/roles/registry/registryapi"
	"github.com/ronhq/ron/runtime"
	"github.com/ronhq/ron/runtime/cluster"
)

// clusterStopTimeout bounds the membership's shutdown after the roles have
// drained: the leaving announcement (≤ 0.5 s), Leave (1 s) and Shutdown.
const clusterStopTimeout = 2 * time.Second

// clusterNode is a Node's process-level cluster machinery (docs/cluster.md
// §2): the gossip membership and, with cluster.registry_admission, the
// allow list that follows the registry. It is nil on a node with cluster mode off; its methods accept a
// nil receiver.
type clusterNode struct {
	c         *cluster.Cluster
	id        string
	log       zerolog.Logger
	allowList *memberAllowList // nil unless cluster.registry_admission

	mu      sync.Mutex        // guards the fields below; never held across I/O
	bound   map[string]string // role → bound listener address, once started
	want    *Config           // the config whose metadata should be gossiped
	raft    *cluster.RaftMeta // the control-plane part of the metadata; nil: none
	gen     uint64            // counts changes of want and bound
	meta    cluster.Meta      // the metadata last handed to the membership
	sending bool              // a send is in flight (memberlist's UpdateNode is not safe concurrently)
	send    func(cluster.Meta) error

	wg            sync.WaitGroup     // cluster-run and cluster-allowlist
	stopAllowList context.CancelFunc // ends cluster-allowlist; set by run
}

// newClusterNode builds the membership of a node in cluster mode; it binds
// nothing.
func newClusterNode(cfg *Config, id string, keys *auth.Keyring, log zerolog.Logger, m *runtime.Metrics) (*clusterNode, error) {
	cn := &clusterNode{id: id, log: log.With().Str("role", "node").Logger(), meta: nodeMeta(cfg, id, nil, nil), want: cfg}
	opt := cluster.Options{Config: cfg.Cluster, NodeID: id, Key: keys.DeriveKey(gossipKeyContext),
		Meta: cn.meta, Log: cn.log, Metrics: m}
	if cfg.Cluster.RegistryAdmission {
		cn.allowList = newMemberAllowList(cn.log)
		opt.AllowList = cn.allowList.allowed
	}
	c, err := cluster.New(opt)
	if err != nil {
		return nil, fmt.Errorf("cluster: %w", err)
	}
	cn.c, cn.send = c, c.UpdateMeta
	m.Gauge("role_ready", func() float64 {
		if len(c.Ready()) == 0 {
			return 1
		}
		return 0
	}, "role", "node")
	return cn, nil
}

// membership is the Membership roles read: nil (a nil interface, not a
// typed nil) when cluster mode is off.
func (cn *clusterNode) membership() cluster.Membership {
	if cn == nil {
		return nil
	}
	return cn.c
}

// start binds gossip and makes the first join attempt, before the roles
// start.
func (cn *clusterNode) start(ctx context.Context) error {
	if cn == nil {
		return nil
	}
	if err := cn.c.Start(ctx); err != nil {
		return fmt.Errorf("cluster: %w", err)
	}
	return nil
}

// run starts the owner goroutines once the roles have started: the
// membership table (a failure is fatal: onFail is called) and the registry
// follower. It then gossips the roles' bound addresses when a listener was
// configured with port 0. The goroutines end at stop.
func (cn *clusterNode) run(n *Node, onFail func(error)) {
	if cn == nil {
		return
	}
	ctx := context.Background()
	cn.wg.Go(func() { // cluster-run: the membership table; Stop ends it
		if err := cn.c.Run(ctx); err != nil {
			onFail(err)
		}
	})
	if cn.allowList != nil {
		if rg, ok := n.roles[registryapi.RoleName].(registryapi.Local); ok {
			actx, cancel := context.WithCancel(ctx)
			cn.stopAllowList = cancel
			cn.wg.Go(func() { // cluster-allowlist: follows the co-located registry
				cn.allowList.run(actx, rg.LocalClient(), n.bus)
			})
		}
	}
	cn.setBound(n)
	if err := cn.updateMeta(nil); err != nil {
		cn.log.Warn().Err(err).Msg("cluster metadata with bound addresses not applied")
	}
}

// setBound records the roles' bound listener addresses.
func (cn *clusterNode) setBound(n *Node) {
	bound := map[string]string{}
	for name, r := range n.roles {
		if a, ok := r.(runtime.Addresser); ok {
			bound[name] = a.Addr()
		}
	}
	cn.mu.Lock()
	cn.bound = bound
	cn.gen++
	cn.mu.Unlock()
}

// updateMeta gossips the metadata of cfg (nil: of the config last given;
// a reload changed a role URL or the zone, or the listeners are bound, or
// the control plane's part changed) when it differs from the last one;
// UpdateMeta may wait up to 1 s for the broadcast. It fails, changing
// nothing, when cfg's metadata does not validate. One send is in flight at
// a time (memberlist's UpdateNode races with itself): a call made while
// another sends returns at once, and the sender, finding the metadata
// changed meanwhile, sends again, so concurrent calls end with the latest.
func (cn *clusterNode) updateMeta(cfg *Config) error {
	if cfg != nil {
		cn.mu.Lock()
		_, err := cluster.EncodeMeta(nodeMeta(cfg, cn.id, cn.bound, cn.raft))
		if err == nil {
			cn.want = cfg
			cn.gen++
		}
		cn.mu.Unlock()
		if err != nil {
			return err
		}
	}
	for {
		cn.mu.Lock()
		if cn.sending { // the send in flight sees gen moved and sends again
			cn.mu.Unlock()
			return nil
		}
		gen, m := cn.gen, nodeMeta(cn.want, cn.id, maps.Clone(cn.bound), cn.raft)
		same := reflect.DeepEqual(m, cn.meta)
		cn.sending = !same
		cn.mu.Unlock()
		if same {
			return nil
		}
		err := cn.send(m)
		cn.mu.Lock()
		cn.sending = false
		if err == nil {
			cn.meta = m
		}
		settled := cn.gen == gen
		cn.mu.Unlock()
		if err != nil || settled {
			return err
		}
	}
}

// setRaft gossips r as the node's control-plane part.
func (cn *clusterNode) setRaft(r cluster.RaftMeta) error {
	cn.mu.Lock()
	cn.raft = &r
	cn.gen++
	cn.mu.Unlock()
	return cn.updateMeta(nil)
}

// stop leaves the cluster and shuts gossip down (after the roles drained),
// then waits for the owner goroutines.
func (cn *clusterNode) stop() {
	if cn == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), clusterStopTimeout)
	defer cancel()
	cn.c.Stop(ctx)
	if cn.stopAllowList != nil {
		cn.stopAllowList()
	}
	cn.wg.Wait()
}

// ready lists the membership's missing readiness items.
func (cn *clusterNode) ready() []string {
	if cn == nil {
		return nil
	}
	return cn.c.Ready()
}

// status is the top-level "cluster" object of /api/v1/status; nil when
// cluster mode is off.
func (cn *clusterNode) status() *cluster.Status {
	if cn == nil {
		return nil
	}
	st := cn.c.Status()
	return &st
}
