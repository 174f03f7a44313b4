#!/usr/bin/env bash
# shape.sh prints the structural counts that issue 17 ("one shape for every
# role") tracks, so a before/after can be measured the same way each time.
# Run it from anywhere inside the repository. `duplicates` is optional (a
# team tool, not part of the repository); without it that row says so.
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"

# Non-test Go files of the daemon and its tools.
gofiles() { git ls-files '*.go' | grep -v '_test\.go$'; }

deps=$(go list -deps ./roles/gateway | grep -c '^github.com/ronhq/ron/' || true)
# Nil checks on a cluster or membership handle: each is a branch that asks
# "am I in cluster mode?" where a topology should answer "where is X?".
cluster=$(gofiles | xargs grep -hE '[A-Za-z.]*([Cc]luster|[Mm]embers)[A-Za-z]*(\(\))? (==|!=) nil' | wc -l)
breakers=$(gofiles | xargs grep -l 'gobreaker.New' | wc -l)
transports=$(gofiles | xargs grep -hE '&http\.Transport\{|http\.DefaultTransport\.\(\*http\.Transport\)\.Clone\(\)' | wc -l)
rolelines=$(cat roles/*/role.go | wc -l)
printf 'packages linked by roles/gateway   %s\n' "$deps"
printf 'cluster-mode nil checks            %s\n' "$cluster"
printf 'files that build a gobreaker       %s\n' "$breakers"
printf 'hand-built http transports         %s\n' "$transports"
printf 'lines in roles/*/role.go           %s\n' "$rolelines"
if command -v duplicates >/dev/null; then
	printf 'duplicates pairs of >=10 lines     %s\n' \
		"$(duplicates --min-lines 10 --most 200 --seconds 300 | head -1 | awk '{print $1}')"
else
	printf 'duplicates pairs of >=10 lines     (duplicates is not installed)\n'
fi
