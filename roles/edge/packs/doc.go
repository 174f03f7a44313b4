// Package packs finds, verifies, identifies, mounts and watches the edge's
// tile packs (docs/edge.md §4.1–4.5): PMTiles archives read with package
// pmtiles and MBTiles files read with package mbtiles, behind one Pack type.
//
// A Set owns the mounted packs. Mount discovers the `*.pmtiles` and
// `*.mbtiles` files of Options.Dir plus Options.Files and mounts them
// concurrently at the configured verification level; Run then polls every
// Options.Poll and acts on a file once its stat (size, mtime, inode, ctime)
// has been the same on two consecutive polls: the new version is opened and
// verified and the name→pack snapshot is swapped atomically. Readers take a
// reference with Acquire; a swapped-out pack's file closes after its last
// release, so in-flight reads always complete.
//
// Open is the one code path that opens and verifies a single pack file; the
// Set and the `ron pack` commands both use it.
//
// Metrics (role="edge"): ron_edge_packs_mounted{kind},
// ron_edge_pack_mounts_total{pack,result} (ok, error, skipped) and
// ron_edge_dir_cache_lookups_total{result} (hit, miss). The role, which
// runs Run as its "pack_watch" task, counts that task.
//
// Goroutines: Mount and each poll of Run open packs on short-lived
// goroutines they wait for before returning; nothing else is started.
package packs
