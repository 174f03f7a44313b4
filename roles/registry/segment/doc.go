// Package segment is the registry's append-only log of SignedArtifact records
// (registry docs/registry.md §5): fixed-size segment files with a per-record CRC-32C,
// torn-tail recovery at Open, cached per-segment offset indexes for reads,
// and pruning below min_index.
//
// Files. A log directory holds seg-<first version, 20 digits>.log files. A
// segment holds the versions [first, first+SegmentRecords) and starts with
// the 16-byte header "RONRSEG1" + first version (u64 BE), followed by records
// laid out as EncodeRecord describes.
//
// Concurrency. Append, Close and Open are called by one goroutine (the
// registry committer). Read, Scan, Segments, Next, Bytes and Prune may be
// called from any goroutine, concurrently with Append. One mutex (Log.mu)
// guards the published state: the segment list, the final segment's record
// offsets, the next version, min_index, the byte count and the closed flag.
// It is held only to copy or update that in-memory state, never across file
// I/O. Append writes and fsyncs records first and publishes them afterwards,
// so a reader only ever addresses bytes that are complete and durable.
// Readers open their own read-only handle per call, so rolling or pruning a
// segment never pulls a handle out from under them. Sealed segments' offset
// indexes live in a bounded LRU, built at most once at a time per segment.
// The package starts no goroutines.
package segment
