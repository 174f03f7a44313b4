package repair

import (
	"time"

	"github.com/ronhq/ron/runtime/cluster"
)

// Config is what the engine reads from [cluster] and storage.replication_factor.
// Every field is hot-reloadable through Repairer.Apply except Queue, the
// capacity of each lane, which is fixed when the engine is built.
type Config struct {
	RF          int           // storage.replication_factor
	RepairAfter time.Duration // absence before a member leaves P
	Interval    time.Duration // pause between passes
	Batch       int           // ids per inventory batch (≤ 1000)
	ScanRate    int           // ids per second at most
	Workers     int           // K
	PerTarget   int           // concurrent transfers to one target
	Pace        int64         // configured bytes per second
	Queue       int           // capacity of each lane
	DropExcess  bool          // delete confirmed excess copies
}

// FromCluster takes the repair keys of c with replication factor rf.
func FromCluster(c cluster.Config, rf int) Config {
	return Config{
		RF: rf, RepairAfter: c.RepairAfter, Interval: c.RepairInterval,
		Batch: c.RepairBatch, ScanRate: c.RepairScanRate, Workers: c.RepairWorkers,
		PerTarget: c.RepairPerTarget, Pace: int64(c.RepairPace), Queue: c.RepairQueue,
		DropExcess: c.DropExcess,
	}
}

// normalized replaces out-of-range values with the nearest usable ones so
// that a hand-built Config (tests) cannot stall the engine.
func (c Config) normalized() Config {
	c.RF = max(c.RF, 1)
	c.Batch = min(max(c.Batch, 1), 1000)
	c.ScanRate = max(c.ScanRate, 1)
	c.Workers = min(max(c.Workers, 1), maxWorkers)
	c.PerTarget = max(c.PerTarget, 1)
	c.Queue = max(c.Queue, 1)
	if c.Interval <= 0 {
		c.Interval = time.Minute
	}
	if c.Pace <= 0 {
		c.Pace = 1
	}
	return c
}

// maxWorkers is the largest K (cluster.repair_workers is validated to 1–64).
const maxWorkers = 64
