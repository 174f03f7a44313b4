#!/usr/bin/env bash
# Fuzzes the repository's fuzz targets (go test -fuzz), one at a time.
#
#   scripts/fuzz.sh [--shard K/N] [DURATION] [PATTERN]
#
# DURATION is each target's budget (default 60s). PATTERN is an extended
# regular expression matched against "<package dir>.<target>", e.g.
# 'httpx\.FuzzGuard' or 'roles/edge/' (default: every target). --shard K/N
# takes only the targets whose position in the sorted list is K modulo N
# (CI fuzzes one shard per run, chosen from the commit id).
#
# A target that fails leaves its failing input under its package's
# testdata/fuzz/<target>/ (go test's own place, replayed by every later go
# test run), printed here too, with the command that reproduces it. The
# script goes on with the other targets and exits 1 when any failed. At the
# end it prints each target's executions per second; minimizing an
# interesting input is capped at 10 runs (-fuzzminimizetime=10x) so that
# slow targets spend their budget fuzzing. A bare "context deadline
# exceeded" at the end of the budget with no input written is Go 1.26's
# coordinator race (golang/go#75804), reported as ok-race, not a failure.
set -euo pipefail
cd "$(dirname "$0")/.."

shard_k=0 shard_n=1
if [ "${1:-}" = "--shard" ]; then
  IFS=/ read -r shard_k shard_n <<<"${2:?--shard needs K/N}"
  shift 2
fi
duration="${1:-60s}"
pattern="${2:-.}"

# targets: "<package dir>.<target>" for every func FuzzX(f *testing.F).
mapfile -t all < <(git ls-files '*_test.go' 2>/dev/null || find . -name '*_test.go' -not -path '*/node_modules/*' | sed 's|^\./||')
mapfile -t targets < <(
  for f in "${all[@]}"; do
    sed -n 's/^func \(Fuzz[A-Za-z0-9_]*\)(f \*testing\.F).*/\1/p' "$f" | sed "s|^|$(dirname "$f").|"
  done | sort | awk -v k="$shard_k" -v n="$shard_n" '(NR - 1) % n == k' | grep -E -- "$pattern" || true
)
if [ ${#targets[@]} -eq 0 ]; then
  echo "fuzz.sh: no fuzz target matches '$pattern' (shard $shard_k/$shard_n)" >&2
  exit 2
fi
echo "fuzz.sh: ${#targets[@]} targets, $duration each"

failed=()
summary=()
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
for t in "${targets[@]}"; do
  dir="${t%.*}" name="${t##*.}"
  before="$(ls "$dir/testdata/fuzz/$name" 2>/dev/null | sort || true)"
  echo "== $dir $name"
  start=$(date +%s)
  if go test -run '^$' -fuzz "^$name\$" -fuzztime "$duration" -fuzzminimizetime 10x "./$dir" >"$log" 2>&1; then
    result=ok
  elif [ "$before" = "$(ls "$dir/testdata/fuzz/$name" 2>/dev/null | sort || true)" ] &&
    grep -qx '    context deadline exceeded' "$log"; then
    # Go 1.26's fuzz coordinator can fail a target with a bare "context
    # deadline exceeded" as -fuzztime ends (golang/go#75804, fixed in Go
    # 1.27): no input was written, so there is nothing to reproduce.
    result=ok-race
  else
    result=FAILED
    failed+=("$t")
  fi
  grep -E '^(fuzz: elapsed: [0-9]+s, execs|--- FAIL|    |FAIL|ok )' "$log" | tail -n 12 || true
  # Rate over the fuzzing phase: the last reported executions / seconds.
  rate=$({ grep -oE 'elapsed: [0-9]+s, execs: [0-9]+' "$log" || true; } | tail -n 1 |
    awk '{gsub(/s,/, "", $2); if ($2 > 0) printf "%d", $4 / $2; else print 0}')
  summary+=("$(printf '%-8s %8s exec/s  %4ss  %s' "$result" "${rate:-0}" "$(($(date +%s) - start))" "$t")")
  if [ "$result" = ok-race ]; then
    echo "-- not a finding: Go 1.26's fuzz coordinator failed the run as its budget ended (golang/go#75804); no input was written"
  fi
  if [ "$result" = FAILED ]; then
    for input in $(comm -13 <(printf '%s\n' "$before") <(ls "$dir/testdata/fuzz/$name" 2>/dev/null | sort)); do
      [ -n "$input" ] || continue
      echo "-- new failing input $dir/testdata/fuzz/$name/$input (keep it as a regression case):"
      cat "$dir/testdata/fuzz/$name/$input"
      echo "-- reproduce: go test -run '^$name/$input\$' ./$dir"
    done
    echo "-- fuzz it again: scripts/fuzz.sh $duration '^$dir\\.$name\$'"
  fi
done

echo "== summary (exec/s: executions per second of the fuzzing phase)"
printf '%s\n' "${summary[@]}"
if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz.sh: ${#failed[@]} target(s) failed: ${failed[*]}" >&2
  exit 1
fi
echo "fuzz.sh: ${#targets[@]} targets clean"
