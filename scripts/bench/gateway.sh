#!/usr/bin/env bash
# Gateway benchmarks of ron (docs/gateway.md §12), reported as ratios and
# percentiles measured in one run on one machine:
#
#   1. Forwarding cost: one amnesia ron with --roles storage,gateway
#      (anon_rps 1000000) holding a 64 KiB object; wrk -t2 -c64 against the
#      gateway's GET /o/{b3} and storage's own, alternating, WRK_REPEAT times;
#      medians and gateway/storage (goal ≥ 0.80). Then the same with storage
#      in a separate ron process (the gateway's storage_url), without a goal.
#   2. Fairness: a gateway-only ron (sched_inflight 16, tenants A and B with
#      rps 1000000 and equal weights) in front of stubupstream (20 ms per
#      answer). Capacity C = closed-loop 2xx/s of 64 concurrent requests.
#      Share: B at 0.6·C with A at 6·C → B's part of the 2xx (goal ≥ 45 %).
#      Latency: B alone at 0.25·C, then B at 0.25·C with A at 2.5·C → B's
#      p99 (goal ≤ 2 × alone).
#   3. Overload: A and B at 1.0·C each: only 2xx, 304, 429 + Retry-After and
#      503 + Retry-After, no connection errors; the 2xx p99 of the last
#      window vs the first after warm-up (goal ≤ 1.2×) and vs max_queue_wait
#      + 2 × the upstream latency.
# Load in 2 and 3 comes from openloop (fixed rate per class, latency from
# each request's scheduled send time, JSON summary per run).
#
# Usage: scripts/bench/gateway.sh                  (full run, about 6 minutes)
#        DURATION=5 scripts/bench/gateway.sh       (smoke run: every run 5 s)
#        PARTS="fairness overload" scripts/bench/gateway.sh
#
# Durations are whole seconds. DURATION, when set, is the default of
# WRK_DURATION, LOAD_DURATION and CAP_DURATION (and shortens WARMUP and
# WINDOW); each can be set on its own too. The Markdown report goes to
# stdout, progress to stderr. Everything it starts and creates is removed
# on exit. wrk, curl and jq are installed with apt-get when missing.
set -euo pipefail

WRK_DURATION=${WRK_DURATION:-${DURATION:-20}}   # wrk -d, seconds
WRK_REPEAT=${WRK_REPEAT:-3}                     # alternating wrk pairs
WRK_THREADS=${WRK_THREADS:-2}                   # wrk -t
WRK_CONNS=${WRK_CONNS:-64}                      # wrk -c
OBJECT_KIB=${OBJECT_KIB:-64}                    # object of part 1
LOAD_DURATION=${LOAD_DURATION:-${DURATION:-30}} # measured part of each openloop run, seconds
CAP_DURATION=${CAP_DURATION:-${DURATION:-10}}   # capacity run, seconds
CAP_CONC=${CAP_CONC:-64}                        # closed-loop concurrency of the capacity run
if [[ -n ${DURATION:-} ]]; then
	WARMUP=${WARMUP:-$((DURATION >= 10 ? 5 : 1))}
else
	WARMUP=${WARMUP:-5}
fi
STUB_DELAY_MS=${STUB_DELAY_MS:-20} # stubupstream -delay
STUB_SIZE=${STUB_SIZE:-1024}       # stubupstream -size
SCHED_INFLIGHT=${SCHED_INFLIGHT:-16}
MAX_QUEUE_WAIT_MS=2000 # gateway default, used in the overload bound
MAX_CONNS_PER_IP=${MAX_CONNS_PER_IP:-1024}
PARTS=${PARTS:-forward fairness overload}

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# shellcheck source=scripts/bench/lib.sh
source "$REPO/scripts/bench/lib.sh"
LOGS=()

[[ $LOAD_DURATION =~ ^[1-9][0-9]*$ ]] || die "LOAD_DURATION=$LOAD_DURATION: want a positive whole number"
WINDOW=${WINDOW:-$((LOAD_DURATION >= 30 ? 10 : (LOAD_DURATION >= 3 ? LOAD_DURATION / 3 : 1)))}
for v in WRK_DURATION WRK_REPEAT WRK_THREADS WRK_CONNS OBJECT_KIB CAP_DURATION CAP_CONC \
	WINDOW STUB_DELAY_MS STUB_SIZE SCHED_INFLIGHT MAX_CONNS_PER_IP; do
	[[ ${!v} =~ ^[1-9][0-9]*$ ]] || die "$v=${!v}: want a positive whole number"
done
[[ $WARMUP =~ ^[0-9]+$ ]] || die "WARMUP=$WARMUP: want a whole number of seconds"
for p in $PARTS; do [[ $p == forward || $p == fairness || $p == overload ]] || die "PARTS: unknown part $p"; done
want() { [[ " $PARTS " == *" $1 "* ]]; }

bench_workdir "$(mktemp -d /tmp/ron-bench-gateway.XXXXXX)"
BIN=$WORK/bin
RON=$BIN/ron # built below; start_ron (lib.sh) runs it

# ---------------------------------------------------------------- commands
# The report lists every load and server command as run, with tokens and
# the scratch directory replaced by names.
CMDS=()
declare -A SECRETS=()
quote_arg() {
	if [[ $1 =~ ^[A-Za-z0-9_./:=,@%+-]+$ ]]; then printf '%s' "$1"; else printf "'%s'" "${1//\'/\'\\\'\'}"; fi
}
# record [VAR=value…] CMD ARGS…: appends the command line to CMDS.
record() {
	local line="" a k
	for a in "$@"; do line+="${line:+ }$(quote_arg "$a")"; done
	for k in "${!SECRETS[@]}"; do line=${line//"${SECRETS[$k]}"/\$$k}; done
	line=${line//"$BIN/"/}
	CMDS+=("${line//"$WORK"/\$WORK}")
}

# ---------------------------------------------------------------- processes
# put_object BASE TOKEN FILE prints the id storage gives FILE.
put_object() {
	local out code
	out=$(curl -sS -XPOST --data-binary @"$3" -H "Authorization: Bearer $2" -H 'Content-Type: application/octet-stream' \
		-w '\n%{http_code}' "$1/o") || die "PUT to $1 failed"
	code=${out##*$'\n'}
	[[ $code == 20[01] ]] || die "PUT to $1: $code ${out%$'\n'*}"
	out=$(sed -n 's/.*"cid":"\(b3:[0-9a-f]*\)".*/\1/p' <<<"$out")
	[[ -n $out ]] || die "PUT to $1: no cid"
	echo "$out"
}

# same_bytes URL FILE [TOKEN] dies unless GET URL answers 200 with FILE's bytes.
same_bytes() {
	local auth=()
	[[ -z ${3:-} ]] || auth=(-H "Authorization: Bearer $3")
	cmp -s <(curl -fsS "${auth[@]}" "$1") "$2" || die "GET $1 does not answer the expected bytes"
}

# ---------------------------------------------------------------- statistics
# wrk_rps URL prints requests/s; dies on socket errors or non-2xx answers.
wrk_rps() {
	local out cmd=(wrk -t"$WRK_THREADS" -c"$WRK_CONNS" -d"${WRK_DURATION}s" "$1")
	out=$("${cmd[@]}" 2>&1) || die "wrk $1: $out"
	if grep -qE 'Non-2xx|Socket errors' <<<"$out"; then
		grep -E 'Non-2xx|Socket errors' <<<"$out" >&2
		[[ ${BENCH_ALLOW_ERRORS:-0} == 1 ]] || die "wrk errors for $1 (set BENCH_ALLOW_ERRORS=1 to go on)"
	fi
	awk '/^Requests\/sec:/ {print $2}' <<<"$out"
}

# wrk_pairs LABEL GATEWAY_URL STORAGE_URL: WRK_REPEAT alternating runs;
# appends to GW_RPS[LABEL] and ST_RPS[LABEL].
declare -A GW_RPS=() ST_RPS=()
wrk_pairs() {
	local label=$1 i srv res
	record wrk -t"$WRK_THREADS" -c"$WRK_CONNS" -d"${WRK_DURATION}s" "$2"
	record wrk -t"$WRK_THREADS" -c"$WRK_CONNS" -d"${WRK_DURATION}s" "$3"
	for ((i = 1; i <= WRK_REPEAT; i++)); do
		for srv in $( ((i % 2)) && echo "gw st" || echo "st gw"); do
			if [[ $srv == gw ]]; then
				res=$(wrk_rps "$2")
				GW_RPS[$label]+=" $res"
			else
				res=$(wrk_rps "$3")
				ST_RPS[$label]+=" $res"
			fi
			log "  run $i $label $srv: $res req/s"
		done
	done
}

# openloop NAME ARGS…: runs openloop with ARGS, its summary in $WORK/NAME.json.
openloop() {
	local name=$1
	shift
	record "$BIN/openloop" "$@" -o "$WORK/$name.json"
	"$BIN/openloop" "$@" -o "$WORK/$name.json" 2>"$WORK/$name.brief" ||
		{ cat "$WORK/$name.brief" >&2; die "openloop $name failed"; }
	sed 's/^/  /' "$WORK/$name.brief" >&2
}
# jqf NAME FILTER applies a jq filter to run NAME's summary.
jqf() { jq -r "$2" "$WORK/$1.json"; }
# cls NAME CLASS FIELD-PATH prints one figure of a class, e.g. cls share B .share_ok.
cls() { jqf "$1" ".classes[] | select(.name == \"$2\") | $3"; }
# mul X F prints X·F with two decimals.
mul() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a*b }'; }
# brief NAME prints one Markdown list line per class of run NAME.
brief() {
	jqf "$1" '.classes[] | "  - \(.name): " + (if .rate then "rate \(.rate)/s" else "\(.concurrency) workers" end) +
		", sent \(.sent), dropped \(.dropped), 2xx \(.ok) (\(.ok_per_s)/s, share \(.share_ok * 1000 | round / 10)%)" +
		", status \(.status | to_entries | map("\(.key)×\(.value)") | join(" "))" +
		", 429 with/without Retry-After \(.retry_after["429_with"])/\(.retry_after["429_without"])" +
		", 503 with/without \(.retry_after["503_with"])/\(.retry_after["503_without"])" +
		", conn errors \(.conn_errors), timeouts \(.timeouts)" +
		", 2xx latency ms p50 \(.latency_ms.p50) p90 \(.latency_ms.p90) p99 \(.latency_ms.p99) max \(.latency_ms.max)" +
		", generator lag max \(.max_send_lag_ms) ms"'
}
# windows NAME prints the all-class 2xx p99 per window of run NAME.
windows() { jqf "$1" '[.all.windows[] | "\(.start_s)–\(.end_s) s: \(.latency_ms.p99)"] | join("; ")'; }

# ---------------------------------------------------------------- build
build() {
	log "building ron, openloop, stubupstream"
	mkdir -p "$BIN"
	(cd "$REPO" && go build -o "$BIN/ron" . &&
		go build -o "$BIN/" ./scripts/bench/cmd/openloop ./scripts/bench/cmd/stubupstream) || die "go build failed"
	RON_VERSION=$(cd "$REPO" && git rev-parse --short HEAD 2>/dev/null || echo unknown)
	[[ -z $(cd "$REPO" && git status --porcelain 2>/dev/null | grep -v '^??' | head -1) ]] || RON_VERSION+="+dirty"
}

# ---------------------------------------------------------------- 1. forwarding cost
bench_forward() {
	local admin store gw admin2 tok obj=$WORK/object
	head -c $((OBJECT_KIB * 1024)) /dev/urandom >"$obj"
	log "1/3 forwarding cost, co-located: wrk -t$WRK_THREADS -c$WRK_CONNS -d${WRK_DURATION}s ×$WRK_REPEAT per side"
	free_port admin
	free_port store
	free_port gw
	start_ron colo "$admin" -- --amnesia --roles storage,gateway --storage.listen "127.0.0.1:$store" \
		--gateway.listen "127.0.0.1:$gw" --gateway.anon-rps 1000000
	tok=$(token "$admin" storage:write)
	OBJ_ID=$(put_object "http://127.0.0.1:$store" "$tok" "$obj")
	same_bytes "http://127.0.0.1:$gw/o/$OBJ_ID" "$obj"
	wrk_pairs colo "http://127.0.0.1:$gw/o/$OBJ_ID" "http://127.0.0.1:$store/o/$OBJ_ID"
	stop_pid "$RON_PID"

	log "1/3 forwarding cost, storage in a separate process"
	free_port admin
	free_port admin2
	free_port store
	free_port gw
	start_ron store "$admin" -- --amnesia --roles storage --storage.listen "127.0.0.1:$store"
	local store_pid=$RON_PID
	tok=$(token "$admin" storage:write)
	OBJ_ID=$(put_object "http://127.0.0.1:$store" "$tok" "$obj")
	# The two amnesia processes have different root keys: the gateway sends
	# a token of storage's own instead of minting one.
	SECRETS[UPSTREAM_TOKEN]=$(token "$admin" storage:read)
	start_ron gw "$admin2" "RON_GATEWAY__UPSTREAM_TOKEN=${SECRETS[UPSTREAM_TOKEN]}" -- --amnesia --roles gateway \
		--gateway.listen "127.0.0.1:$gw" --gateway.storage-url "http://127.0.0.1:$store" --gateway.anon-rps 1000000
	same_bytes "http://127.0.0.1:$gw/o/$OBJ_ID" "$obj"
	wrk_pairs split "http://127.0.0.1:$gw/o/$OBJ_ID" "http://127.0.0.1:$store/o/$OBJ_ID"
	stop_pid "$RON_PID"
	stop_pid "$store_pid"
}

# ---------------------------------------------------------------- 2. fairness
# start_fair_gateway: stubupstream and a gateway-only ron in front of it;
# sets FAIR_ADMIN, OBJ_URL, TOKEN_A, TOKEN_B in SECRETS.
start_fair_gateway() {
	local stub gw
	free_port stub
	free_port gw
	free_port FAIR_ADMIN
	LOGS+=("$WORK/stub.log")
	record "$BIN/stubupstream" -listen "127.0.0.1:$stub" -delay "${STUB_DELAY_MS}ms" -size "$STUB_SIZE"
	"$BIN/stubupstream" -listen "127.0.0.1:$stub" -delay "${STUB_DELAY_MS}ms" -size "$STUB_SIZE" >"$WORK/stub.log" 2>&1 &
	PIDS+=("$!")
	wait_http "http://127.0.0.1:$stub/healthz" || die "stubupstream did not start"
	cat >"$WORK/fair.toml" <<-TOML
		[gateway]
		listen = "127.0.0.1:$gw"
		storage_url = "http://127.0.0.1:$stub"
		sched_inflight = $SCHED_INFLIGHT
		max_conns_per_ip = $MAX_CONNS_PER_IP

		[[gateway.tenants]]
		id = "A"
		rps = 1000000.0
		burst = 1000000
		weight = 1

		[[gateway.tenants]]
		id = "B"
		rps = 1000000.0
		burst = 1000000
		weight = 1
	TOML
	start_ron fair "$FAIR_ADMIN" -- --amnesia --roles gateway --config "$WORK/fair.toml"
	SECRETS[TOKEN_A]=$(token "$FAIR_ADMIN" storage:read A)
	SECRETS[TOKEN_B]=$(token "$FAIR_ADMIN" storage:read B)
	# Any well-formed id: the stub answers every one.
	OBJ_URL="http://127.0.0.1:$gw/o/b3:$(printf 'ron-bench-gateway' | sha256sum | cut -c1-64)"
	local got
	got=$(curl -fsS -H "Authorization: Bearer ${SECRETS[TOKEN_A]}" "$OBJ_URL" | wc -c) ||
		die "GET $OBJ_URL through the gateway failed"
	((got == STUB_SIZE)) || die "GET $OBJ_URL: $got bytes, want $STUB_SIZE"
}

# class NAME RATE prints the -class argument of tenant NAME at RATE req/s
# (no rate in closed loop).
class() {
	local tok=${SECRETS[TOKEN_$1]}
	echo "name=$1,url=$OBJ_URL,token=$tok${2:+,rate=$2}"
}
# timing flags of an openloop run of D seconds
load_flags() { echo "-d ${1}s -warmup ${WARMUP}s -window ${WINDOW}s"; }

# measure_capacity sets CAP, the closed-loop 2xx/s of tenant A.
measure_capacity() {
	log "2/3 capacity C: closed loop, $CAP_CONC concurrent, ${CAP_DURATION}s"
	# shellcheck disable=SC2046
	openloop capacity -closed "$CAP_CONC" $(load_flags "$CAP_DURATION") -class "$(class A)"
	CAP=$(jqf capacity '.all.ok_per_s')
	awk -v c="$CAP" 'BEGIN { exit !(c > 0) }' || die "capacity is $CAP: nothing got through the gateway"
	log "  C = $CAP req/s"
}

bench_fairness() {
	log "2/3 fairness share: B at 0.6·C, A at 6·C for ${LOAD_DURATION}s"
	# shellcheck disable=SC2046
	openloop share $(load_flags "$LOAD_DURATION") -class "$(class A "$(mul "$CAP" 6)")" \
		-class "$(class B "$(mul "$CAP" 0.6)")"
	log "2/3 fairness latency: B alone at 0.25·C, then with A at 2.5·C"
	# shellcheck disable=SC2046
	openloop alone $(load_flags "$LOAD_DURATION") -class "$(class B "$(mul "$CAP" 0.25)")"
	# shellcheck disable=SC2046
	openloop mixed $(load_flags "$LOAD_DURATION") -class "$(class A "$(mul "$CAP" 2.5)")" \
		-class "$(class B "$(mul "$CAP" 0.25)")"
}

# ---------------------------------------------------------------- 3. overload
bench_overload() {
	log "3/3 overload: A and B at 1.0·C each for ${LOAD_DURATION}s after ${WARMUP}s warm-up"
	# shellcheck disable=SC2046
	openloop overload $(load_flags "$LOAD_DURATION") -class "$(class A "$(mul "$CAP" 1)")" \
		-class "$(class B "$(mul "$CAP" 1)")"
	# The gateway's own view of the refusals.
	REJECTS=$(curl -fsS "http://127.0.0.1:$FAIR_ADMIN/metrics" | awk '
		/^ron_gateway_rejected_total\{/ && $2 > 0 { match($0, /tenant="[^"]*"/); t = substr($0, RSTART + 8, RLENGTH - 9)
			match($0, /reason="[^"]*"/); out = out sep t " " substr($0, RSTART + 8, RLENGTH - 9) "=" $2; sep = "; " }
		/^ron_queue_dropped_total\{.*queue="sched"/ && $2 > 0 { out = out sep "sched drops " $2; sep = "; " }
		END { print out }')
}

# ---------------------------------------------------------------- report
report_forward() {
	local label g s q
	for label in colo split; do
		# shellcheck disable=SC2086
		g=$(median ${GW_RPS[$label]}) s=$(median ${ST_RPS[$label]})
		q=$(ratio "$g" "$s")
		if [[ $label == colo ]]; then
			echo "| forwarding, co-located: GET /o ${OBJECT_KIB} KiB via the gateway (req/s) | $(fmt "$g") | storage $(fmt "$s") | $q | ≥ 0.80 | $(pass "$q" 0.8 '>=') |"
		else
			echo "| forwarding, storage in another process (req/s) | $(fmt "$g") | storage $(fmt "$s") | $q | — | — |"
		fi
	done
}

report_fairness() {
	local share alone mixed q
	share=$(awk -v s="$(cls share B .share_ok)" 'BEGIN { printf "%.1f", s*100 }')
	alone=$(fmt "$(cls alone B .latency_ms.p99)" 2) mixed=$(fmt "$(cls mixed B .latency_ms.p99)" 2)
	q=$(ratio "$mixed" "$alone")
	echo "| fairness share: B at 0.6·C with A at 6·C, B's part of the 2xx (%) | $share | — | — | ≥ 45 | $(pass "$share" 45 '>=') |"
	echo "| fairness latency: B's 2xx p99 at 0.25·C with A at 2.5·C (ms) | $mixed | B alone $alone | $q | ≤ 2.00 | $(pass "$q" 2 '<=') |"
}

report_overload() {
	local bad first last q worst bound
	# shellcheck disable=SC2016 # $c is a jq variable
	bad=$(jqf overload '([.all.status | to_entries[] | (.key | tonumber) as $c
		| select(($c < 200 or $c > 299) and $c != 304 and $c != 429 and $c != 503) | .value] | add // 0)
		+ .all.retry_after["429_without"] + .all.retry_after["503_without"]')
	CONN_ERR=$(jqf overload '.all.conn_errors + .all.timeouts')
	first=$(fmt "$(jqf overload '.all.windows[0].latency_ms.p99')" 2)
	last=$(fmt "$(jqf overload '.all.windows[-1].latency_ms.p99')" 2)
	q=$(ratio "$last" "$first")
	worst=$(awk -v a="$first" -v b="$last" 'BEGIN { print (a > b) ? a : b }')
	bound=$((MAX_QUEUE_WAIT_MS + 2 * STUB_DELAY_MS))
	echo "| overload, A and B at 1.0·C: answers other than 2xx/304/429+RA/503+RA; connection errors and timeouts | $bad; $CONN_ERR | — | — | 0; 0 | $(pass "$((bad + CONN_ERR))" 0 '<=') |"
	echo "| overload: 2xx p99, last window vs first after warm-up (ms) | $last | first $first | $q | ≤ 1.20 | $(pass "$q" 1.2 '<=') |"
	echo "| overload: 2xx p99, worse of the two windows (ms) | $worst | max_queue_wait + 2 × ${STUB_DELAY_MS} ms = $bound | $(ratio "$worst" "$bound") | ≤ 1.00 | $(pass "$worst" "$bound" '<=') |"
}

report_details() {
	echo "Details:"
	echo
	if want forward; then
		echo "- forwarding req/s per run: co-located gateway${GW_RPS[colo]}, storage${ST_RPS[colo]};" \
			"separate gateway${GW_RPS[split]}, storage${ST_RPS[split]}"
	fi
	local run
	for run in capacity share alone mixed overload; do
		[[ -f $WORK/$run.json ]] || continue
		echo "- $run run ($(jqf "$run" '"\(.mode) loop, \(.duration_s) s after \(.warmup_s) s warm-up"')):"
		brief "$run"
	done
	if [[ -f $WORK/overload.json ]]; then
		echo "- overload status histogram (all classes): $(jqf overload '.all.status | to_entries | map("\(.key)×\(.value)") | join(", ")');" \
			"Retry-After on 429: $(jqf overload '.all.retry_after["429_with"]') with, $(jqf overload '.all.retry_after["429_without"]') without;" \
			"on 503: $(jqf overload '.all.retry_after["503_with"]') with, $(jqf overload '.all.retry_after["503_without"]') without"
		echo "- overload 2xx p99 per window (ms): $(windows overload)"
		echo "- gateway refusals after the overload run (ron_gateway_rejected_total by tenant and reason, cumulative over parts 2–3): ${REJECTS:-none}"
	fi
	echo "- load average: at start $LOAD_START, at end $(cut -d' ' -f1-3 /proc/loadavg)"
	echo
	echo "Commands (ports as run; \$TOKEN_A/\$TOKEN_B are tenant tokens from POST /api/v1/tokens, \$UPSTREAM_TOKEN a storage:read token of the storage process):"
	echo
	echo '```sh'
	printf '%s\n' "${CMDS[@]}"
	echo '```'
	if [[ -f $WORK/fair.toml ]]; then
		echo
		echo "\$WORK/fair.toml (the gateway of parts 2–3):"
		echo
		echo '```toml'
		cat "$WORK/fair.toml"
		echo '```'
	fi
}

report() {
	echo "## ron gateway benchmarks"
	echo
	local setup
	setup="$(date -u +%Y-%m-%dT%H:%MZ), ron $RON_VERSION, $(nproc) cores, Linux $(uname -r), $(go version | cut -d' ' -f3); parts: $PARTS"
	if want forward; then
		setup+="; wrk -t$WRK_THREADS -c$WRK_CONNS -d${WRK_DURATION}s, median of $WRK_REPEAT alternating runs per side, ${OBJECT_KIB} KiB object"
	fi
	if want fairness || want overload; then
		setup+="; openloop runs of ${LOAD_DURATION} s after ${WARMUP} s warm-up, ${WINDOW} s windows; capacity run ${CAP_DURATION} s"
		setup+="; stubupstream ${STUB_DELAY_MS} ms, ${STUB_SIZE} B; sched_inflight $SCHED_INFLIGHT, max_conns_per_ip $MAX_CONNS_PER_IP, other gateway keys default"
	fi
	echo "$setup."
	echo
	echo "| benchmark | result | reference | ratio | goal | met |"
	echo "| --- | ---: | ---: | ---: | ---: | :---: |"
	if want forward; then report_forward; fi
	if want fairness || want overload; then
		echo "| capacity C: closed loop, $CAP_CONC concurrent, tenant A (2xx/s) | $(fmt "$CAP" 1) | — | — | — | — |"
	fi
	if want fairness; then report_fairness; fi
	if want overload; then report_overload; fi
	echo
	report_details
}

# ---------------------------------------------------------------- main
need_tools wrk=wrk curl=curl jq=jq
LOAD_START=$(cut -d' ' -f1-3 /proc/loadavg)
busy=$(ps -eo pcpu=,comm= --sort=-pcpu | awk '$1 > 20 {printf "%s(%s%%) ", $2, $1}')
[[ -z $busy ]] || log "warning: busy processes before the run: $busy"
log "load average at start: $LOAD_START"
build
if want forward; then bench_forward; fi
if want fairness || want overload; then
	start_fair_gateway
	measure_capacity
	if want fairness; then bench_fairness; fi
	if want overload; then bench_overload; fi
fi
report
log "done"
