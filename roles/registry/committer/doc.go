// Package committer is the registry's single writer (docs/registry.md §4):
// the in-memory state machine of proposals, approvals and commits, the
// registry-committer goroutine with its three bounded queues and group
// commit, registry.db (buckets meta and proposals, via store/kv), and the
// read snapshots.
//
// Write path. Propose, Approve and Commit run on the caller's goroutine:
// they check write readiness and everything that can be judged from the
// current snapshot (the chain check, proposal existence and state,
// signatures under the CPU semaphore, duplicates), then Offer a message to
// a reject-policy runtime.Queue (full → 429 busy) and wait for the reply
// until commit_timeout (→ 503 timeout, "may still land"). Run takes one
// message, drains up to group_commit_max more without waiting, skips those
// whose caller gave up, and applies the rest in order to its working
// state, repeating every check that depends on state (chain, cap,
// duplicates, base version, and a re-verification of every approval
// before a commit). Then, in this order: (1) the new log records are
// appended and fsynced, (2) one fsynced registry.db transaction stores
// HEAD, the retired signers and every changed proposal, (3) the read
// snapshot is swapped, (4) every waiter gets its reply, (5) OnCommit is
// called for each commit in order. Nothing is acknowledged before both
// fsyncs; an I/O error turns the registry write-unready ("storage") until
// restart and the batch's waiters get 503.
//
// Locking. The working state belongs to the goroutine running Run (Open
// before it); nobody else touches it. Readers use only the snapshot: one
// atomic.Pointer holding HEAD, the signer set and immutable proposal
// views, replaced whole after each durable batch. The only mutex guards
// the role-supplied write-unready reasons and is never held across I/O or
// a channel operation.
//
// Replicated mode (Options.Replicate; docs/cluster.md §14). Steps (1) and
// (2) become one proposal of the batch's Effects to the control plane; the
// registry's state machine (roles/registry/reglog) writes them on every
// member, this one included, and the batch is answered once its entry is
// applied here. Only the leader takes batches and sweeps, after a barrier
// and a reload; every other member's committer only follows: Notice marks
// its state stale and Run reloads it from the stores, publishes the
// snapshot and calls OnCommit for each new version. Open writes nothing.
//
// Time. Every time stamp and TTL uses the injected Clock; expiry is also
// judged lazily on read, so a proposal past expires_at answers 410 before
// the next sweep closes it. Sweeps (expiry, tombstone TTL, the 10,000
// tombstone cap) run in Run every SweepInterval.
package committer
