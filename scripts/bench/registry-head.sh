#!/usr/bin/env bash
# Registry benchmark B1 of ron (docs/registry.md §10): GET /registry/head on
# one `ron serve --amnesia --roles=registry` (rps = 0, the default) against
# nginx serving the same bytes from a file on loopback. Both are driven with
# `wrk --latency -tBENCH_THREADS -cBENCH_CONNS -dBENCH_DURATION`, the servers
# alternating which goes first, BENCH_REPEAT rounds each; medians of req/s
# and p99 latency, and ron/nginx. Goal: ≥ 20,000 req/s and p99 < 5 ms.
#
# Usage: scripts/bench/registry-head.sh            (full run, about 1 minute)
#        BENCH_DURATION=30s BENCH_REPEAT=3 scripts/bench/registry-head.sh
#                                                  (the spec's -d30s, 3 minutes)
#        BENCH_DURATION=2s BENCH_REPEAT=1 scripts/bench/registry-head.sh
#                                                  (smoke run, about 10 s)
#        BENCH_PIN=1 scripts/bench/registry-head.sh
#                                                  (servers and wrk on separate CPUs)
#
# BENCH_PIN=1 separates load generator and server, which otherwise share
# every CPU: the servers run with taskset on the first half of the CPUs
# (ron with GOMAXPROCS and nginx with worker_processes equal to that half),
# wrk on the other half with one thread per CPU (-t is then that count).
#
# The markdown report goes to stdout, progress to stderr. Everything it
# starts and creates is removed on exit. wrk, nginx and curl are installed
# with apt-get when missing.
set -euo pipefail

BENCH_DURATION=${BENCH_DURATION:-10s}       # wrk -d per round
BENCH_THREADS=${BENCH_THREADS:-2}           # wrk -t
BENCH_CONNS=${BENCH_CONNS:-64}              # wrk -c
BENCH_REPEAT=${BENCH_REPEAT:-3}             # rounds per server
BENCH_WARMUP=${BENCH_WARMUP:-2s}            # one untimed wrk run per server first
BENCH_NGINX_WORKERS=${BENCH_NGINX_WORKERS:-2}
BENCH_PIN=${BENCH_PIN:-0}                   # 1: servers and wrk on separate CPUs

# pinning: SRV and WRK prefix the server and wrk commands.
SRV=() WRK=() PIN_NOTE="not pinned (servers and wrk share all CPUs)"
if [[ $BENCH_PIN == 1 ]]; then
	NCPU=$(nproc)
	((NCPU >= 2)) || { echo "BENCH_PIN=1 needs 2 CPUs or more" >&2; exit 1; }
	HALF=$((NCPU / 2))
	SRV=(taskset -c "0-$((HALF - 1))") WRK=(taskset -c "$HALF-$((NCPU - 1))")
	BENCH_THREADS=$((NCPU - HALF)) BENCH_NGINX_WORKERS=$HALF
	PIN_NOTE="pinned: servers on CPUs 0-$((HALF - 1)) (ron GOMAXPROCS=$HALF, nginx $HALF workers), wrk on CPUs $HALF-$((NCPU - 1))"
fi

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# shellcheck source=scripts/bench/lib.sh
source "$REPO/scripts/bench/lib.sh"

# ---------------------------------------------------------------- processes
LOGS=()
bench_workdir "$(mktemp -d /tmp/ron-bench-registry.XXXXXX)"

# wrk_run URL DURATION → "<req/s> <p50 ms> <p99 ms>"; dies on socket errors
# or non-2xx answers (BENCH_ALLOW_ERRORS=1 only warns).
wrk_run() {
	local out
	out=$("${WRK[@]}" wrk --latency -t"$BENCH_THREADS" -c"$BENCH_CONNS" -d"$2" "$1" 2>&1) || die "wrk $1: $out"
	if grep -qE 'Non-2xx|Socket errors' <<<"$out"; then
		grep -E 'Non-2xx|Socket errors' <<<"$out" >&2
		[[ ${BENCH_ALLOW_ERRORS:-0} == 1 ]] || die "wrk errors for $1 (set BENCH_ALLOW_ERRORS=1 to go on)"
	fi
	awk 'function ms(v) {
			if (v ~ /us$/) return substr(v, 1, length(v)-2) / 1000
			if (v ~ /ms$/) return substr(v, 1, length(v)-2) + 0
			if (v ~ /m$/)  return substr(v, 1, length(v)-1) * 60000
			if (v ~ /s$/)  return substr(v, 1, length(v)-1) * 1000
			return v + 0 }
		/^Requests\/sec:/ { rps = $2 }
		$1 == "50%" { p50 = ms($2) }
		$1 == "99%" { p99 = ms($2) }
		END { printf "%s %.3f %.3f\n", rps, p50, p99 }' <<<"$out"
}

# ---------------------------------------------------------------- build
build() {
	log "building ron"
	mkdir -p "$WORK/bin"
	(cd "$REPO" && go build -o "$WORK/bin/ron" .) || die "go build failed"
	RON_VERSION=$(cd "$REPO" && git rev-parse --short HEAD 2>/dev/null || echo unknown)
	[[ -z $(cd "$REPO" && git status --porcelain 2>/dev/null | grep -v '^??' | head -1) ]] || RON_VERSION+="+dirty"
}

# ---------------------------------------------------------------- servers
# start_ron: an amnesia registry (dev signer, genesis only) on $REG_PORT.
start_ron() {
	free_port ADMIN_PORT
	free_port REG_PORT
	LOGS+=("$WORK/ron.log")
	GOMAXPROCS=${HALF:-$(nproc)} "${SRV[@]}" "$WORK/bin/ron" serve --amnesia --roles=registry --data-dir "$WORK/ron" \
		--admin.listen "127.0.0.1:$ADMIN_PORT" --registry.listen "127.0.0.1:$REG_PORT" \
		--log.level warn >"$WORK/ron.log" 2>&1 &
	RON_PID=$!
	PIDS+=("$RON_PID")
	wait_http "http://127.0.0.1:$ADMIN_PORT/readyz" || die "ron did not become ready"
	RON_URL="http://127.0.0.1:$REG_PORT/registry/head"
	mkdir -p "$WORK/www/registry"
	curl -fsS -o "$WORK/www/registry/head" "$RON_URL" || die "GET /registry/head failed"
	grep -q '"payload_b3":"b3:' "$WORK/www/registry/head" || die "unexpected head: $(cat "$WORK/www/registry/head")"
	HEAD_BYTES=$(stat -c %s "$WORK/www/registry/head")
}

# start_nginx: nginx on $NGINX_PORT serving the head bytes as a static file
# at the same path, as application/json.
start_nginx() {
	free_port NGINX_PORT
	NGINX=$(command -v nginx || echo /usr/sbin/nginx)
	# nginx workers run unprivileged: let them reach the file.
	chmod 711 "$WORK"
	chmod 755 "$WORK/www" "$WORK/www/registry"
	chmod 644 "$WORK/www/registry/head"
	nginx_static_conf "$WORK/nginx" "$NGINX_PORT" "$WORK/www" "$BENCH_NGINX_WORKERS" "default_type application/json;"
	LOGS+=("$WORK/nginx/error.log")
	"${SRV[@]}" "$NGINX" -c "$WORK/nginx/nginx.conf" -p "$WORK/nginx" >"$WORK/nginx/stdout.log" 2>&1 &
	PIDS+=("$!")
	NGINX_URL="http://127.0.0.1:$NGINX_PORT/registry/head"
	wait_http "$NGINX_URL" || die "nginx did not start or serve"
	cmp -s <(curl -fsS "$NGINX_URL") "$WORK/www/registry/head" || die "nginx serves other bytes"
	cmp -s <(curl -fsS "$RON_URL") "$WORK/www/registry/head" || die "ron's head changed"
}

# ---------------------------------------------------------------- B1
bench_head() {
	declare -gA RPS P50 P99
	local i srv res rps p50 p99 url
	log "warm-up: wrk $BENCH_WARMUP per server"
	wrk_run "$RON_URL" "$BENCH_WARMUP" >/dev/null
	wrk_run "$NGINX_URL" "$BENCH_WARMUP" >/dev/null
	log "B1 GET /registry/head: ron vs nginx, wrk --latency -t$BENCH_THREADS -c$BENCH_CONNS -d$BENCH_DURATION ×$BENCH_REPEAT"
	for ((i = 1; i <= BENCH_REPEAT; i++)); do
		for srv in $( ((i % 2)) && echo "ron nginx" || echo "nginx ron"); do
			url=$RON_URL
			[[ $srv == nginx ]] && url=$NGINX_URL
			res=$(wrk_run "$url" "$BENCH_DURATION")
			read -r rps p50 p99 <<<"$res"
			RPS[$srv]+=" $rps" P50[$srv]+=" $p50" P99[$srv]+=" $p99"
			log "  round $i $srv: $rps req/s, p50 $p50 ms, p99 $p99 ms"
		done
	done
	RON_HWM=$(awk '/VmHWM/ {printf "%.0f", $2/1024}' "/proc/$RON_PID/status")
	RON_CPU=$(awk '{printf "%.1f", ($14 + $15) / '"$(getconf CLK_TCK)"'}' "/proc/$RON_PID/stat")
}

# ---------------------------------------------------------------- report
report() {
	local r n p q rp np
	# shellcheck disable=SC2086
	r=$(median ${RPS[ron]}) n=$(median ${RPS[nginx]}) p=$(median ${P99[ron]}) np=$(median ${P99[nginx]})
	# shellcheck disable=SC2086
	rp=$(median ${P50[ron]})
	q=$(ratio "$r" "$n")
	echo "## ron registry benchmark B1"
	echo
	echo "$(date -u +%Y-%m-%dT%H:%MZ), ron $RON_VERSION, $(nproc) cores, Linux $(uname -r), $(go version | cut -d' ' -f3)," \
		"$(wrk -v 2>&1 | head -1 | cut -d' ' -f1-2), nginx $("$NGINX" -v 2>&1 | sed 's/.*nginx\///') with $BENCH_NGINX_WORKERS workers;" \
		"wrk --latency -t$BENCH_THREADS -c$BENCH_CONNS -d$BENCH_DURATION, median of $BENCH_REPEAT rounds per server; $PIN_NOTE."
	echo
	echo "| benchmark | ron | nginx | ron/nginx | goal | met |"
	echo "| --- | ---: | ---: | ---: | ---: | :---: |"
	echo "| GET /registry/head, $HEAD_BYTES-byte body (req/s) | $(fmt "$r") | $(fmt "$n") | $q | ≥ 20000 | $(pass "$r" 20000 '>=') |"
	echo "| p99 latency (ms) | $(fmt "$p" 2) | $(fmt "$np" 2) | — | < 5 | $(pass "$p" 5 '<') |"
	echo
	echo "Details:"
	echo
	echo "- req/s per round: ron${RPS[ron]}; nginx${RPS[nginx]}"
	echo "- p50 ms per round: ron${P50[ron]} (median $(fmt "$rp" 3)); nginx${P50[nginx]}"
	echo "- p99 ms per round: ron${P99[ron]}; nginx${P99[nginx]}"
	echo "- ron after the runs: VmHWM $RON_HWM MiB, CPU time ${RON_CPU} s"
	echo "- load average: at start $LOAD_START, at end $(cut -d' ' -f1-3 /proc/loadavg)"
}

# ---------------------------------------------------------------- main
need_tools wrk=wrk "nginx|/usr/sbin/nginx=nginx-light" curl=curl taskset=util-linux
LOAD_START=$(cut -d' ' -f1-3 /proc/loadavg)
busy=$(ps -eo pcpu=,comm= --sort=-pcpu | awk '$1 > 20 {printf "%s(%s%%) ", $2, $1}')
[[ -z $busy ]] || log "warning: busy processes before the run: $busy"
log "load average at start: $LOAD_START"
build
start_ron
start_nginx
bench_head
report
log "done"
