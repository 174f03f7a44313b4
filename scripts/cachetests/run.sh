#!/usr/bin/env bash
# Runs the http-tests/cache-tests suite (npm http-cache-tests, pinned by
# package-lock.json) against the edge's /assets shared cache, as
# docs/edge.md §14 describes, prints the score (the number of passing
# tests) and the failing test ids, and exits 1 when the score is below the
# floor in FLOOR.
#
#   scripts/cachetests/run.sh [EDGE_BASE_URL]
#
# With EDGE_BASE_URL (e.g. http://127.0.0.1:18081) the edge must already be
# running with origin "ct" = http://127.0.0.1:18000 (allow_insecure,
# forward_unsafe, max_tries = 1). Without it the script builds ron (or uses
# $RON_BIN) and starts it with roles = ["edge"], amnesia = true and that
# origin on 127.0.0.1:18081. Either way it starts the suite's own origin
# server on 127.0.0.1:18000 and stops everything it started on exit.
# RESULTS_JSON=path keeps the suite's JSON output.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
origin_port=18000
edge_listen=127.0.0.1:18081
admin_listen=127.0.0.1:18080

work="$(mktemp -d)"
pids=()
cleanup() {
  for pid in "${pids[@]}"; do
    kill "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  rm -rf "$work"
}
trap cleanup EXIT

# wait_http URL PID LOG: until URL answers (any status) while PID (the
# process that should serve it) is alive, at most 30 s.
wait_http() {
  for _ in $(seq 1 300); do
    if ! kill -0 "$2" 2>/dev/null; then
      echo "cachetests: the server for $1 exited:" >&2
      cat "$3" >&2
      return 1
    fi
    if curl -s -o /dev/null "$1"; then return 0; fi
    sleep 0.1
  done
  echo "cachetests: $1 did not come up" >&2
  return 1
}

npm ci --prefix "$here" --no-audit --no-fund --loglevel=error >/dev/null
pkg="$here/node_modules/http-cache-tests"

# The suite's origin. Its "npm run server" puts node in the background of a
# shell npm then leaves; run node in the foreground of our own job instead,
# with the settings npm would pass, so its pid is ours to stop.
(cd "$pkg" && exec env npm_config_protocol=http npm_config_port="$origin_port" \
  npm_config_pidfile="$work/origin.pid" node server/server.mjs) >"$work/origin.log" 2>&1 &
pids+=($!)
wait_http "http://127.0.0.1:$origin_port/" "$!" "$work/origin.log"

edge="${1:-}"
if [ -z "$edge" ]; then
  bin="${RON_BIN:-}"
  if [ -z "$bin" ]; then
    bin="$work/ron"
    (cd "$repo" && go build -o "$bin" .)
  fi
  cat >"$work/ron.toml" <<TOML
roles = ["edge"]
amnesia = true
data_dir = "$work/data"

[admin]
listen = "$admin_listen"

[edge]
listen = "$edge_listen"

[[edge.origins]]
name = "ct"
url = "http://127.0.0.1:$origin_port"
allow_insecure = true
forward_unsafe = true
max_tries = 1
TOML
  "$bin" serve --config "$work/ron.toml" >"$work/ron.log" 2>&1 &
  pids+=($!)
  edge="http://$edge_listen"
  wait_http "$edge/readyz" "$!" "$work/ron.log"
fi
edge="${edge%/}"

results="${RESULTS_JSON:-$work/results.json}"
(cd "$pkg" && npm run --silent cli --base="$edge/assets/ct") 2>"$work/cli.err" >"$results" || {
  echo "cachetests: the suite failed to run:" >&2
  cat "$work/cli.err" >&2
  exit 1
}

# The score, and the published results the package ships (results/*.json:
# Squid, Varnish, nginx, …) counted the same way on the same test ids, so
# the comparison never depends on numbers copied from elsewhere.
node - "$results" "$here/FLOOR" "$pkg/results" <<'JS'
const fs = require('fs')
const path = require('path')
const [results, floorFile, published] = process.argv.slice(2)
const r = JSON.parse(fs.readFileSync(results, 'utf8'))
const ids = Object.keys(r)
const passed = ids.filter(id => r[id] === true)
const failed = ids.filter(id => r[id] !== true)
const floor = parseInt(fs.readFileSync(floorFile, 'utf8').trim(), 10)
for (const id of failed) {
  const why = Array.isArray(r[id]) ? r[id].join(': ') : String(r[id])
  console.log(`FAIL ${id} — ${why}`)
}
const others = fs.readdirSync(published).filter(f => f.endsWith('.json')).sort().map(f => {
  const o = JSON.parse(fs.readFileSync(path.join(published, f), 'utf8'))
  return `${path.basename(f, '.json')} ${ids.filter(id => o[id] === true).length}`
})
console.log(`published results on these ${ids.length} tests: ${others.join(', ')}`)
console.log(`cache-tests score: ${passed.length} of ${ids.length} (floor ${floor})`)
process.exit(passed.length < floor ? 1 : 0)
JS
