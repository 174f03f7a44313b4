package storage

import (
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/roles/storage/announcing"
	"github.com/ronhq/ron/roles/storage/repair"
	"github.com/ronhq/ron/roles/storage/repairlink"
	"github.com/ronhq/ron/runtime/cluster"
	"github.com/ronhq/ron/store"
)

// newRepairer builds the repair engine of a cluster-mode role over its
// link to the engine, the peer client and the announcer (docs/cluster.md
// §5). Start calls it once the engine is open.
func (r *Role) newRepairer() *repair.Repairer {
	r.repairLink = repairlink.New(repairlink.Options{
		Members:        r.opt.Cluster,
		Engine:         r.engine,
		OpenChunks:     r.openChunks,
		Peers:          r.peer,
		Announce:       r.announceHeld,
		Withdraw:       r.withdraw,
		Quarantined:    func(id store.ID) { r.onCorrupt(id, -1, store.KindData) },
		Token:          r.opt.Node.Token,
		Stall:          func() time.Duration { return r.clusterConfig().ReplicaStallTimeout },
		MaxObjectBytes: func() int64 { return int64(r.Cfg.Load().MaxObjectBytes) },
	})
	l := r.repairLink
	return repair.New(repair.Options{Members: r.opt.Cluster, Local: l, Remote: l, Exec: l, Metrics: r.opt.Metrics, Log: r.Log},
		r.repairConfig(r.clusterConfig()))
}

// announceHeld queues the provider record of a held object with the
// provider_ttl in force.
func (r *Role) announceHeld(info store.Info) {
	r.announce.enqueue(announcing.Record{ID: info.ID, Type: info.ContentType, TTL: r.Cfg.Load().ProviderTTL})
}

// withdraw queues the withdrawal of id's provider record.
func (r *Role) withdraw(id store.ID) { r.announce.enqueue(announcing.Record{ID: id, TTL: 0}) }

// stopRepair closes the lanes and the boost timer; the tasks end with the
// task group. closeRepair, after the tasks stopped, drops idle connections.
func (r *Role) stopRepair() {
	if rp := r.repair.Load(); rp != nil {
		rp.Stop()
	}
}

func (r *Role) closeRepair() {
	if r.repairLink != nil {
		r.repairLink.Close()
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

// MountRepairAdmin registers the repair routes of docs/cluster.md §9 on the
// admin listener's /api/v1 group, behind mw (the admin check):
// POST /repair/pace, POST /repair/run (202) and POST /repair/object (202)
// (repairlink.MountAdmin). They answer 404 with cluster mode off and 503
// not_ready before Start.
func (r *Role) MountRepairAdmin(api *echo.Group, mw echo.MiddlewareFunc) {
	repairlink.MountAdmin(api, mw, r.repairer, r.Log)
}

// repairer returns the running engine or the answer explaining its absence.
func (r *Role) repairer() (*repair.Repairer, error) {
	rp := r.repair.Load()
	switch {
	case r.opt.Cluster == nil:
		return nil, httpx.NewError(http.StatusNotFound, httpx.CodeNotFound, "repair runs only in cluster mode")
	case rp == nil:
		return nil, errNotStarted()
	}
	return rp, nil
}

// errNotStarted answers a cluster admin call before the role started.
func errNotStarted() error {
	return httpx.NewError(http.StatusServiceUnavailable, httpx.CodeNotReady, "storage has not started").WithRetryAfter(5)
}
