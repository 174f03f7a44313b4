#!/usr/bin/env bash
# Index benchmarks of ron (docs/index.md §16), reported as ratios and
# percentiles measured in one run on one machine:
#
#   1. Cached GET /resolve/{name}: wrk against one ron (--roles=index,storage,
#      amnesia) whose resolve cache holds the answer, and against constjson, a
#      trivial Go net/http handler serving the same answer bytes (same
#      threads/connections/duration), interleaved BENCH_REPEAT times;
#      medians and ron/constjson. Target ≥ 0.50.
#   2. Hedged resolve latency: three ron index nodes A, B, C list each other
#      in index.peers; C is advertised (and so reached) through delayproxy.
#      The names and provider records live on B and C only, so every resolve
#      on A asks its peers (GET /names and /providers with ?local=1). The
#      resolvelat client sends Cache-Control: no-cache to A (caches bypassed)
#      for BENCH_LAT_DURATION per round and reports p50/p99; rounds alternate
#      between the proxy delaying every request by BENCH_DELAY and the same
#      proxy delaying nothing. Target: p99 ≤ hedge_ms + 50 ms = 200 ms with
#      the delayed peer.
#
# Usage: scripts/bench/index.sh          (full run, about 2 minutes)
#        BENCH_DURATION=2s BENCH_REPEAT=1 BENCH_LAT_DURATION=3s BENCH_LAT_REPEAT=1 \
#        scripts/bench/index.sh          (smoke run, about 30 s)
#
# The markdown report goes to stdout, progress to stderr. Everything it
# starts and creates is removed on exit. wrk and curl are installed with
# apt-get when missing.
set -euo pipefail

BENCH_DURATION=${BENCH_DURATION:-5s}          # wrk -d
BENCH_THREADS=${BENCH_THREADS:-1}             # wrk -t
BENCH_CONNS=${BENCH_CONNS:-32}                # wrk -c
BENCH_REPEAT=${BENCH_REPEAT:-5}               # wrk pairs
BENCH_LAT_DURATION=${BENCH_LAT_DURATION:-10s} # resolvelat -d per round
BENCH_LAT_CONC=${BENCH_LAT_CONC:-4}           # resolvelat -c
BENCH_LAT_REPEAT=${BENCH_LAT_REPEAT:-3}       # rounds per variant
BENCH_DELAY=${BENCH_DELAY:-1s}                # delay of the slow peer
BENCH_NAMES=${BENCH_NAMES:-16}                # names resolved in part 2

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# shellcheck source=scripts/bench/lib.sh
source "$REPO/scripts/bench/lib.sh"
NAME=bench-site.example # the name of part 1

# ---------------------------------------------------------------- processes
LOGS=()
bench_workdir "$(mktemp -d /tmp/ron-bench-index.XXXXXX)"

# start_ron NAME ADMIN_PORT [serve flags…]: starts an amnesia ron logging to
# $WORK/NAME.log, waits for /readyz and sets RON_PID.
start_ron() {
	local name=$1 admin=$2
	shift 2
	local logf=$WORK/$name.log
	LOGS+=("$logf")
	"$WORK/bin/ron" serve --amnesia --data-dir "$WORK/$name" --admin.listen "127.0.0.1:$admin" \
		--log.level warn "$@" >"$logf" 2>&1 &
	RON_PID=$!
	PIDS+=("$RON_PID")
	wait_http "http://127.0.0.1:$admin/readyz" || die "ron ($name) did not become ready"
}

# index_token ADMIN_PORT prints an index:write token minted by the admin
# plane (amnesia: the root key is not on disk).
index_token() {
	local out
	out=$(curl -fsS -XPOST "http://127.0.0.1:$1/api/v1/tokens" -H 'Content-Type: application/json' \
		-d '{"scopes":["index:write"],"ttl":"1h"}') || die "token request failed"
	sed -n 's/.*"token":"\([^"]*\)".*/\1/p' <<<"$out"
}

# seed BASE TOKEN NAME B3: points NAME at B3 and announces three providers.
seed() {
	local base=$1 tok=$2 name=$3 b3=$4 code recs="" j
	code=$(curl -sS -o "$WORK/seed.out" -w '%{http_code}' -XPUT "$base/names/$name" \
		-H "Authorization: Bearer $tok" -H 'Content-Type: application/json' -d "{\"b3\":\"$b3\"}")
	[[ $code == 200 ]] || die "PUT $base/names/$name: $code $(cat "$WORK/seed.out")"
	for j in 1 2 3; do
		recs+="${recs:+,}{\"b3\":\"$b3\",\"node\":\"storage-$j\",\"addr\":\"http://storage-$j.bench:5303\",\"ttl_s\":86400,\"region\":\"eu-1\",\"type\":\"application/vnd.ron.manifest+json\"}"
	done
	code=$(curl -sS -o "$WORK/seed.out" -w '%{http_code}' -XPOST "$base/providers" \
		-H "Authorization: Bearer $tok" -H 'Content-Type: application/json' -d "{\"records\":[$recs]}")
	[[ $code == 200 ]] || die "POST $base/providers: $code $(cat "$WORK/seed.out")"
}

# target_of I prints the i-th object id (any canonical b3 id will do: the
# index does not check that the object exists).
target_of() { echo "b3:$(printf 'ron-bench-index-%d' "$1" | sha256sum | cut -c1-64)"; }

# ---------------------------------------------------------------- statistics
field() { sed -n "s/.*\\b$1=\\([^ ]*\\).*/\\1/p" <<<"$2"; } # field KEY "k=v k=v" → v

# wrk_rps URL → requests/s; dies on socket errors or non-2xx answers.
wrk_rps() {
	local out
	out=$(wrk -t"$BENCH_THREADS" -c"$BENCH_CONNS" -d"$BENCH_DURATION" "$1" 2>&1) || die "wrk $1: $out"
	if grep -qE 'Non-2xx|Socket errors' <<<"$out"; then
		grep -E 'Non-2xx|Socket errors' <<<"$out" >&2
		[[ ${BENCH_ALLOW_ERRORS:-0} == 1 ]] || die "wrk errors for $1 (set BENCH_ALLOW_ERRORS=1 to go on)"
	fi
	awk '/^Requests\/sec:/ {print $2}' <<<"$out"
}

# ---------------------------------------------------------------- build
build() {
	log "building ron, constjson, delayproxy, resolvelat"
	mkdir -p "$WORK/bin"
	(cd "$REPO" && go build -o "$WORK/bin/ron" . &&
		go build -o "$WORK/bin/" ./scripts/bench/cmd/constjson ./scripts/bench/cmd/delayproxy ./scripts/bench/cmd/resolvelat) ||
		die "go build failed"
	RON_VERSION=$(cd "$REPO" && git rev-parse --short HEAD 2>/dev/null || echo unknown)
	[[ -z $(cd "$REPO" && git status --porcelain 2>/dev/null | grep -v '^??' | head -1) ]] || RON_VERSION+="+dirty"
}

# ---------------------------------------------------------------- 1. cached resolve vs constjson
# Sets RON_RPS, REF_RPS (per-run lists) and ANSWER_BYTES.
bench_cached() {
	local admin idx store ref tok url_ron url_ref i srv res
	free_port admin
	free_port idx
	free_port store
	free_port ref
	log "1/2 cached resolve: ron vs constjson, wrk -t$BENCH_THREADS -c$BENCH_CONNS -d$BENCH_DURATION ×$BENCH_REPEAT"
	start_ron cached "$admin" --roles=index,storage --index.listen "127.0.0.1:$idx" --storage.listen "127.0.0.1:$store"
	CACHED_PID=$RON_PID
	tok=$(index_token "$admin")
	[[ -n $tok ]] || die "no index:write token"
	seed "http://127.0.0.1:$idx" "$tok" "$NAME" "$(target_of 0)"
	url_ron="http://127.0.0.1:$idx/resolve/$NAME"
	curl -fsS -o /dev/null "$url_ron" || die "first resolve failed"
	curl -fsS -o "$WORK/answer.json" "$url_ron" || die "second resolve failed"
	grep -q '"source":"cache"' "$WORK/answer.json" || die "resolve not served from the cache: $(cat "$WORK/answer.json")"
	ANSWER_BYTES=$(stat -c %s "$WORK/answer.json")
	LOGS+=("$WORK/constjson.log")
	"$WORK/bin/constjson" -listen "127.0.0.1:$ref" -body-file "$WORK/answer.json" >"$WORK/constjson.log" 2>&1 &
	PIDS+=("$!")
	url_ref="http://127.0.0.1:$ref/resolve/$NAME"
	wait_http "$url_ref" || die "constjson did not start"
	cmp -s <(curl -fsS "$url_ref") "$WORK/answer.json" || die "constjson serves other bytes"
	RON_RPS="" REF_RPS=""
	for ((i = 1; i <= BENCH_REPEAT; i++)); do
		for srv in $( ((i % 2)) && echo "ron ref" || echo "ref ron"); do
			if [[ $srv == ron ]]; then res=$(wrk_rps "$url_ron"); RON_RPS+=" $res"; else res=$(wrk_rps "$url_ref"); REF_RPS+=" $res"; fi
			log "  run $i $srv: $res req/s"
		done
	done
	# resolve cache hits/misses over the whole run (cache_ttl 10 s: one miss per 10 s is expected)
	CACHE_STATS=$(curl -fsS "http://127.0.0.1:$admin/metrics" |
		awk '/^ron_index_cache_(hits|misses)_total\{.*cache="resolve"/ {split($1, a, "{"); printf "%s=%s ", a[1], $2}')
	CACHED_HWM=$(awk '/VmHWM/ {printf "%.0f", $2/1024}' "/proc/$CACHED_PID/status")
	stop_pid "$CACHED_PID"
}

# ---------------------------------------------------------------- 2. hedged resolve latency
# start_proxy DELAY: (re)starts delayproxy on $PROXY in front of node C.
start_proxy() {
	[[ -z ${PROXY_PID:-} ]] || stop_pid "$PROXY_PID"
	[[ " ${LOGS[*]} " == *" $WORK/delayproxy.log "* ]] || LOGS+=("$WORK/delayproxy.log")
	"$WORK/bin/delayproxy" -listen "127.0.0.1:$PROXY" -target "http://127.0.0.1:${IDX[c]}" -delay "$1" \
		>"$WORK/delayproxy.log" 2>&1 &
	PROXY_PID=$!
	PIDS+=("$PROXY_PID")
	for _ in $(seq 50); do
		grep -q "listening on 127.0.0.1:$PROXY" "$WORK/delayproxy.log" && return 0
		sleep 0.1
	done
	die "delayproxy did not start"
}

# start_cluster: nodes a, b, c with index.peers = [a, b, proxy→c]; c
# advertises the proxy, so it recognises itself and the others reach it
# through the proxy.
start_cluster() {
	declare -gA IDX ADM URL
	local n peers
	local p
	for n in a b c; do
		free_port p
		IDX[$n]=$p
		free_port p
		ADM[$n]=$p
	done
	free_port PROXY
	URL[a]="http://127.0.0.1:${IDX[a]}" URL[b]="http://127.0.0.1:${IDX[b]}" URL[c]="http://127.0.0.1:$PROXY"
	peers="\"${URL[a]}\", \"${URL[b]}\", \"${URL[c]}\""
	for n in a b c; do
		cat >"$WORK/$n.toml" <<-TOML
			[index]
			listen = "127.0.0.1:${IDX[$n]}"
			advertise_url = "${URL[$n]}"
			peers = [$peers]
		TOML
		start_ron "$n" "${ADM[$n]}" --roles=index --config "$WORK/$n.toml"
	done
}

# seed_peers: the names and records on b and c (direct), none on a.
seed_peers() {
	local n tok i
	for n in b c; do
		tok=$(index_token "${ADM[$n]}")
		for ((i = 0; i < BENCH_NAMES; i++)); do
			seed "http://127.0.0.1:${IDX[$n]}" "$tok" "site-$i.bench" "$(target_of "$i")"
		done
	done
	KEYS=$(seq -f 'site-%g.bench' 0 $((BENCH_NAMES - 1)) | paste -sd,)
}

# legs_snapshot FILE: node a's counters of peer legs to the proxied peer by
# result (slow_peer_ok, slow_peer_canceled, …) and of hedged lookups by
# winning wave (hedge_alpha, hedge_beta, hedge_none), one "key value" a line.
legs_snapshot() {
	curl -fsS "http://127.0.0.1:${ADM[a]}/metrics" | awk -v t="target=\"127.0.0.1:$PROXY\"" '
		/^ron_index_peer_requests_total\{/ && index($0, t) { match($0, /result="[a-z_]+"/); print "slow_peer_" substr($0, RSTART + 8, RLENGTH - 9), $2 }
		/^ron_dht_hedged_requests_total\{/ { match($0, /result="[a-z_]+"/); print "hedge_" substr($0, RSTART + 8, RLENGTH - 9), $2 }' |
		sort >"$1" || die "metrics of node a"
}
# legs_delta BEFORE AFTER prints "key=delta" for every counter that moved.
legs_delta() {
	join -a1 -a2 -e0 -o 0,1.2,2.2 "$1" "$2" | awk '{ d = $3 - $2; if (d) printf "%s=%d ", $1, d }'
}

# lat_round LABEL DELAY: one resolvelat round against a; appends p50/p99.
lat_round() {
	local label=$1 out
	start_proxy "$2"
	legs_snapshot "$WORK/legs.before"
	curl -fsS -o "$WORK/check.json" -H 'Cache-Control: no-cache' "${URL[a]}/resolve/site-0.bench" ||
		die "resolve on a failed: $(cat "$WORK/check.json" 2>/dev/null)"
	grep -q '"source":"peer"' "$WORK/check.json" || die "resolve on a not answered by the peers: $(cat "$WORK/check.json")"
	out=$("$WORK/bin/resolvelat" -url "${URL[a]}" -keys "$KEYS" -c "$BENCH_LAT_CONC" -d "$BENCH_LAT_DURATION") ||
		die "resolvelat: $out"
	legs_snapshot "$WORK/legs.after"
	out+=" | node a: $(legs_delta "$WORK/legs.before" "$WORK/legs.after")"
	log "  $label: $out"
	[[ $(field errors "$out") == 0 ]] || log "warning: $label round had errors"
	P50[$label]+=" $(field p50_ms "$out")"
	P99[$label]+=" $(field p99_ms "$out")"
	RPSL[$label]+=" $(field rps "$out")"
	ERRS[$label]=$((${ERRS[$label]:-0} + $(field errors "$out")))
	LINES+="$label: $out"$'\n'
}

bench_hedged() {
	log "2/2 hedged resolve: 3 nodes, one peer via delayproxy ($BENCH_DELAY vs 0), resolvelat -c $BENCH_LAT_CONC -d $BENCH_LAT_DURATION ×$BENCH_LAT_REPEAT"
	declare -gA P50 P99 RPSL ERRS
	LINES=""
	start_cluster
	seed_peers
	local i
	for ((i = 1; i <= BENCH_LAT_REPEAT; i++)); do
		if ((i % 2)); then lat_round delayed "$BENCH_DELAY"; lat_round none 0s; else lat_round none 0s; lat_round delayed "$BENCH_DELAY"; fi
	done
}

# ---------------------------------------------------------------- report
report() {
	local r n q d50 d99 f50 f99
	# shellcheck disable=SC2086
	r=$(median $RON_RPS) n=$(median $REF_RPS)
	q=$(ratio "$r" "$n")
	# shellcheck disable=SC2086
	d50=$(median ${P50[delayed]}) d99=$(median ${P99[delayed]}) f50=$(median ${P50[none]}) f99=$(median ${P99[none]})
	echo "## ron index benchmarks"
	echo
	echo "$(date -u +%Y-%m-%dT%H:%MZ), ron $RON_VERSION, $(nproc) cores, Linux $(uname -r), $(go version | cut -d' ' -f3);" \
		"wrk -t$BENCH_THREADS -c$BENCH_CONNS -d$BENCH_DURATION, median of $BENCH_REPEAT;" \
		"resolvelat -c $BENCH_LAT_CONC -d $BENCH_LAT_DURATION over $BENCH_NAMES names, median of $BENCH_LAT_REPEAT rounds per variant."
	echo
	echo "| benchmark | ron | reference | ratio | target | met |"
	echo "| --- | ---: | ---: | ---: | ---: | :---: |"
	echo "| cached GET /resolve, $ANSWER_BYTES-byte answer (req/s) | $(fmt "$r") | constjson $(fmt "$n") | $q | ≥ 0.50 | $(pass "$q" 0.5 '>=') |"
	echo "| resolve via peers, one delayed $BENCH_DELAY: p50 / p99 (ms) | $(fmt "$d50" 2) / $(fmt "$d99" 2) | none delayed $(fmt "$f50" 2) / $(fmt "$f99" 2) | — | p99 ≤ 200 | $(pass "$d99" 200 '<=') |"
	echo
	echo "Details:"
	echo
	echo "- cached resolve req/s per run: ron$RON_RPS; constjson$REF_RPS; ron VmHWM after the runs $CACHED_HWM MiB; ${CACHE_STATS:-no cache metrics}"
	echo "- p50 ms per round: delayed${P50[delayed]}; none${P50[none]}"
	echo "- p99 ms per round: delayed${P99[delayed]}; none${P99[none]}"
	echo "- resolves/s per round (closed loop, $BENCH_LAT_CONC workers): delayed${RPSL[delayed]}; none${RPSL[none]}"
	echo "- errors: delayed ${ERRS[delayed]}, none ${ERRS[none]}"
	echo "- load average: at start $LOAD_START, at end $(cut -d' ' -f1-3 /proc/loadavg)"
	echo
	echo "resolvelat output:"
	echo
	echo '```'
	printf '%s' "$LINES"
	echo '```'
}

# ---------------------------------------------------------------- main
need_tools wrk=wrk curl=curl
LOAD_START=$(cut -d' ' -f1-3 /proc/loadavg)
busy=$(ps -eo pcpu=,comm= --sort=-pcpu | awk '$1 > 20 {printf "%s(%s%%) ", $2, $1}')
[[ -z $busy ]] || log "warning: busy processes before the run: $busy"
log "load average at start: $LOAD_START"
build
bench_cached
bench_hedged
report
log "done"
