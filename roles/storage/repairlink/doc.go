// Package repairlink connects the repair engine (package repair) to one
// storage node (docs/cluster.md §5, §9): a Link is the engine's Local,
// Remote and Executor over the node's blob store, its peer client and the
// index members (pushes of local copies, verified pulls from holders,
// drops of excess copies), and MountAdmin serves the repair admin routes
// over the running engine. The storage role builds one Link at Start in
// cluster mode and the engine over it, and mounts the admin routes on the
// node's admin listener.
package repairlink
