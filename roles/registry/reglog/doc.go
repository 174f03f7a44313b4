// Package reglog is the registry's replicated state machine on the
// control plane (docs/cluster.md §14, kind 'r'): the leader's committer
// reduces every batch to one committer.Effects value and proposes it as an
// entry (Encode); every member running the registry applies committed
// entries in log order to its own stores (FSM): the records its segment
// log does not hold yet are appended by version, then one registry.db
// transaction writes the effects with the entry's log index
// (meta/log_applied), so a replay after a restart changes nothing and
// every member's segment log and registry.db are the same. An init entry
// carries the log's origin and note-signer key, so every member signs the
// same checkpoints with one key.
package reglog
