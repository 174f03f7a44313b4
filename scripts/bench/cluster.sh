#!/usr/bin/env bash
# Cluster benchmarks of ron (docs/cluster.md §13 benchmark goals), reported,
# never asserted:
#
#   1. Membership convergence: BENCH_REPEAT times, 5 nodes launched at once
#      (profile local); time from just before the launch until every node's
#      /api/v1/status lists all 5 alive. Median and spread.
#   2. Repair throughput against the pace, for each pace of BENCH_PACES: 3
#      nodes with that repair_pace, filled at RF 2 with 4 MiB objects, about
#      3 × pace × BENCH_REPAIR_S bytes (so each pusher works ~BENCH_REPAIR_S
#      seconds); n3 is killed and restarted on an emptied data dir (a
#      replaced disk, same node id), so n1 and n2 push its share back. Each
#      pusher's ron_repair_bytes_total{phase="executed"} is sampled every
#      second: median per-second rate / pace (goal ≥ 0.9) and its p10–p90
#      spread (the partial first and last seconds left out).
#   3. Writes at RF 2 (cluster on, 3 nodes, round-robin over their storage
#      listeners, every reply copies 2) versus cluster off (one node, RF 1)
#      in the same run: closed loop, BENCH_CONC writers, BENCH_WRITE_MIB per
#      run of each size, BENCH_REPEAT interleaved runs; medians and ratios.
#
# Usage: scripts/bench/cluster.sh                    (full run, ~3 minutes on 2 cores)
#        BENCH_REPEAT=1 BENCH_PACES=10MiB BENCH_REPAIR_S=4 BENCH_WRITE_MIB=32 scripts/bench/cluster.sh   (smoke run)
#
# Every node listens on 127.0.0.1 (ports below the ephemeral range); data
# dirs live under one scratch dir removed at exit with every process. The
# markdown report goes to stdout, progress to stderr.
set -euo pipefail

BENCH_REPEAT=${BENCH_REPEAT:-5}           # convergence runs; write runs per size
BENCH_PACES=${BENCH_PACES:-"20MiB 50MiB"} # repair_pace of each throughput run
BENCH_REPAIR_S=${BENCH_REPAIR_S:-12}      # seconds each pusher should work
BENCH_WRITE_MIB=${BENCH_WRITE_MIB:-128}   # bytes per write run (MiB)
BENCH_WRITE_SIZES=${BENCH_WRITE_SIZES:-"64KiB 1MiB"}
BENCH_CONC=${BENCH_CONC:-8} # concurrent writers

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# shellcheck source=scripts/bench/lib.sh
source "$REPO/scripts/bench/lib.sh"
LOGS=()
need_tools curl=curl jq=jq

bench_workdir "$(mktemp -d /tmp/ron-bench-cluster.XXXXXX)"
BIN=$WORK/bin
log "building ron and clusterbench"
mkdir -p "$BIN"
(cd "$REPO" && go build -o "$BIN/ron" . && go build -o "$BIN/" ./scripts/bench/cmd/clusterbench) || die "go build failed"
RON_VERSION=$(cd "$REPO" && git rev-parse --short HEAD 2>/dev/null || echo unknown)
[[ -z $(cd "$REPO" && git status --porcelain 2>/dev/null | grep -v '^??' | head -1) ]] || RON_VERSION+="+dirty"
LOAD_START=$(cut -d' ' -f1-3 /proc/loadavg)
log "load average at start: $LOAD_START"

head -c 32 /dev/urandom >"$WORK/root.key" # shared by every node (raw 32 bytes)

# ---------------------------------------------------------------- nodes
# Per node NAME: ADMIN, STORE, INDEXP, GOSSIP (ports) and PID, by NAME.
declare -A ADMIN STORE INDEXP GOSSIP PID
# plan_node NAME: reserves the node's ports.
plan_node() {
	local p
	free_port p && ADMIN[$1]=$p
	free_port p && STORE[$1]=$p
	free_port p && GOSSIP[$1]=$p
	free_port p && INDEXP[$1]=$p
}
# write_config NAME CLUSTER(on|off) JOIN(comma-separated names) PACE
write_config() {
	local name=$1 mode=$2 join=$3 pace=$4 j list=""
	mkdir -p "$WORK/$name/data/keys"
	cp "$WORK/root.key" "$WORK/$name/data/keys/root.key"
	chmod 600 "$WORK/$name/data/keys/root.key"
	for j in ${join//,/ }; do list+="${list:+, }\"127.0.0.1:${GOSSIP[$j]}\""; done
	cat >"$WORK/$name/ron.toml" <<EOF
roles = ["storage", "index"]
data_dir = "$WORK/$name/data"

[log]
level = "warn"

[admin]
listen = "127.0.0.1:${ADMIN[$name]}"

[storage]
listen = "127.0.0.1:${STORE[$name]}"

[index]
listen = "127.0.0.1:${INDEXP[$name]}"

[cluster]
enabled = $([[ $mode == on ]] && echo true || echo false)
node_id = "$name"
profile = "local"
listen = "127.0.0.1:${GOSSIP[$name]}"
join = [$list]
repair_after = "10s"
repair_interval = "1s"
repair_pace = "$pace"
EOF
}
# launch NAME: starts the node in the background (not waiting).
launch() {
	"$BIN/ron" serve --config "$WORK/$1/ron.toml" >>"$WORK/$1/ron.log" 2>&1 &
	PID[$1]=$!
	PIDS+=("$!")
	LOGS+=("$WORK/$1/ron.log")
}
# ready NAME waits for the node's /readyz.
ready() {
	wait_http "http://127.0.0.1:${ADMIN[$1]}/readyz" || die "$1 did not become ready"
}
# kill9 NAME kills the node with SIGKILL.
kill9() {
	kill -9 "${PID[$1]}" 2>/dev/null || true
	wait "${PID[$1]}" 2>/dev/null || true
	local keep=() p
	for p in "${PIDS[@]}"; do [[ $p == "${PID[$1]}" ]] || keep+=("$p"); done
	PIDS=("${keep[@]}")
}
# stop_nodes NAME…: stops nodes (SIGTERM) and removes their dirs.
stop_nodes() {
	local n
	for n in "$@"; do stop_pid "${PID[$n]}"; done
	for n in "$@"; do rm -rf "${WORK:?}/$n"; done
}
# token NAME: a token for writes and inventory, minted by NAME's admin API.
token() {
	curl -fsS -XPOST "http://127.0.0.1:${ADMIN[$1]}/api/v1/tokens" \
		-d '{"scopes":["storage:write","storage:read_inventory"],"ttl":"1h"}' | jq -r .token
}
# start_cluster MODE PACE NAME…: plans, configures and starts the nodes (the
# first joins the others, the others the first) and waits until ready.
start_cluster() {
	local mode=$1 pace=$2 n first=$3 others
	shift 2
	for n in "$@"; do plan_node "$n"; done
	others=$(IFS=,; echo "${*:2}")
	for n in "$@"; do
		if [[ $n == "$first" ]]; then write_config "$n" "$mode" "$others" "$pace"; else write_config "$n" "$mode" "$first" "$pace"; fi
	done
	for n in "$@"; do launch "$n"; done
	for n in "$@"; do ready "$n"; done
}
# repair_field NAME FIELD: a field of NAME's storage details.repair (docs/cluster.md §9).
repair_field() {
	curl -fsS "http://127.0.0.1:${ADMIN[$1]}/api/v1/status" | jq -r ".roles[] | select(.name == \"storage\") | .details.repair.$2"
}
# settle NAME…: waits (up to 5 minutes) until every node finished two
# passes after the call with nothing under-replicated: writes whose
# coordinator was not a target are placed, so their pushes do not mix with
# what is measured next.
settle() {
	local -A from
	local n ok deadline=$((SECONDS + 300))
	for n in "$@"; do from[$n]=$(repair_field "$n" pass); done
	while ((SECONDS < deadline)); do
		ok=1
		for n in "$@"; do
			(($(repair_field "$n" pass) >= from[$n] + 2)) && (($(repair_field "$n" under_replicated) == 0)) || ok=
		done
		[[ -n $ok ]] && return 0
		sleep 0.5
	done
	die "repair did not settle within 5 minutes"
}
metrics_urls() {
	local out="" n
	for n in "$@"; do out+="${out:+,}http://127.0.0.1:${ADMIN[$n]}/metrics"; done
	echo "$out"
}
store_urls() {
	local out="" n
	for n in "$@"; do out+="${out:+,}http://127.0.0.1:${STORE[$n]}"; done
	echo "$out"
}
# round1 X…: the numbers with one decimal.
round1() { printf '%s\n' "$@" | awk '{printf "%s%.1f", (NR>1 ? " " : ""), $1}'; }
# pace_bytes SIZE: bytes of a KiB/MiB/GiB size.
pace_bytes() { numfmt --from=iec "$(sed 's/iB$//; s/B$//' <<<"$1")"; }

# ---------------------------------------------------------------- 1. convergence
log "1/3 membership convergence, 5 nodes ×$BENCH_REPEAT"
CONV=()
for ((i = 1; i <= BENCH_REPEAT; i++)); do
	names=("a$i" "b$i" "c$i" "d$i" "e$i")
	for n in "${names[@]}"; do plan_node "$n"; done
	others=$(IFS=,; echo "${names[*]:1}")
	for n in "${names[@]}"; do
		if [[ $n == "${names[0]}" ]]; then write_config "$n" on "$others" 50MiB; else write_config "$n" on "${names[0]}" 50MiB; fi
	done
	admins=$(for n in "${names[@]}"; do printf '127.0.0.1:%s,' "${ADMIN[$n]}"; done)
	since=$EPOCHREALTIME
	for n in "${names[@]}"; do launch "$n"; done
	out=$("$BIN/clusterbench" converge -admin "${admins%,}" -since "$since" -timeout 60s) || die "run $i did not converge"
	ms=$(jq -r .ms <<<"$out")
	CONV+=("$ms")
	log "  run $i: all 5 alive everywhere after $ms ms"
	stop_nodes "${names[@]}"
done

# ---------------------------------------------------------------- 2. repair throughput
# repair_run PACE K: fill, empty n3, sample the refill into $WORK/rate.K.json.
repair_run() {
	local pace=$1 k=$2 objs held
	objs=$((3 * $(pace_bytes "$pace") * BENCH_REPAIR_S / (4 << 20)))
	log "  pace $pace: $objs × 4 MiB at RF 2 on 3 nodes; n3 refilled from empty"
	start_cluster on "$pace" "r${k}a" "r${k}b" "r${k}c"
	TOK=$(token "r${k}a")
	"$BIN/clusterbench" writes -url "$(store_urls "r${k}a" "r${k}b" "r${k}c")" -token "$TOK" -size 4MiB -n "$objs" -c 4 -copies 2 \
		-seed "$((k * 1000))" >"$WORK/fill.$k.json" || die "fill failed"
	log "  filled: $(jq -c '{objects_per_s, mib_per_s}' "$WORK/fill.$k.json"); waiting until the fill's own repair is done"
	settle "r${k}a" "r${k}b" "r${k}c"
	held=$(du -sb --exclude='*.meta' "$WORK/r${k}c/data/storage/objects" | cut -f1)
	echo "$objs $held" >"$WORK/held.$k"
	kill9 "r${k}c"
	rm -rf "$WORK/r${k}c/data"
	write_config "r${k}c" on "r${k}a" "$pace"
	launch "r${k}c"
	ready "r${k}c"
	"$BIN/clusterbench" rate -metrics "$(metrics_urls "r${k}a" "r${k}b")" -every 1s -idle 5s -timeout 10m >"$WORK/rate.$k.json" ||
		die "no refill seen"
	log "  refill: $(jq -c '[.nodes[] | {bytes, active_s, median_bps, p10_bps, p90_bps}]' "$WORK/rate.$k.json")"
	stop_nodes "r${k}a" "r${k}b" "r${k}c"
}
log "2/3 repair throughput at pace $BENCH_PACES"
k=0
for pace in $BENCH_PACES; do
	k=$((k + 1))
	repair_run "$pace" "$k"
done

# ---------------------------------------------------------------- 3. writes RF 2 vs RF 1
log "3/3 writes: cluster on (3 nodes, RF 2) vs cluster off (1 node, RF 1), $BENCH_CONC writers, $BENCH_WRITE_MIB MiB per run ×$BENCH_REPEAT"
start_cluster on 50MiB w1 w2 w3
start_cluster off 50MiB s1
TOK_ON=$(token w1)
TOK_OFF=$(token s1)
declare -A WR
seed=100
for size in $BENCH_WRITE_SIZES; do
	sz=$(pace_bytes "$size")
	n=$(((BENCH_WRITE_MIB << 20) / sz))
	((n > 2000)) && n=2000
	((n < BENCH_CONC)) && n=$BENCH_CONC
	for ((i = 1; i <= BENCH_REPEAT; i++)); do
		order=(on off)
		((i % 2 == 0)) && order=(off on)
		for mode in "${order[@]}"; do
			seed=$((seed + 1))
			if [[ $mode == on ]]; then
				out=$("$BIN/clusterbench" writes -url "$(store_urls w1 w2 w3)" -token "$TOK_ON" -size "$size" -n "$n" -c "$BENCH_CONC" -copies 2 -seed "$seed") ||
					die "cluster-on writes failed"
			else
				out=$("$BIN/clusterbench" writes -url "$(store_urls s1)" -token "$TOK_OFF" -size "$size" -n "$n" -c "$BENCH_CONC" -seed "$seed") ||
					die "cluster-off writes failed"
			fi
			WR[$mode.$size.mibs]+=" $(jq -r .mib_per_s <<<"$out")"
			WR[$mode.$size.p50]+=" $(jq -r .p50_ms <<<"$out")"
			WR[$mode.$size.p99]+=" $(jq -r .p99_ms <<<"$out")"
			log "  $size run $i cluster $mode: $(jq -c '{objects_per_s, mib_per_s, p50_ms, p99_ms}' <<<"$out")"
		done
	done
done
stop_nodes w1 w2 w3 s1

# ---------------------------------------------------------------- report
echo "## ron cluster benchmarks"
echo
echo "$(date -u +%Y-%m-%dT%H:%MZ), ron $RON_VERSION, $(nproc) cores, Linux $(uname -r); every node on 127.0.0.1," \
	"profile local, repair_after 10s, repair_interval 1s; load average at start $LOAD_START, at end $(cut -d' ' -f1-3 /proc/loadavg)."
echo
echo "| benchmark | figure | goal |"
echo "| --- | ---: | ---: |"
echo "| membership convergence, 5 nodes launched at once (ms, median of ${#CONV[@]}) | $(fmt "$(median "${CONV[@]}")" 0) (runs: ${CONV[*]}) | — |"
k=0
for pace in $BENCH_PACES; do
	k=$((k + 1))
	pb=$(pace_bytes "$pace")
	for i in 0 1; do
		med=$(jq -r ".nodes[$i].median_bps" "$WORK/rate.$k.json")
		p10=$(jq -r ".nodes[$i].p10_bps" "$WORK/rate.$k.json")
		p90=$(jq -r ".nodes[$i].p90_bps" "$WORK/rate.$k.json")
		mib=$(jq -r ".nodes[$i].bytes / 1048576 | floor" "$WORK/rate.$k.json")
		secs=$(jq -r ".nodes[$i].active_s" "$WORK/rate.$k.json")
		echo "| repair throughput / pace $pace/s, pusher $((i + 1)) ($mib MiB in $(fmt "$secs" 1) s) | median $(ratio "$med" "$pb") (p10 $(ratio "$p10" "$pb"), p90 $(ratio "$p90" "$pb")) | ≥ 0.9 |"
	done
done
for size in $BENCH_WRITE_SIZES; do
	# shellcheck disable=SC2086
	on=$(median ${WR[on.$size.mibs]})
	# shellcheck disable=SC2086
	off=$(median ${WR[off.$size.mibs]})
	# shellcheck disable=SC2086
	on50=$(median ${WR[on.$size.p50]}) off50=$(median ${WR[off.$size.p50]}) on99=$(median ${WR[on.$size.p99]}) off99=$(median ${WR[off.$size.p99]})
	echo "| writes $size, RF 2 / RF 1 throughput (MiB/s) | $(fmt "$on" 1) / $(fmt "$off" 1) = $(ratio "$on" "$off") | — |"
	echo "| writes $size, RF 2 / RF 1 latency p50; p99 (ms) | $(fmt "$on50" 1) / $(fmt "$off50" 1) = $(ratio "$on50" "$off50"); $(fmt "$on99" 1) / $(fmt "$off99" 1) = $(ratio "$on99" "$off99") | — |"
done
echo
echo "Details:"
echo
k=0
for pace in $BENCH_PACES; do
	k=$((k + 1))
	read -r objs held <"$WORK/held.$k"
	echo "- repair at $pace/s: $objs × 4 MiB written, n3 held $((held >> 20)) MiB before it was emptied;" \
		"fill $(jq -r '"\(.mib_per_s | . * 10 | round / 10) MiB/s, p50 \(.p50_ms) ms"' "$WORK/fill.$k.json");" \
		"per-second rates (MiB/s) pusher 1: $(jq -r '[.nodes[0].rates_bps[] / 1048576 | . * 10 | round / 10] | join(" ")' "$WORK/rate.$k.json");" \
		"pusher 2: $(jq -r '[.nodes[1].rates_bps[] / 1048576 | . * 10 | round / 10] | join(" ")' "$WORK/rate.$k.json")"
done
for size in $BENCH_WRITE_SIZES; do
	# shellcheck disable=SC2086
	echo "- writes $size MiB/s per run: RF 2 $(round1 ${WR[on.$size.mibs]}); RF 1 $(round1 ${WR[off.$size.mibs]})"
done
log "done"
