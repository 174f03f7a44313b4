#!/usr/bin/env bash
# All registry benchmarks of ron (issue 4 item 7, docs/registry.md §10), in one
# run on one machine, reported as markdown on stdout:
#
#   B1  GET /registry/head throughput and p99 against nginx serving the same
#       bytes (scripts/bench/registry-head.sh; its BENCH_* settings apply).
#   B2  propose → 3 approvals → commit cycle p50/p95/p99 over loopback HTTP
#       with fsync (BenchmarkCycleM3).
#   B3  sustained commits/s from 8 competing clients with fsync, fsync p50 and
#       messages per group commit (BenchmarkCommitThroughput).
#   and beside them the machine's own fsync latency: BENCH_FSYNC_WRITES
#   synchronous 4 KiB writes (dd oflag=dsync) in the data directory's file
#   system, so a miss of B2/B3 can be traced to the disk.
#
# Usage: scripts/bench/registry.sh
#        BENCH_GO_TIME=30s scripts/bench/registry.sh   (the spec's 30 s B3)
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BENCH_GO_TIME=${BENCH_GO_TIME:-10s}           # -benchtime of B3
BENCH_GO_COUNT=${BENCH_GO_COUNT:-3}           # -count of B2 and B3 (medians)
BENCH_FSYNC_WRITES=${BENCH_FSYNC_WRITES:-500} # dd count for the fsync latency
BENCH_DIR=${BENCH_DIR:-${TMPDIR:-/tmp}}       # where the fsync probe writes

log() { echo "[bench $(date +%H:%M:%S)] $*" >&2; }

# fsync_latency prints the mean latency of one synchronous 4 KiB write, in ms.
fsync_latency() {
	local f secs
	f=$(mktemp "$BENCH_DIR/ron-fsync.XXXXXX")
	secs=$( { LC_ALL=C dd if=/dev/zero of="$f" bs=4k count="$BENCH_FSYNC_WRITES" oflag=dsync 2>&1 >/dev/null; } |
		awk '/copied/ { for (i = 1; i <= NF; i++) if ($i ~ /^s,?$/) print $(i-1) }')
	rm -f "$f"
	awk -v s="$secs" -v n="$BENCH_FSYNC_WRITES" 'BEGIN { printf "%.3f", s * 1000 / n }'
}

echo "# ron registry benchmarks"
echo
echo "$(date -u +%Y-%m-%dT%H:%MZ), ron $(git -C "$REPO" describe --always --dirty), $(nproc) cores, $(go env GOVERSION)"
echo

log "machine fsync latency ($BENCH_FSYNC_WRITES × 4 KiB dsync writes in $BENCH_DIR)"
before=$(fsync_latency)
echo "## Machine fsync latency"
echo
echo "dd oflag=dsync, 4 KiB × $BENCH_FSYNC_WRITES in $BENCH_DIR: **$before ms per synchronous write** (before the Go benchmarks)"
echo

log "B1: GET /registry/head (scripts/bench/registry-head.sh)"
"$REPO/scripts/bench/registry-head.sh"
echo

log "B2, B3: go test -bench (count $BENCH_GO_COUNT, B3 benchtime $BENCH_GO_TIME)"
echo "## B2 and B3"
echo
echo '```'
(cd "$REPO" && go test -run '^$' -bench 'BenchmarkCycleM3' -count "$BENCH_GO_COUNT" ./roles/registry 2>&1 | grep -E '^(Benchmark|ok|FAIL)')
(cd "$REPO" && go test -run '^$' -bench 'BenchmarkCommitThroughput' -benchtime "$BENCH_GO_TIME" -count "$BENCH_GO_COUNT" \
	./roles/registry 2>&1 | grep -E '^(Benchmark|ok|FAIL)')
echo '```'
echo
after=$(fsync_latency)
echo "Machine fsync latency after the Go benchmarks: **$after ms per synchronous write**."
log "done"
