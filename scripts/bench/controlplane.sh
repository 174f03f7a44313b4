#!/usr/bin/env bash
# Control-plane benchmarks of ron (docs/cluster.md §14, issue 18), reported,
# never asserted:
#
#   1. Leader failover, for each Raft profile of BENCH_PROFILES: three
#      servers (roles = ["index"], cluster.server, bootstrap_expect = 3);
#      BENCH_RUNS runs of: wait until all three name one leader (every
#      server a voter that gossip shows alive, every node caught up); one
#      writer sends unconditional PUT /names/{name} through a node that is
#      not the leader (closed loop, client timeout BENCH_FAILOVER_TIMEOUT);
#      `cpbench failover` sends SIGKILL to the leader and measures from the
#      kill to the first 200 of a write sent after it, polling the
#      survivors' status every 10 ms to split the time (leader lost,
#      elected, writer's node knows); the killed node is restarted from its
#      disk and the next run waits until it has caught up. Median and p99
#      (nearest rank: with ≤ 100 runs, the maximum). Goals (issue 18):
#      < 1.5 s local, < 3 s lan.
#   2. Name CAS writes per second, BENCH_CONC writers: (a) three servers
#      (profile BENCH_CAS_PROFILE), writer i on index listener i mod 3 with
#      its own name, every write a compare-and-swap (If-None-Match: * then
#      If-Match on the version it got); (b) one node with cluster mode off
#      (same roles, same load) in the same run, interleaved, BENCH_REPEAT
#      runs of BENCH_SECONDS each; medians, the ratio (a)/(b), latency p50
#      and p99.
#   3. Where (a)'s time goes: during another (a) load, a BENCH_PERF_S CPU
#      profile of the leader (/debug/pprof when the admin listener has it,
#      else perf record -g), the fdatasync calls of each server per write
#      (perf stat), the files the leader syncs (perf trace), each node's CPU
#      time; the same sync count for (b). BENCH_CPU_PROFILE=0 skips it.
#   4. Registry commits (BENCH_PARTS=registry; not in the default parts):
#      (a) three servers with roles ["index", "registry"] (every server
#      runs the registry; genesis from trust roots of 3 fresh signers,
#      quorum BENCH_REG_QUORUM), BENCH_CONC writers, writer i on registry
#      listener i mod 3 (followers relay to the leader); (b) one node with
#      the cluster off, same roles and load; interleaved, BENCH_REPEAT runs
#      of BENCH_SECONDS. Each writer loops (`cpbench reg`): read HEAD,
#      propose HEAD+1, the quorum's approvals at once, commit; a 409
#      chain_mismatch (another writer won) re-reads HEAD and starts over.
#      Medians of acknowledged commits/s, cycle latency p50/p99 and the
#      ratio (a)/(b) (goal ≥ 200 commits/s with three servers). Then a
#      perf profile of the leader and a follower under (a) with syncs per
#      commit and Raft entries per commit, and BENCH_REG_FAILOVER_RUNS
#      kill -9 of the leader → first acknowledged commit of a cycle sent
#      after the kill (`cpbench failover -registry-signers`).
#
# Usage: scripts/bench/controlplane.sh                   (full run, ~6 minutes on 2 cores)
#        BENCH_PROFILES=local BENCH_RUNS=2 BENCH_REPEAT=1 BENCH_SECONDS=3 BENCH_PERF_S=3 scripts/bench/controlplane.sh   (smoke run)
#        BENCH_PARTS=failover BENCH_HONOR_RETRY_AFTER=1 scripts/bench/controlplane.sh   (failover of a client that
#        waits out each refusal's Retry-After instead of retrying after 10 ms)
#        BENCH_PARTS=failover BENCH_SETTLE_S=6 scripts/bench/controlplane.sh   (6 s between runs: no circuit breaker
#        a node opened towards the previous run's killed leader is still open)
#        BENCH_PARTS=registry scripts/bench/controlplane.sh   (registry commits, ~3 minutes)
#        BENCH_PARTS=registry BENCH_REPEAT=1 BENCH_SECONDS=3 BENCH_PERF_S=3 BENCH_REG_FAILOVER_RUNS=1 scripts/bench/controlplane.sh   (its smoke run)
#
# Every node listens on 127.0.0.1 (ports below the ephemeral range); data
# dirs live under one scratch dir removed at exit with every process. The
# markdown report goes to stdout, progress to stderr.
set -euo pipefail

BENCH_PROFILES=${BENCH_PROFILES:-"local lan"} # Raft profiles of the failover part
BENCH_RUNS=${BENCH_RUNS:-10}                  # failovers per profile
BENCH_FAILOVER_TIMEOUT=${BENCH_FAILOVER_TIMEOUT:-1s} # the failover writer's client timeout
BENCH_REPEAT=${BENCH_REPEAT:-3}               # CAS runs per side
BENCH_SECONDS=${BENCH_SECONDS:-10}            # seconds per CAS run
BENCH_CONC=${BENCH_CONC:-8}                   # CAS writers
BENCH_CAS_PROFILE=${BENCH_CAS_PROFILE:-local} # Raft profile of the CAS part
BENCH_CPU_PROFILE=${BENCH_CPU_PROFILE:-1}     # 0: no profile
BENCH_PERF_S=${BENCH_PERF_S:-10}              # seconds of CPU profile
BENCH_PARTS=${BENCH_PARTS:-"failover cas"}    # parts to run (cas includes the profile): failover cas registry
BENCH_HONOR_RETRY_AFTER=${BENCH_HONOR_RETRY_AFTER:-0} # 1: the failover writer waits out each Retry-After
BENCH_SETTLE_S=${BENCH_SETTLE_S:-0}           # pause between failover runs (6: longer than a breaker stays open)
BENCH_REG_QUORUM=${BENCH_REG_QUORUM:-3}       # registry part: approvals needed, of 3 signers
BENCH_REG_FAILOVER_RUNS=${BENCH_REG_FAILOVER_RUNS:-5} # registry part: failovers (0: none)

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# shellcheck source=scripts/bench/lib.sh
source "$REPO/scripts/bench/lib.sh"
LOGS=()
need_tools curl=curl jq=jq

bench_workdir "$(mktemp -d /tmp/ron-bench-cp.XXXXXX)"
BIN=$WORK/bin
log "building ron and cpbench"
mkdir -p "$BIN"
(cd "$REPO" && go build -o "$BIN/ron" . && go build -o "$BIN/" ./scripts/bench/cmd/cpbench) || die "go build failed"
RON_VERSION=$(cd "$REPO" && git rev-parse --short HEAD 2>/dev/null || echo unknown)
[[ -z $(cd "$REPO" && git status --porcelain 2>/dev/null | grep -v '^??' | head -1) ]] || RON_VERSION+="+dirty"
LOAD_START=$(cut -d' ' -f1-3 /proc/loadavg)
T_START=$SECONDS
log "load average at start: $LOAD_START"

head -c 32 /dev/urandom >"$WORK/root.key" # shared by every node (raw 32 bytes)

# ---------------------------------------------------------------- nodes
# Per node NAME (also its node id): ADMIN, INDEXP, GOSSIP, RAFTP (ports)
# and PID.
declare -A ADMIN INDEXP GOSSIP RAFTP REGP PID
plan_node() {
	local p
	free_port p && REGP[$1]=$p
	free_port p && ADMIN[$1]=$p
	free_port p && INDEXP[$1]=$p
	free_port p && GOSSIP[$1]=$p
	free_port p && RAFTP[$1]=$p
}
# write_config NAME CLUSTER(on|off) JOIN(comma-separated names) PROFILE [registry]:
# roles = ["index"] (with "registry": ["index", "registry"], genesis from
# the trust roots $WORK/keys/trust-roots.json, no dev signer); with the
# cluster on, a server of a group of three.
write_config() {
	local name=$1 mode=$2 join=$3 prof=$4 reg=${5:-} j list="" roles='"index"'
	mkdir -p "$WORK/$name/data/keys"
	cp "$WORK/root.key" "$WORK/$name/data/keys/root.key"
	chmod 600 "$WORK/$name/data/keys/root.key"
	for j in ${join//,/ }; do list+="${list:+, }\"127.0.0.1:${GOSSIP[$j]}\""; done
	[[ $reg == registry ]] && roles='"index", "registry"'
	cat >"$WORK/$name/ron.toml" <<EOF
roles = [$roles]
data_dir = "$WORK/$name/data"

[log]
level = "warn"

[admin]
listen = "127.0.0.1:${ADMIN[$name]}"

[index]
listen = "127.0.0.1:${INDEXP[$name]}"

[cluster]
enabled = $([[ $mode == on ]] && echo true || echo false)
node_id = "$name"
profile = "$prof"
listen = "127.0.0.1:${GOSSIP[$name]}"
raft_listen = "127.0.0.1:${RAFTP[$name]}"
join = [$list]
server = $([[ $mode == on ]] && echo true || echo false)
bootstrap_expect = $([[ $mode == on ]] && echo 3 || echo 0)
EOF
	if [[ $reg == registry ]]; then
		cat >>"$WORK/$name/ron.toml" <<EOF

[registry]
listen = "127.0.0.1:${REGP[$name]}"
trust_roots = "$WORK/keys/trust-roots.json"
allow_dev_signer = false
EOF
	fi
}
# launch NAME starts the node in the background (not waiting).
launch() {
	"$BIN/ron" serve --config "$WORK/$1/ron.toml" >>"$WORK/$1/ron.log" 2>&1 &
	PID[$1]=$!
	PIDS+=("$!")
	LOGS+=("$WORK/$1/ron.log")
}
ready() { wait_http "http://127.0.0.1:${ADMIN[$1]}/readyz" || die "$1 did not become ready"; }
# reap NAME waits for the node's process (killed by cpbench failover) and
# forgets its pid.
reap() {
	{ wait "${PID[$1]}"; } 2>/dev/null || true
	local keep=() p
	for p in "${PIDS[@]}"; do [[ $p == "${PID[$1]}" ]] || keep+=("$p"); done
	PIDS=("${keep[@]}")
}
# stop_nodes NAME… stops nodes (SIGTERM) and removes their dirs.
stop_nodes() {
	local n
	for n in "$@"; do stop_pid "${PID[$n]}"; done
	for n in "$@"; do rm -rf "${WORK:?}/$n"; done
}
# start_servers PROFILE NAME…: three servers (the first joins the others,
# the others the first), ready; with SERVER_ROLES=registry each runs the
# registry too.
SERVER_ROLES=""
start_servers() {
	local prof=$1 n first=$2 others
	shift
	for n in "$@"; do plan_node "$n"; done
	others=$(IFS=,; echo "${*:2}")
	for n in "$@"; do
		if [[ $n == "$first" ]]; then write_config "$n" on "$others" "$prof" "$SERVER_ROLES"; else write_config "$n" on "$first" "$prof" "$SERVER_ROLES"; fi
	done
	for n in "$@"; do launch "$n"; done
	for n in "$@"; do ready "$n"; done
}
mint() { "$BIN/ron" token mint --config "$WORK/$1/ron.toml" --scope index:write --ttl 6h || die "token mint failed"; }
admins() { local n out=""; for n in "$@"; do out+="${out:+,}127.0.0.1:${ADMIN[$n]}"; done; echo "$out"; }
index_urls() { local n out=""; for n in "$@"; do out+="${out:+,}http://127.0.0.1:${INDEXP[$n]}"; done; echo "$out"; }
reg_urls() { local n out=""; for n in "$@"; do out+="${out:+,}http://127.0.0.1:${REGP[$n]}"; done; echo "$out"; }
pids() { local n out=""; for n in "$@"; do out+="${out:+,}${PID[$n]}"; done; echo "$out"; }
# applied NAME: the node's control_plane.applied_index.
applied() { curl -fsS "http://127.0.0.1:${ADMIN[$1]}/api/v1/status" | jq -r .control_plane.applied_index; }
# name_writes NAME: the node's acknowledged name writes (ron_index_writes_total{kind="name",result="ok"}).
name_writes() {
	curl -fsS "http://127.0.0.1:${ADMIN[$1]}/metrics" | awk '/^ron_index_writes_total\{/ && /kind="name"/ && /result="ok"/ { s += $NF } END { printf "%d", s }'
}
# cpu_ticks PID: user + system clock ticks of the process.
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
# p99 X…: nearest-rank 99th percentile (the maximum for ≤ 100 values).
p99() {
	printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END { if (NR==0) {print "nan"; exit}
		i = int(0.99*NR); if (i < 0.99*NR) i++; print a[i] }'
}
ms_since() { awk -v a="$1" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.0f", (b-a)*1000 }'; }

# forget_pid PID drops PID (a job that ended) from PIDS.
forget_pid() {
	local keep=() p
	for p in "${PIDS[@]}"; do [[ $p == "$1" ]] || keep+=("$p"); done
	PIDS=("${keep[@]}")
}
# PATHS: the call paths whose inclusive share of a server's CPU samples
# the report gives (symbol|label).
PATHS='net/http.(*conn).serve|HTTP server, every request served
github.com/ronhq/ron/roles/index.(*Handlers).clusterPutName|PUT /names handler
github.com/ronhq/ron/httpx/auth.Check|token check
github.com/ronhq/ron/roles/index/replication.(*Node).forward|forward to the leader (client side)
github.com/hashicorp/raft.(*Raft).dispatchLogs|leader: append entries to its log
github.com/hashicorp/raft.(*Raft).replicate|leader: replicate to followers
github.com/hashicorp/raft.(*Raft).appendEntries|follower: append entries from the leader
github.com/hashicorp/raft-boltdb/v2.(*BoltStore).StoreLogs|raft log store (raft-boltdb)
github.com/hashicorp/raft.(*Raft).runFSM|state machine: apply committed entries
github.com/ronhq/ron/roles/index/indexdb.(*DB).ApplyLogged|apply one name write to the index db
go.etcd.io/bbolt.(*Tx).Commit|bbolt commits (log store and index db)
syscall.Fdatasync|fdatasync
github.com/hashicorp/go-msgpack/v2/codec.(*Encoder).Encode|msgpack encode (Raft RPCs)
github.com/hashicorp/go-msgpack/v2/codec.(*Decoder).Decode|msgpack decode (Raft RPCs)
encoding/json.Marshal|encoding/json Marshal
encoding/json.Unmarshal|encoding/json Unmarshal
encoding/json.(*Decoder).Decode|encoding/json Decoder
runtime.gcBgMarkWorker|GC mark workers
runtime.mallocgc|allocation'
# perf_summary PERFDATA [PATHLIST]: the kernel/ron split and the inclusive
# share of each of PATHLIST (default PATHS; markdown rows "| share | path |").
perf_summary() {
	local paths=${2:-$PATHS}
	perf report -i "$1" --stdio --no-children --sort dso -g none 2>/dev/null | grep -E '^ +[0-9.]+%' >"$1.dso" || true
	local dso
	for dso in '[kernel.kallsyms]' ron; do
		echo "| $(awk -v d="$dso" '$2 == d { print $1 }' "$1.dso" | head -1) | self time in $dso |"
	done
	perf report -i "$1" --stdio --children --sort symbol -g none --percent-limit 0.2 2>/dev/null |
		grep -E '^ +[0-9.]+%' | sed -E 's/ +- +- *$//; s/ +$//' >"$1.children" || true
	local sym label share
	while IFS='|' read -r sym label; do
		share=$(awk -v s="$sym" '{ i = index($0, "] "); if (i && substr($0, i+2) == s) { print $1; exit } }' "$1.children")
		echo "| ${share:-< 0.2%} | $label (\`$sym\`) |"
	done <<<"$paths"
}

# cas_run on|off PREFIX SECONDS: one CAS load (3 servers or one node), JSON on stdout.
cas_run() {
	if [[ $1 == on ]]; then
		"$BIN/cpbench" cas -url "$(index_urls "${CAS_NODES[@]}")" -token "$TOK_ON" -c "$BENCH_CONC" -duration "${3}s" -prefix "$2"
	else
		"$BIN/cpbench" cas -url "$(index_urls s1)" -token "$TOK_OFF" -c "$BENCH_CONC" -duration "${3}s" -prefix "$2"
	fi
}


# ---------------------------------------------------------------- 1. failover
# part NAME: whether BENCH_PARTS includes NAME.
part() { [[ " $BENCH_PARTS " == *" $1 "* ]]; }
declare -A FO FOD
HONOR=()
[[ $BENCH_HONOR_RETRY_AFTER == 1 ]] && HONOR=(-honor-retry-after)
if part failover; then
	k=0
	for prof in $BENCH_PROFILES; do
		k=$((k + 1))
		names=("${prof}1" "${prof}2" "${prof}3")
		log "1/3 failover, profile $prof: 3 servers, $BENCH_RUNS kill -9 of the leader"
		start_servers "$prof" "${names[@]}"
		TOK=$(mint "${names[0]}")
		ADM=$(admins "${names[@]}")
		out=$("$BIN/cpbench" leader -admin "$ADM" -timeout 60s) || die "no leader ($prof)"
		log "  first leader $(jq -r .leader <<<"$out") after $(jq -r .ms <<<"$out") ms of polling"
		for ((run = 1; run <= BENCH_RUNS; run++)); do
			"$BIN/cpbench" leader -admin "$ADM" -caught-up -timeout 120s >/dev/null || die "run $run ($prof): no agreed, caught-up leader"
			out=$("$BIN/cpbench" failover -admin "$ADM" -index "$(index_urls "${names[@]}")" -pid "$(pids "${names[@]}")" \
				-token "$TOK" -run "$run" -name "failover-$prof" -timeout "$BENCH_FAILOVER_TIMEOUT" "${HONOR[@]}") || die "failover run $run ($prof) failed"
			old=$(jq -r .old_leader <<<"$out")
			reap "$old"
			t0=$EPOCHREALTIME
			launch "$old"
			ready "$old"
			"$BIN/cpbench" leader -admin "$ADM" -caught-up -timeout 120s >/dev/null || die "run $run ($prof): $old did not catch up"
			catch=$(ms_since "$t0")
		((BENCH_SETTLE_S == 0)) || sleep "$BENCH_SETTLE_S"
			FO[$prof]+=" $(jq -r .failover_ms <<<"$out")"
			FOD[$prof]+="$(jq -c --arg run "$run" --arg cu "$catch" '. + {run: ($run|tonumber), catch_up_ms: ($cu|tonumber)}' <<<"$out")"$'\n'
			log "  run $run: $(jq -c '{old_leader, writer, new_leader, failover_ms, leader_lost_ms, elected_ms, writer_knows_ms, failures}' <<<"$out"); $old back and caught up after $catch ms"
		done
		stop_nodes "${names[@]}"
	done
fi

# ---------------------------------------------------------------- 2. CAS writes
PROF_NOTE="" PPROF_TOP="" PERF_SELF="" PERF_LEAD="" PERF_FOLL="" SYNC_ROWS="" TRACE_ROWS="" CPU_ROWS="" PROF_CAS="" OFF_SYNC=""
declare -A CAS
if part cas; then
	log "2/3 name CAS writes, $BENCH_CONC writers: 3 servers (profile $BENCH_CAS_PROFILE) vs one node, cluster off; ${BENCH_SECONDS} s ×$BENCH_REPEAT each"
	CAS_NODES=(c1 c2 c3)
	start_servers "$BENCH_CAS_PROFILE" "${CAS_NODES[@]}"
	plan_node s1
	write_config s1 off "" "$BENCH_CAS_PROFILE"
	launch s1
	ready s1
	TOK_ON=$(mint c1)
	TOK_OFF=$(mint s1)
	CADM=$(admins "${CAS_NODES[@]}")
	"$BIN/cpbench" leader -admin "$CADM" -caught-up -timeout 60s >/dev/null || die "no leader (CAS part)"
	for ((i = 1; i <= BENCH_REPEAT; i++)); do
		order=(on off)
		((i % 2 == 0)) && order=(off on)
		for mode in "${order[@]}"; do
			out=$(cas_run "$mode" "run$i-$mode" "$BENCH_SECONDS") || die "CAS run $i ($mode) failed"
			CAS[$mode.wps]+=" $(jq -r .writes_per_s <<<"$out")"
			CAS[$mode.p50]+=" $(jq -r .p50_ms <<<"$out")"
			CAS[$mode.p99]+=" $(jq -r .p99_ms <<<"$out")"
			CAS[$mode.fail]+=" $(jq -r '[.failures[]] | add // 0' <<<"$out")"
			log "  run $i cluster $mode: $(jq -c '{acked, writes_per_s, p50_ms, p99_ms, failures}' <<<"$out")"
		done
	done

	# ---------------------------------------------------------------- 3. profile
	if [[ $BENCH_CPU_PROFILE == 0 ]]; then
		PROF_NOTE="skipped (BENCH_CPU_PROFILE=0)"
	else
		lr=$("$BIN/cpbench" leader -admin "$CADM" -caught-up -timeout 60s) || die "no leader before the profile"
		LEAD=$(jq -r .leader <<<"$lr")
		LPID=${PID[$LEAD]}
		FOLL=
		for n in "${CAS_NODES[@]}"; do [[ -n $FOLL || $n == "$LEAD" ]] || FOLL=$n; done
		pprof_code=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:${ADMIN[$LEAD]}/debug/pprof/" || true)
		have_perf=$(command -v perf >/dev/null && perf stat -e task-clock -- true >/dev/null 2>&1 && echo 1 || echo "")
		log "3/3 profile of the leader $LEAD (pid $LPID) under the 3-server CAS load: /debug/pprof/ answers $pprof_code, perf $([[ -n $have_perf ]] && echo usable || echo "not usable")"
		cas_run on prof "$((BENCH_PERF_S + 14))" >"$WORK/prof-cas.json" &
		CAS_PID=$!
		PIDS+=("$CAS_PID")
		sleep 2
		# (i) 5 s with only counters attached: log entries, syncs, CPU time.
		declare -A T0 T1
		a0=$(applied "$LEAD")
		for n in "${CAS_NODES[@]}"; do T0[$n]=$(cpu_ticks "${PID[$n]}"); done
		t0=$EPOCHREALTIME
		if [[ -n $have_perf ]]; then
			perf_jobs=()
			for n in "${CAS_NODES[@]}"; do
				perf stat -x, -e syscalls:sys_enter_fdatasync,syscalls:sys_enter_fsync -p "${PID[$n]}" -o "$WORK/stat.$n" -- sleep 5 >/dev/null 2>&1 &
				perf_jobs+=("$!")
			done
			for j in "${perf_jobs[@]}"; do wait "$j" || true; done
		else
			sleep 5
		fi
		win=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.2f", b-a }')
		a1=$(applied "$LEAD")
		for n in "${CAS_NODES[@]}"; do T1[$n]=$(cpu_ticks "${PID[$n]}"); done
		entries=$((a1 - a0))
		hz=$(getconf CLK_TCK)
		for n in "${CAS_NODES[@]}"; do
			CPU_ROWS+="${CPU_ROWS:+, }$n$([[ $n == "$LEAD" ]] && echo ' (leader)') $(awk -v d="$((T1[$n] - T0[$n]))" -v hz="$hz" -v w="$win" 'BEGIN { printf "%.2f", d/hz/w }')"
			if [[ -n $have_perf ]]; then
				fds=$(awk -F, '/sys_enter_fdatasync/ {print $1}' "$WORK/stat.$n")
				fss=$(awk -F, '/sys_enter_fsync/ {print $1}' "$WORK/stat.$n")
				SYNC_ROWS+="${SYNC_ROWS:+; }$n$([[ $n == "$LEAD" ]] && echo ' (leader)') $fds fdatasync + $fss fsync = $(ratio "$((fds + fss))" "$entries") per log entry"
			fi
		done
		# (ii) the CPU profile.
		if [[ $pprof_code == 200 ]]; then
			PROF_NOTE="CPU profile: /debug/pprof/profile of the leader, ${BENCH_PERF_S} s"
			curl -fsS -o "$WORK/cpu.pprof" "http://127.0.0.1:${ADMIN[$LEAD]}/debug/pprof/profile?seconds=$BENCH_PERF_S" || die "pprof failed"
			PPROF_TOP=$(go tool pprof -top -nodecount=30 "$BIN/ron" "$WORK/cpu.pprof" 2>/dev/null | sed -n '1,40p')
		elif [[ -n $have_perf ]]; then
			PROF_NOTE="no /debug/pprof on the admin listener (HTTP $pprof_code); CPU profiles: \`perf record -F 499 -g -p <pid>\` of the leader and of follower $FOLL at once, ${BENCH_PERF_S} s"
			perf record -q -F 499 -g -p "${PID[$FOLL]}" -o "$WORK/perf.foll.data" -- sleep "$BENCH_PERF_S" >/dev/null 2>&1 &
			fpid=$!
			perf record -q -F 499 -g -p "$LPID" -o "$WORK/perf.data" -- sleep "$BENCH_PERF_S" >/dev/null 2>&1 || die "perf record failed"
			wait "$fpid" || die "perf record of the follower failed"
			perf report -i "$WORK/perf.data" --stdio --no-children --sort dso,symbol -g none --percent-limit 1.5 2>/dev/null |
				grep -E '^ +[0-9.]+%' | sed -E 's/ +- +- *$//; s/ +$//; s/^ +//' | head -20 >"$WORK/self.txt" || true
			PERF_SELF=$(cat "$WORK/self.txt")
			PERF_LEAD=$(perf_summary "$WORK/perf.data")
			PERF_FOLL=$(perf_summary "$WORK/perf.foll.data")
		else
			PROF_NOTE="no /debug/pprof on the admin listener (HTTP $pprof_code) and no usable perf: no CPU profile"
		fi
		# (iii) which files the leader syncs, and how long a sync takes.
		if [[ -n $have_perf ]]; then
			perf trace -e fdatasync,fsync -p "$LPID" -o "$WORK/trace.txt" -- sleep 3 >/dev/null 2>&1 || true
			TRACE_ROWS=$(awk '/fdatasync\(|fsync\(/ {
					if (match($0, /fd: [0-9]+/)) fd = substr($0, RSTART+4, RLENGTH-4); else next
					t = 0; if (match($0, /\( *[0-9.]+ ms\)/)) { t = substr($0, RSTART+1, RLENGTH-2); sub(/ *ms/, "", t) }
					n[fd]++; s[fd] += t; all++ }
				END { for (fd in n) printf "%s %d %.1f %.3f\n", fd, n[fd], 100*n[fd]/all, s[fd]/n[fd] }' "$WORK/trace.txt" |
				while read -r fd cnt pct avg; do
					f=$(readlink "/proc/$LPID/fd/$fd" 2>/dev/null || echo "fd $fd")
					echo "${f#"$WORK"/} $cnt $pct $avg"
				done | sort | awk '{ printf "%s%s %d (%s %%, mean %.2f ms)", (NR>1 ? "; " : ""), $1, $2, $3, $4 }')
		fi
		wait "$CAS_PID" || die "the profiling CAS load failed"
		forget_pid "$CAS_PID"
		PROF_CAS=$(jq -r '"\(.writes_per_s | floor) writes/s, p50 \(.p50_ms) ms, p99 \(.p99_ms) ms"' "$WORK/prof-cas.json")
		# The same sync count for one node with the cluster off.
		if [[ -n $have_perf ]]; then
			cas_run off profoff 6 >"$WORK/prof-off.json" &
			OFF_PID=$!
			PIDS+=("$OFF_PID")
			sleep 1
			w0=$(name_writes s1)
			perf stat -x, -e syscalls:sys_enter_fdatasync,syscalls:sys_enter_fsync -p "${PID[s1]}" -o "$WORK/stat.s1" -- sleep 4 >/dev/null 2>&1 || true
			offw=$(($(name_writes s1) - w0))
			wait "$OFF_PID" || die "the one-node sync count load failed"
			forget_pid "$OFF_PID"
			fds=$(awk -F, '/sys_enter_fdatasync/ {print $1}' "$WORK/stat.s1")
			fss=$(awk -F, '/sys_enter_fsync/ {print $1}' "$WORK/stat.s1")
			OFF_SYNC="One node, cluster off, under its own load: $fds fdatasync + $fss fsync in 4 s for $offw writes = $(ratio "$((fds + fss))" "$offw") per write ($(jq -r '.writes_per_s | floor' "$WORK/prof-off.json") writes/s in that run)."
		fi
	fi
	stop_nodes "${CAS_NODES[@]}" s1
fi

# ---------------------------------------------------------------- 4. registry
# REG_PATHS: the call paths of the registry part's profile (symbol|label).
REG_PATHS='net/http.(*conn).serve|HTTP server, every request served
github.com/ronhq/ron/roles/registry.(*Role).relay|relay a write to the leader (client side)
github.com/ronhq/ron/roles/registry/httpapi.(*API).doPropose|propose handler
github.com/ronhq/ron/roles/registry/httpapi.(*API).doApprove|approve handler
github.com/ronhq/ron/roles/registry/httpapi.(*API).doCommit|commit handler
github.com/ronhq/ron/httpx/auth.Check|token check
crypto/ed25519.Verify|Ed25519 verify (approvals)
github.com/gowebpki/jcs.Transform|JCS canonicalisation
github.com/ronhq/ron/roles/registry/committer.(*Committer).Run|committer goroutine (all of it)
github.com/ronhq/ron/roles/registry/committer.(*Committer).propose|committer: a batch as one Raft entry, until applied
github.com/ronhq/ron/roles/registry/committer.(*Committer).reloadReplica|committer: reload the state from the stores
github.com/ronhq/ron/roles/registry/committer.readDB|reload: read registry.db (HEAD, every proposal)
github.com/ronhq/ron/roles/registry/committer.(*Committer).loadProposals|reload: decode every proposal
github.com/ronhq/ron/roles/registry/reglog.Encode|encode an entry
github.com/ronhq/ron/roles/registry/reglog.(*FSM).Apply|state machine: apply a registry entry
github.com/ronhq/ron/roles/registry/segment.(*Log).Append|segment log append
github.com/ronhq/ron/roles/registry.(*checkpointer).round|checkpointer rounds (tiles, signed checkpoint)
github.com/ronhq/ron/roles/registry.(*verifier).run|deep verifier
github.com/hashicorp/raft.(*Raft).dispatchLogs|leader: append entries to its log
github.com/hashicorp/raft.(*Raft).replicate|leader: replicate to followers
github.com/hashicorp/raft.(*Raft).appendEntries|follower: append entries from the leader
github.com/hashicorp/raft-boltdb/v2.(*BoltStore).StoreLogs|raft log store (raft-boltdb)
github.com/hashicorp/raft.(*Raft).runFSM|state machine goroutine (all machines)
go.etcd.io/bbolt.(*Tx).Commit|bbolt commits (raft.db, registry.db, tlog.db)
syscall.Fdatasync|fdatasync
syscall.Fsync|fsync
github.com/hashicorp/go-msgpack/v2/codec.(*Encoder).Encode|msgpack encode (Raft RPCs)
github.com/hashicorp/go-msgpack/v2/codec.(*Decoder).Decode|msgpack decode (Raft RPCs)
encoding/json.Marshal|encoding/json Marshal
encoding/json.Unmarshal|encoding/json Unmarshal
runtime.gcBgMarkWorker|GC mark workers
runtime.mallocgc|allocation'
# reg_ready NAME: waits up to 30 s until the node's registry has a HEAD.
reg_ready() {
	for _ in $(seq 300); do
		curl -fsS -o /dev/null "http://127.0.0.1:${REGP[$1]}/registry/head" 2>/dev/null && return 0
		sleep 0.1
	done
	die "the registry of $1 has no HEAD after 30 s"
}
# reg_head NAME: the node's registry HEAD version.
reg_head() { curl -fsS "http://127.0.0.1:${REGP[$1]}/registry/head" | jq -r .version; }
# reg_run on|off PREFIX SECONDS: one registry load, JSON on stdout.
reg_run() {
	if [[ $1 == on ]]; then
		"$BIN/cpbench" reg -url "$(reg_urls "${REG_NODES[@]}")" -token "$TOK_REG_ON" -signers "$WORK/keys/signers.json" -c "$BENCH_CONC" -duration "${3}s" -prefix "$2"
	else
		"$BIN/cpbench" reg -url "$(reg_urls s2)" -token "$TOK_REG_OFF" -signers "$WORK/keys/signers.json" -c "$BENCH_CONC" -duration "${3}s" -prefix "$2"
	fi
}
reg_mint() { "$BIN/ron" token mint --config "$WORK/$1/ron.toml" --scope registry:propose,registry:approve,registry:commit --ttl 6h || die "token mint failed"; }

declare -A REG
REG_ELECT=0 REG_ERRS=0
REG_PROF_NOTE="" REG_PROF_LOAD="" REG_WIN_ROWS="" REG_SELF="" REG_LEAD="" REG_FOLL="" REG_FO="" REG_FOD="" REG_OFF_SYNC=""
if part registry; then
	log "4/4 registry commits, $BENCH_CONC racing writers (quorum $BENCH_REG_QUORUM of 3): 3 servers running index+registry (profile $BENCH_CAS_PROFILE) vs one node, cluster off; ${BENCH_SECONDS} s ×$BENCH_REPEAT each"
	mkdir -p "$WORK/keys"
	"$BIN/cpbench" regkeys -dir "$WORK/keys" -n 3 -m "$BENCH_REG_QUORUM" >/dev/null || die "cpbench regkeys failed"
	REG_NODES=(g1 g2 g3)
	SERVER_ROLES=registry
	start_servers "$BENCH_CAS_PROFILE" "${REG_NODES[@]}"
	SERVER_ROLES=""
	plan_node s2
	write_config s2 off "" "$BENCH_CAS_PROFILE" registry
	launch s2
	ready s2
	for n in "${REG_NODES[@]}" s2; do reg_ready "$n"; done
	TOK_REG_ON=$(reg_mint g1)
	TOK_REG_OFF=$(reg_mint s2)
	RADM=$(admins "${REG_NODES[@]}")
	"$BIN/cpbench" leader -admin "$RADM" -caught-up -timeout 60s >/dev/null || die "no leader (registry part)"
	for ((i = 1; i <= BENCH_REPEAT; i++)); do
		order=(on off)
		((i % 2 == 0)) && order=(off on)
		for mode in "${order[@]}"; do
			out=$(reg_run "$mode" "run$i-$mode" "$BENCH_SECONDS") || die "registry run $i ($mode) failed"
			REG[$mode.cps]+=" $(jq -r .commits_per_s <<<"$out")"
			REG[$mode.p50]+=" $(jq -r .p50_ms <<<"$out")"
			REG[$mode.p99]+=" $(jq -r .p99_ms <<<"$out")"
			REG[$mode.c50]+=" $(jq -r .commit_call_p50_ms <<<"$out")"
			REG[$mode.lost]+=" $(jq -r .lost_per_commit <<<"$out")"
			REG[$mode.fail]+=" $(jq -r '[.failures[]] | add // 0' <<<"$out")"
			REG[$mode.stale]+=" $(jq -r .stale_head_reads <<<"$out")"
			REG[$mode.json]+="$(jq -c . <<<"$out")"$'\n'
			log "  run $i cluster $mode: $(jq -c '{commits, commits_per_s, p50_ms, p99_ms, commit_call_p50_ms, lost_per_commit, stale_head_reads, failures}' <<<"$out")"
		done
	done
	# Elections the three servers started during those runs (hashicorp/raft
	# logs each at warn), and the registry's own errors.
	REG_ELECT=0 REG_ERRS=0
	for n in "${REG_NODES[@]}"; do
		REG_ELECT=$((REG_ELECT + $(grep -c 'heartbeat timeout reached' "$WORK/$n/ron.log" || true)))
		REG_ERRS=$((REG_ERRS + $(grep -c '"level":"error".*registry' "$WORK/$n/ron.log" || true)))
	done
	log "  elections started during the runs: $REG_ELECT; registry error log lines: $REG_ERRS"

	if [[ $BENCH_CPU_PROFILE == 0 ]]; then
		REG_PROF_NOTE="skipped (BENCH_CPU_PROFILE=0)"
	else
		lr=$("$BIN/cpbench" leader -admin "$RADM" -caught-up -timeout 60s) || die "no leader before the registry profile"
		RLEAD=$(jq -r .leader <<<"$lr")
		RLPID=${PID[$RLEAD]}
		RFOLL=
		for n in "${REG_NODES[@]}"; do [[ -n $RFOLL || $n == "$RLEAD" ]] || RFOLL=$n; done
		have_perf=$(command -v perf >/dev/null && perf stat -e task-clock -- true >/dev/null 2>&1 && echo 1 || echo "")
		log "  profile of the leader $RLEAD (pid $RLPID) and follower $RFOLL under the 3-server registry load, perf $([[ -n $have_perf ]] && echo usable || echo "not usable")"
		reg_run on regprof "$((BENCH_PERF_S + 10))" >"$WORK/reg-prof.json" &
		REG_LOAD_PID=$!
		PIDS+=("$REG_LOAD_PID")
		sleep 2
		# (i) 5 s with only counters attached: commits, Raft entries, syncs, CPU.
		declare -A RT0 RT1
		a0=$(applied "$RLEAD") h0=$(reg_head "$RLEAD")
		for n in "${REG_NODES[@]}"; do RT0[$n]=$(cpu_ticks "${PID[$n]}"); done
		t0=$EPOCHREALTIME
		if [[ -n $have_perf ]]; then
			perf_jobs=()
			for n in "${REG_NODES[@]}"; do
				perf stat -x, -e syscalls:sys_enter_fdatasync,syscalls:sys_enter_fsync -p "${PID[$n]}" -o "$WORK/regstat.$n" -- sleep 5 >/dev/null 2>&1 &
				perf_jobs+=("$!")
			done
			for j in "${perf_jobs[@]}"; do wait "$j" || true; done
		else
			sleep 5
		fi
		rwin=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.2f", b-a }')
		a1=$(applied "$RLEAD") h1=$(reg_head "$RLEAD")
		for n in "${REG_NODES[@]}"; do RT1[$n]=$(cpu_ticks "${PID[$n]}"); done
		rentries=$((a1 - a0)) rcommits=$((h1 - h0))
		hz=$(getconf CLK_TCK)
		cpu="" syncs=""
		for n in "${REG_NODES[@]}"; do
			cpu+="${cpu:+, }$n$([[ $n == "$RLEAD" ]] && echo ' (leader)') $(awk -v d="$((RT1[$n] - RT0[$n]))" -v hz="$hz" -v w="$rwin" 'BEGIN { printf "%.2f", d/hz/w }')"
			if [[ -n $have_perf ]]; then
				fds=$(awk -F, '/sys_enter_fdatasync/ {print $1}' "$WORK/regstat.$n")
				fss=$(awk -F, '/sys_enter_fsync/ {print $1}' "$WORK/regstat.$n")
				syncs+="${syncs:+; }$n $fds fdatasync + $fss fsync = $(ratio "$((fds + fss))" "$rcommits") per commit"
			fi
		done
		REG_WIN_ROWS="In a ${rwin} s window of it with only counters attached: $rcommits commits ($(awk -v e="$rcommits" -v w="$rwin" 'BEGIN { printf "%.0f", e/w }')/s), $rentries Raft entries = $(ratio "$rentries" "$rcommits") entries (committer batches) per commit; CPU used (cores): $cpu.${syncs:+ Syncs: $syncs.}"
		if [[ -n $have_perf ]]; then
			REG_PROF_NOTE="\`perf record -F 499 -g -p <pid>\` of the leader $RLEAD and of follower $RFOLL at once, ${BENCH_PERF_S} s"
			perf record -q -F 499 -g -p "${PID[$RFOLL]}" -o "$WORK/regperf.foll.data" -- sleep "$BENCH_PERF_S" >/dev/null 2>&1 &
			fpid=$!
			perf record -q -F 499 -g -p "$RLPID" -o "$WORK/regperf.data" -- sleep "$BENCH_PERF_S" >/dev/null 2>&1 || die "perf record failed"
			wait "$fpid" || die "perf record of the follower failed"
			now_lead=$(curl -fsS "http://127.0.0.1:${ADMIN[$RLEAD]}/api/v1/status" | jq -r .control_plane.leader || echo "?")
			[[ $now_lead == "$RLEAD" ]] || REG_PROF_NOTE+="; **leadership moved during the profile** ($RLEAD led when it started, $now_lead after it: read the columns by what each node did)"
			perf report -i "$WORK/regperf.data" --stdio --no-children --sort dso,symbol -g none --percent-limit 1.5 2>/dev/null |
				grep -E '^ +[0-9.]+%' | sed -E 's/ +- +- *$//; s/ +$//; s/^ +//' | head -20 >"$WORK/regself.txt" || true
			REG_SELF=$(cat "$WORK/regself.txt")
			REG_LEAD=$(perf_summary "$WORK/regperf.data" "$REG_PATHS")
			REG_FOLL=$(perf_summary "$WORK/regperf.foll.data" "$REG_PATHS")
		else
			REG_PROF_NOTE="no usable perf: no CPU profile"
		fi
		wait "$REG_LOAD_PID" || die "the profiling registry load failed"
		forget_pid "$REG_LOAD_PID"
		REG_PROF_LOAD=$(jq -r '"\(.commits_per_s | floor) commits/s, p50 \(.p50_ms) ms, p99 \(.p99_ms) ms, \(.lost_per_commit * 100 | round / 100) lost races per commit"' "$WORK/reg-prof.json")
		if [[ -n $have_perf ]]; then
			reg_run off regprofoff 6 >"$WORK/reg-prof-off.json" &
			OFF_PID=$!
			PIDS+=("$OFF_PID")
			sleep 1
			w0=$(reg_head s2)
			perf stat -x, -e syscalls:sys_enter_fdatasync,syscalls:sys_enter_fsync -p "${PID[s2]}" -o "$WORK/regstat.s2" -- sleep 4 >/dev/null 2>&1 || true
			offc=$(($(reg_head s2) - w0))
			wait "$OFF_PID" || die "the one-node registry sync count load failed"
			forget_pid "$OFF_PID"
			fds=$(awk -F, '/sys_enter_fdatasync/ {print $1}' "$WORK/regstat.s2")
			fss=$(awk -F, '/sys_enter_fsync/ {print $1}' "$WORK/regstat.s2")
			REG_OFF_SYNC="One node, cluster off, under its own load: $fds fdatasync + $fss fsync in 4 s for $offc commits = $(ratio "$((fds + fss))" "$offc") per commit."
		fi
	fi

	# Failover of the registry: kill -9 of the leader → first commit of a
	# cycle sent after the kill, through a node that is not the leader.
	if ((BENCH_REG_FAILOVER_RUNS > 0)); then
		log "  registry failover: $BENCH_REG_FAILOVER_RUNS kill -9 of the leader"
		for ((run = 1; run <= BENCH_REG_FAILOVER_RUNS; run++)); do
			"$BIN/cpbench" leader -admin "$RADM" -caught-up -timeout 120s >/dev/null || die "registry failover run $run: no agreed, caught-up leader"
			out=$("$BIN/cpbench" failover -admin "$RADM" -index "$(reg_urls "${REG_NODES[@]}")" -pid "$(pids "${REG_NODES[@]}")" \
				-token "$TOK_REG_ON" -registry-signers "$WORK/keys/signers.json" -run "$run" -timeout "$BENCH_FAILOVER_TIMEOUT") ||
				die "registry failover run $run failed"
			old=$(jq -r .old_leader <<<"$out")
			reap "$old"
			launch "$old"
			ready "$old"
			reg_ready "$old"
			"$BIN/cpbench" leader -admin "$RADM" -caught-up -timeout 120s >/dev/null || die "registry failover run $run: $old did not catch up"
			sleep 6 # no breaker or backoff left over from this run
			REG_FO+=" $(jq -r .failover_ms <<<"$out")"
			REG_FOD+="$(jq -c --arg run "$run" '. + {run: ($run|tonumber)}' <<<"$out")"$'\n'
			log "  run $run: $(jq -c '{old_leader, writer, new_leader, failover_ms, elected_ms, ack_start_ms, failures}' <<<"$out")"
		done
	fi
	stop_nodes "${REG_NODES[@]}" s2
fi

# ---------------------------------------------------------------- report
echo "## ron control-plane benchmarks"
echo
echo "$(date -u +%Y-%m-%dT%H:%MZ), ron $RON_VERSION, $(nproc) cores, Linux $(uname -r), $(go version | cut -d' ' -f3); every node on 127.0.0.1" \
	"with roles [\"index\"]$(part registry && echo ' (the registry part: ["index", "registry"])'); load average at start $LOAD_START, at end $(cut -d' ' -f1-3 /proc/loadavg); took $((SECONDS - T_START)) s."
if part failover || part cas; then
	echo
	echo "| benchmark | figure | goal |"
	echo "| --- | ---: | ---: |"
fi
if part failover; then
	client="retry 10 ms after a refusal"
	[[ $BENCH_HONOR_RETRY_AFTER == 1 ]] && client="waits out each Retry-After"
	for prof in $BENCH_PROFILES; do
		goal="—"
		[[ $prof == local ]] && goal="< 1500"
		[[ $prof == lan ]] && goal="< 3000"
		# shellcheck disable=SC2086
		med=$(median ${FO[$prof]}) p=$(p99 ${FO[$prof]})
		n=$(wc -w <<<"${FO[$prof]}")
		settle=""
		((BENCH_SETTLE_S == 0)) || settle="; ${BENCH_SETTLE_S} s between runs"
		echo "| failover, profile $prof: kill -9 of the leader → first acknowledged write (ms; client: $client$settle), median; p99 of $n runs (nearest rank = the max) | $(fmt "$med" 0); $(fmt "$p" 0) | $goal |"
	done
fi
if part cas; then
	# shellcheck disable=SC2086
	on=$(median ${CAS[on.wps]}) off=$(median ${CAS[off.wps]})
	# shellcheck disable=SC2086
	on50=$(median ${CAS[on.p50]}) off50=$(median ${CAS[off.p50]}) on99=$(median ${CAS[on.p99]}) off99=$(median ${CAS[off.p99]})
	echo "| name CAS writes/s, $BENCH_CONC writers, median of $BENCH_REPEAT × ${BENCH_SECONDS} s: 3 servers (profile $BENCH_CAS_PROFILE) / 1 node (cluster off) | $(fmt "$on" 0) / $(fmt "$off" 0) = $(ratio "$on" "$off") | — |"
	echo "| name CAS latency p50; p99 (ms), medians: 3 servers / 1 node | $(fmt "$on50" 1) / $(fmt "$off50" 1) = $(ratio "$on50" "$off50"); $(fmt "$on99" 1) / $(fmt "$off99" 1) = $(ratio "$on99" "$off99") | — |"
fi
if part failover; then
	echo
	echo "Failover runs (ms since the kill; lost: a survivor stopped naming the old leader; elected: a survivor said it leads;"
	echo "knows: the writer's node named the new leader; sent: the acknowledged write was sent; catch-up: restart of the"
	echo "killed node until every node applied as far as the leader; failures: the writes after the kill that were not acknowledged):"
	echo
	echo "| profile | run | old → new leader, writer | failover | lost | elected | knows | sent | failures | catch-up |"
	echo "| --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | --- | ---: |"
	for prof in $BENCH_PROFILES; do
		while IFS= read -r line; do
			[[ -n $line ]] || continue
			jq -r --arg p "$prof" '"| \($p) | \(.run) | \(.old_leader) → \(.new_leader), via \(.writer) | \(.failover_ms|round) | \(.leader_lost_ms|round) | \(.elected_ms|round) | \(.writer_knows_ms|round) | \(.ack_start_ms|round) | \(.failures | to_entries | map("\(.value)× \(.key)") | join(", ")) | \(.catch_up_ms) |"' <<<"$line"
		done <<<"${FOD[$prof]}"
	done
	echo
	echo "What the writes refused after a kill were answered (the first of each kind, over every run):"
	echo
	for prof in $BENCH_PROFILES; do
		jq -rs --arg p "$prof" 'map(.failure_samples // {}) | add // {} | to_entries[] | "- \($p), \(.key): `\(.value | gsub("\n"; " ") | .[0:400])`"' <<<"${FOD[$prof]}"
	done
fi
if part cas; then
	echo
	# shellcheck disable=SC2086
	echo "- CAS writes/s per run: 3 servers $(printf '%.0f ' ${CAS[on.wps]}); 1 node $(printf '%.0f ' ${CAS[off.wps]});" \
		"writes not acknowledged per run: 3 servers${CAS[on.fail]}; 1 node${CAS[off.fail]}."
	echo "- Profile: ${PROF_NOTE:-none}."
	if [[ -n $PROF_CAS ]]; then
		echo "- Load while profiling (3 servers, $BENCH_CONC writers, the whole run): $PROF_CAS. In a ${win} s window of it with only"
		echo "  counters attached: $entries log entries ($(awk -v e="$entries" -v w="$win" 'BEGIN { printf "%.0f", e/w }')/s); CPU used (cores): $CPU_ROWS."
	fi
	[[ -z $SYNC_ROWS ]] || echo "- Syncs in that window (perf stat): $SYNC_ROWS."
	[[ -z $TRACE_ROWS ]] || echo "- The leader's syncs by file, 3 s of \`perf trace\` after the profile: $TRACE_ROWS."
	[[ -z $OFF_SYNC ]] || echo "- $OFF_SYNC"
	if [[ -n $PERF_LEAD ]]; then
		echo
		echo "Share of each server's CPU samples (perf, inclusive: a path's callees included, so rows overlap):"
		echo
		echo "| leader | follower $FOLL | path |"
		echo "| ---: | ---: | --- |"
		paste -d'|' <(sed -E 's/^\| ([^|]*) \|.*/| \1 /' <<<"$PERF_LEAD") <(sed -E 's/^\| ([^|]*) \| (.*)$/ \1 | \2/' <<<"$PERF_FOLL")
		echo
		echo "Leader, self time by binary and symbol (≥ 1.5 %):"
		echo
		echo '```'
		echo "$PERF_SELF"
		echo '```'
	fi
	if [[ -n $PPROF_TOP ]]; then
		echo
		echo '```'
		echo "$PPROF_TOP"
		echo '```'
	fi
fi
if part registry; then
	echo
	echo "### Registry commits on the control plane"
	echo
	echo "| benchmark | figure | goal |"
	echo "| --- | ---: | ---: |"
	# shellcheck disable=SC2086
	on=$(median ${REG[on.cps]}) off=$(median ${REG[off.cps]})
	# shellcheck disable=SC2086
	on50=$(median ${REG[on.p50]}) off50=$(median ${REG[off.p50]}) on99=$(median ${REG[on.p99]}) off99=$(median ${REG[off.p99]})
	# shellcheck disable=SC2086
	onc=$(median ${REG[on.c50]}) offc=$(median ${REG[off.c50]}) onl=$(median ${REG[on.lost]}) offl=$(median ${REG[off.lost]})
	echo "| registry commits/s, $BENCH_CONC writers racing for HEAD+1 (quorum $BENCH_REG_QUORUM of 3), median of $BENCH_REPEAT × ${BENCH_SECONDS} s: 3 servers (index+registry, profile $BENCH_CAS_PROFILE; writers over the 3 registry listeners) / 1 node (cluster off) | $(fmt "$on" 0) / $(fmt "$off" 0) = $(ratio "$on" "$off") | ≥ 200 (3 servers): $(pass "$on" 200 ">=") |"
	echo "| cycle latency (propose sent → commit acknowledged) p50; p99 (ms), medians: 3 servers / 1 node | $(fmt "$on50" 1) / $(fmt "$off50" 1) = $(ratio "$on50" "$off50"); $(fmt "$on99" 1) / $(fmt "$off99" 1) = $(ratio "$on99" "$off99") | — |"
	echo "| commit request alone p50 (ms), medians: 3 servers / 1 node | $(fmt "$onc" 1) / $(fmt "$offc" 1) = $(ratio "$onc" "$offc") | — |"
	echo "| lost races (409 chain_mismatch) per acknowledged commit, medians: 3 servers / 1 node | $(fmt "$onl" 2) / $(fmt "$offl" 2) | — |"
	if [[ -n $REG_FO ]]; then
		# shellcheck disable=SC2086
		med=$(median $REG_FO) mx=$(p99 $REG_FO)
		echo "| registry failover, profile $BENCH_CAS_PROFILE: kill -9 of the leader → first acknowledged commit of a cycle sent after the kill, through a non-leader (ms), median; max of $(wc -w <<<"$REG_FO") runs | $(fmt "$med" 0); $(fmt "$mx" 0) | — |"
	fi
	echo
	# shellcheck disable=SC2086
	echo "- Commits/s per run: 3 servers $(printf '%.0f ' ${REG[on.cps]}); 1 node $(printf '%.0f ' ${REG[off.cps]}); steps refused or failed per run (not lost races):" \
		"3 servers${REG[on.fail]}; 1 node${REG[off.fail]}; re-read HEADs behind the 409's head_version per run: 3 servers${REG[on.stale]}; 1 node${REG[off.stale]};" \
		"elections started by the three servers during those runs (raft's \"heartbeat timeout reached\" warnings): $REG_ELECT; registry error log lines: $REG_ERRS."
	echo "- What the refused or failed steps were answered (the first of each kind, over every run):"
	jq -rs 'map(.failure_samples // {}) | add // {} | to_entries[] | "  - \(.key): `\(.value | gsub("\n"; " ") | .[0:300])`"' <<<"${REG[on.json]}${REG[off.json]}"
	echo "- Profile: ${REG_PROF_NOTE:-none}."
	[[ -z $REG_PROF_LOAD ]] || echo "- Load while profiling (3 servers, $BENCH_CONC writers, the whole run): $REG_PROF_LOAD. $REG_WIN_ROWS"
	[[ -z $REG_OFF_SYNC ]] || echo "- $REG_OFF_SYNC"
	if [[ -n $REG_FOD ]]; then
		echo
		echo "Registry failover runs (ms since the kill; 6 s between runs):"
		echo
		echo "| run | old → new leader, writer | failover | lost | elected | knows | sent | failures |"
		echo "| ---: | --- | ---: | ---: | ---: | ---: | ---: | --- |"
		while IFS= read -r line; do
			[[ -n $line ]] || continue
			jq -r '"| \(.run) | \(.old_leader) → \(.new_leader), via \(.writer) | \(.failover_ms|round) | \(.leader_lost_ms|round) | \(.elected_ms|round) | \(.writer_knows_ms|round) | \(.ack_start_ms|round) | \(.failures | to_entries | map("\(.value)× \(.key)") | join(", ")) |"' <<<"$line"
		done <<<"$REG_FOD"
		echo
		jq -rs 'map(.failure_samples // {}) | add // {} | to_entries[] | "- \(.key): `\(.value | gsub("\n"; " ") | .[0:300])`"' <<<"$REG_FOD"
	fi
	if [[ -n $REG_LEAD ]]; then
		echo
		echo "Share of each server's CPU samples under the registry load (perf, inclusive, rows overlap):"
		echo
		echo "| leader | follower $RFOLL | path |"
		echo "| ---: | ---: | --- |"
		paste -d'|' <(sed -E 's/^\| ([^|]*) \|.*/| \1 /' <<<"$REG_LEAD") <(sed -E 's/^\| ([^|]*) \| (.*)$/ \1 | \2/' <<<"$REG_FOLL")
		echo
		echo "Leader, self time by binary and symbol (≥ 1.5 %):"
		echo
		echo '```'
		echo "$REG_SELF"
		echo '```'
	fi
fi
log "done"
