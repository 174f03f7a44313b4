// Package repair is the storage role's repair engine (docs/cluster.md §5):
// a planner that walks the local inventory in paced batches, asks the
// placement targets which objects they hold and decides, object by object,
// who pushes the missing copies; two bounded lanes (urgent, normal) that
// feed K workers; a per-target transfer limit; and one token bucket shared
// by every push and pull so that repair never sends more than the pace
// allows. It is written against small interfaces (Local, Remote, Executor,
// cluster.Membership) so that every part runs under tests with fakes; the
// storage role supplies the adapters over its engine, the peer client and
// the index.
package repair
