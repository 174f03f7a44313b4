// Package hedge is the hedged lookup of the one outbound caller
// (httpx/client), following the rules of docs/index.md §6: α legs at once,
// β more after HedgeAfter, the first satisfactory answer wins and cancels
// the rest, transient failures are retried within the budget, and one total
// deadline bounds everything. The engine knows nothing about HTTP: a Peer is
// anything that can look a key up; HTTPPeer adapts an httpx/client.Client
// (GET {path}?local=1, strict JSON of at most MaxAnswer bytes).
//
// It is a shared layer and imports no role. Its one user is the index
// (roles/index, roles/index/ownership, roles/index/peerlookup and
// roles/index/replication), so its defaults are the index's docs/index.md §6
// values and its metric names stay the index's: ron_index_peer_requests_total,
// ron_index_dht_lookup_ms, ron_dht_hedged_requests_total and the
// ron_backoff_retries_total / ron_tasks_*_total / ron_io_timeouts_total series
// with op="peer_lookup" or kind="lookup_leg" (docs/index.md §13). The caller
// passes the role label (Options.Role).
package hedge
