package storage

import (
	"net/http"
	"time"

	"github.com/ronhq/ron/httpx/client"
	"github.com/ronhq/ron/roles/storage/repair"
	"github.com/ronhq/ron/runtime/cluster"
	"github.com/ronhq/ron/store"
)

// newRepairer builds the repair engine of a cluster-mode role over its
// engine, peer client and announcer (docs/cluster.md §5). Start calls it
// once the engine is open.
func (r *Role) newRepairer() *repair.Repairer {
	r.repairHTTP = newRepairHTTP(r.clusterConfig().ReplicaStallTimeout)
	return repair.New(repair.Options{
		Members: r.opt.Cluster,
		Local:   repairLocal{r},
		Remote:  repairRemote{r},
		Exec:    repairExec{r},
		Metrics: r.opt.Metrics,
		Log:     r.Log,
	}, r.repairConfig(r.clusterConfig()))
}

// newRepairHTTP is the client of repair pulls and provider lookups: a
// keep-alive pool, no redirects, no compression, dials bounded by stall.
func newRepairHTTP(stall time.Duration) *http.Client {
	tr := client.NewTransport(client.TransportOptions{Base: client.BaseBare, DialTimeout: stall,
		MaxIdleConnsPerHost: 8, IdleConnTimeout: 90 * time.Second, DisableCompression: true})
	return &http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error {
		return http.ErrUseLastResponse
	}}
}

// stopRepair closes the lanes and the boost timer; the tasks end with the
// task group. closeRepair, after the tasks stopped, drops idle connections.
func (r *Role) stopRepair() {
	if rp := r.repair.Load(); rp != nil {
		rp.Stop()
	}
}

func (r *Role) closeRepair() {
	if r.repairHTTP != nil {
		r.repairHTTP.CloseIdleConnections()
	}
}

// clusterConfig is the [cluster] section in force (the last ApplyCluster,
// else Options.ClusterConfig, which New stores).
func (r *Role) clusterConfig() cluster.Config { return *r.clusterCfg.Load() }

// repairConfig combines c with the storage replication factor.
func (r *Role) repairConfig(c cluster.Config) repair.Config {
	return repair.FromCluster(c, r.Cfg.Load().ReplicationFactor)
}

// ApplyCluster hot-applies the [cluster] keys repair reads: repair_pace,
// repair_interval, repair_after, repair_batch, repair_scan_rate,
// repair_workers, repair_per_target and drop_excess. c must be valid; the
// lane capacity (repair_queue) and replica_stall_timeout keep their values
// until a restart. With cluster mode off it only validates.
func (r *Role) ApplyCluster(c cluster.Config) error {
	if err := c.Validate(); err != nil {
		return err
	}
	r.clusterCfg.Store(&c)
	if rp := r.repair.Load(); rp != nil {
		rp.Apply(r.repairConfig(c))
	}
	return nil
}

// queueRemaining queues a write's remaining copies (RF ≥ 3, docs/cluster.md
// §4 step 4) on the normal repair lane: one push of the local object id
// (size bytes) per member id of targets; a full lane skips it (counted), and
// the next pass finds it. A no-op with cluster mode off.
func (r *Role) queueRemaining(id store.ID, size int64, targets []string) {
	if rp := r.repair.Load(); rp != nil {
		rp.QueuePush(id, size, targets)
	}
}

// repairDetails is Details()["repair"]: the progress of docs/cluster.md §9,
// or nil with cluster mode off.
func (r *Role) repairDetails() any {
	rp := r.repair.Load()
	if rp == nil {
		return nil
	}
	return rp.Progress()
}

// corruptRepair queues the urgent pull of an object just quarantined.
func (r *Role) corruptRepair(id store.ID) {
	if rp := r.repair.Load(); rp != nil {
		rp.QueuePull(id)
	}
}
