// Package runtime is ron's in-process supervisor: the Role contract and the
// Manager that starts, runs and stops roles (docs/architecture.md §3), supervised
// task groups with restart backoff and a crash budget, bounded queues with a
// named overflow policy, the in-process event bus, immutable config
// snapshots, signal handling, and the Metrics helper that builds every
// ron_ metric name.
//
// Nothing in this package is global: the metrics set, the logger and the bus
// are passed in, so several ron instances can live in one process.
//
// Goroutine ownership: every goroutine started here is either a TaskGroup
// worker (named by Go's name argument) or a Manager goroutine named in a
// comment at its go statement; each has an owner that waits for it or, at a
// drain deadline, counts it in ron_tasks_aborted_total.
package runtime
