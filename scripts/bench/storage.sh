#!/usr/bin/env bash
# Storage benchmarks of ron (docs/storage.md §11), reported as ratios against
# reference tools measured in the same run on the same machine:
#
#   1. GET of a 4 KiB and a 1 MiB object: wrk against ron (/o/b3:…) and against
#      nginx serving the same bytes as static files (same threads/connections/
#      duration), interleaved, BENCH_REPEAT times; medians and ron/nginx.
#   2. Durable PUT of a BENCH_PUT_MIB file to the fs engine vs
#      `dd if=FILE of=<data dir>/x bs=1M conv=fsync` on the same disk.
#   3. Amnesia (memory engine) PUT of the same file vs `b3sum --no-mmap FILE`
#      (single-threaded streaming hash); multi-threaded `b3sum` alongside.
#   4. Peak RSS (VmHWM) of a fresh fs-engine ron while a BENCH_RSS_MIB object
#      streams in and then out (GET to /dev/null).
#
# Usage: scripts/bench/storage.sh            (full run, ~5 minutes on 2 cores)
#        BENCH_DURATION=3s BENCH_REPEAT=1 BENCH_PUT_REPEAT=1 \
#        BENCH_PUT_MIB=256 BENCH_RSS_MIB=512 scripts/bench/storage.sh   (smoke run)
#
# The markdown table goes to stdout, progress to stderr. Everything it starts
# and creates is removed on exit. Tools (wrk, nginx, b3sum) are installed with
# apt-get when missing.
set -euo pipefail

BENCH_DURATION=${BENCH_DURATION:-10s}   # wrk -d
BENCH_THREADS=${BENCH_THREADS:-2}       # wrk -t
BENCH_CONNS=${BENCH_CONNS:-32}          # wrk -c
BENCH_REPEAT=${BENCH_REPEAT:-5}         # GET pairs per size
BENCH_PUT_REPEAT=${BENCH_PUT_REPEAT:-3} # PUT / dd / b3sum runs
BENCH_PUT_MIB=${BENCH_PUT_MIB:-1024}    # PUT object size
BENCH_RSS_MIB=${BENCH_RSS_MIB:-4096}    # RSS object size
BENCH_NGINX_WORKERS=${BENCH_NGINX_WORKERS:-2}

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# shellcheck source=scripts/bench/lib.sh
source "$REPO/scripts/bench/lib.sh"
LOGS=()

# ---------------------------------------------------------------- tools
need_tools wrk=wrk "nginx|/usr/sbin/nginx=nginx-light" b3sum=b3sum curl=curl
NGINX=$(command -v nginx || echo /usr/sbin/nginx)

# ---------------------------------------------------------------- temp dir
# Data dirs must be on the same disk as the repo (the dd reference writes
# there too). Use /tmp when it is on the repo's file system, else the repo.
if [[ $(stat -c %d /tmp) == "$(stat -c %d "$REPO")" ]]; then
	bench_workdir "$(mktemp -d /tmp/ron-bench.XXXXXX)"
else
	bench_workdir "$(mktemp -d "$REPO/.ron-bench.XXXXXX")"
fi

# ---------------------------------------------------------------- helpers
now() { echo "$EPOCHREALTIME"; }
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.6f", b-a }'; }
mbps() { awk -v n="$1" -v s="$2" 'BEGIN { printf "%.1f", n/s/1e6 }'; } # bytes, seconds → MB/s

RON=$WORK/ron
RON_PID=
RON_ADMIN=
RON_STORE=
RON_TOKEN=
# start_ron NAME [extra flags…]: starts ron with data under $WORK/NAME.
start_ron() {
	local name=$1
	shift
	free_port RON_ADMIN
	free_port RON_STORE
	mkdir -p "$WORK/$name"
	RON_LOG=$WORK/$name/ron.log
	LOGS=("$RON_LOG")
	"$RON" serve --data-dir "$WORK/$name/data" --admin.listen "127.0.0.1:$RON_ADMIN" \
		--storage.listen "127.0.0.1:$RON_STORE" --log.level warn "$@" \
		>"$WORK/$name/ron.log" 2>&1 &
	RON_PID=$!
	PIDS+=("$RON_PID")
	wait_http "http://127.0.0.1:$RON_ADMIN/readyz" ||
		{ cat "$WORK/$name/ron.log" >&2; die "ron ($name) did not become ready"; }
	local out
	if [[ " $* " == *" --amnesia "* ]]; then
		out=$(curl -fsS -XPOST "http://127.0.0.1:$RON_ADMIN/api/v1/tokens" \
			-d '{"scopes":["storage:write","storage:admin"],"ttl":"1h"}')
		RON_TOKEN=$(sed -n 's/.*"token":"\([^"]*\)".*/\1/p' <<<"$out")
	else
		# `ron token mint` prints the token on stderr (see RESULTS.md): take
		# the last line of either stream.
		out=$("$RON" token mint --scope storage:write,storage:admin --data-dir "$WORK/$name/data" 2>&1)
		RON_TOKEN=$(tail -n1 <<<"$out")
	fi
	[[ -n $RON_TOKEN ]] || die "no token for ron ($name): $out"
}
stop_ron() { stop_pid "$RON_PID"; }

# put FILE → prints "<http_code> <seconds> <response body>"
put() {
	: >"$WORK/put.out"
	curl -sS -XPOST -T "$1" -H "Authorization: Bearer $RON_TOKEN" \
		-H 'Content-Type: application/octet-stream' -H 'Expect:' \
		-o "$WORK/put.out" -w '%{http_code} %{time_total}' \
		"http://127.0.0.1:$RON_STORE/o" 2>>"$WORK/curl.err" || true
	printf ' %s' "$(cat "$WORK/put.out")"
}
# put_timed FILE ID → seconds of a PUT that must create object ID. When the
# response is lost but the object is there (ron drops the answer of uploads
# longer than its 5 s server WriteTimeout, see RESULTS.md) the time is kept,
# a warning is logged and counted in $WORK/lost.
put_timed() {
	local r code
	r=$(put "$1")
	code=${r%% *}
	if [[ $code != 201 ]]; then
		[[ $code == 000 ]] && head_ok "$2" || die "PUT $1: $r ($(tail -n1 "$WORK/curl.err" 2>/dev/null))"
		log "warning: PUT of $1 lost its response ($(tail -n1 "$WORK/curl.err")), but the object is stored"
		echo $(($(cat "$WORK/lost" 2>/dev/null || echo 0) + 1)) >"$WORK/lost"
	fi
	[[ $code != 201 || $r == *"\"cid\":\"$2\""* ]] || die "PUT $1: unexpected id: $r"
	awk '{print $2}' <<<"$r"
}
head_ok() { [[ $(curl -sS -o /dev/null -w '%{http_code}' -I "http://127.0.0.1:$RON_STORE/o/$1") == 200 ]]; }
delete_obj() {
	local code
	code=$(curl -sS -o /dev/null -w '%{http_code}' -XDELETE -H "Authorization: Bearer $RON_TOKEN" \
		"http://127.0.0.1:$RON_STORE/o/$1")
	[[ $code == 20? ]] || die "DELETE $1: $code"
}
b3id() { echo "b3:$(b3sum --no-names "$1")"; }
# mutate FILE N: overwrite the first 16 bytes so every run uploads a new
# object (a repeated upload of a held id is not a durable write) while the
# file stays in the page cache.
mutate() { printf 'ron-bench-%06d' "$2" | dd of="$1" bs=16 count=1 conv=notrunc status=none; }

# wrk_rps URL → prints "<requests/s> <MB/s>"; dies on errors or non-2xx.
wrk_run() {
	local out
	out=$(wrk -t"$BENCH_THREADS" -c"$BENCH_CONNS" -d"$BENCH_DURATION" "$1" 2>&1) || die "wrk $1: $out"
	if grep -qE 'Non-2xx|Socket errors' <<<"$out"; then
		log "wrk reported errors for $1:"
		grep -E 'Non-2xx|Socket errors' <<<"$out" >&2
		[[ ${BENCH_ALLOW_ERRORS:-0} == 1 ]] || die "wrk errors (set BENCH_ALLOW_ERRORS=1 to go on)"
	fi
	local rps tr
	rps=$(awk '/^Requests\/sec:/ {print $2}' <<<"$out")
	tr=$(awk '/^Transfer\/sec:/ {v=$2; u=substr(v, length(v)-1); n=substr(v, 1, length(v)-2);
		m = (u=="GB") ? 1024 : (u=="MB") ? 1 : (u=="KB") ? 1/1024 : 1/1048576; printf "%.1f", n*m*1.048576}' <<<"$out")
	echo "$rps $tr"
}

# ---------------------------------------------------------------- quiet?
# Everything here shares the CPUs with ron: a busy machine skews the ratios.
LOAD_START=$(cut -d' ' -f1-3 /proc/loadavg)
busy=$(ps -eo pcpu=,comm= --sort=-pcpu | awk '$1 > 20 {printf "%s(%s%%) ", $2, $1}')
[[ -z $busy ]] || log "warning: busy processes before the run: $busy"
log "load average at start: $LOAD_START"

# ---------------------------------------------------------------- build
log "building ron"
(cd "$REPO" && go build -o "$RON" .) || die "go build failed"
RON_VERSION=$(cd "$REPO" && git rev-parse --short HEAD 2>/dev/null || echo unknown)
[[ -z $(cd "$REPO" && git status --porcelain 2>/dev/null | grep -v '^??' | head -1) ]] || RON_VERSION+="+dirty"

# ---------------------------------------------------------------- inputs
log "creating input files (4 KiB, 1 MiB, ${BENCH_PUT_MIB} MiB, ${BENCH_RSS_MIB} MiB)"
mkdir -p "$WORK/www" "$WORK/in"
# nginx workers run unprivileged: let them reach the static files.
chmod 711 "$WORK"
chmod 755 "$WORK/www"
head -c 4096 /dev/urandom >"$WORK/www/4k"
head -c 1048576 /dev/urandom >"$WORK/www/1m"
chmod 644 "$WORK/www/4k" "$WORK/www/1m"
head -c $((BENCH_PUT_MIB << 20)) /dev/urandom >"$WORK/in/put"
PUT_BYTES=$((BENCH_PUT_MIB << 20))

# ---------------------------------------------------------------- 1. GET
log "1/4 GET: ron (fs engine) vs nginx, wrk -t$BENCH_THREADS -c$BENCH_CONNS -d$BENCH_DURATION ×$BENCH_REPEAT"
start_ron get
GET_PID=$RON_PID
declare -A ID
for f in 4k 1m; do
	r=$(put "$WORK/www/$f")
	[[ ${r%% *} == 20[01] ]] || die "PUT $f: $r"
	ID[$f]=$(sed -n 's/.*"cid":"\(b3:[0-9a-f]*\)".*/\1/p' <<<"$r")
	[[ ${ID[$f]} == "b3:$(b3sum --no-names "$WORK/www/$f")" ]] || die "id mismatch for $f: $r"
done

free_port NGINX_PORT
nginx_static_conf "$WORK/nginx" "$NGINX_PORT" "$WORK/www" "$BENCH_NGINX_WORKERS" \
	"tcp_nopush on; default_type application/octet-stream;"
"$NGINX" -c "$WORK/nginx/nginx.conf" -p "$WORK/nginx" >"$WORK/nginx/stdout.log" 2>&1 &
PIDS+=("$!")
wait_http "http://127.0.0.1:$NGINX_PORT/4k" || { tail -n5 "$WORK/nginx/"*.log >&2; die "nginx did not start or serve"; }
cmp -s <(curl -fsS "http://127.0.0.1:$NGINX_PORT/1m") "$WORK/www/1m" || die "nginx serves wrong bytes"
cmp -s <(curl -fsS "http://127.0.0.1:$RON_STORE/o/${ID[1m]}") "$WORK/www/1m" || die "ron serves wrong bytes"

declare -A RPS MBS
for f in 4k 1m; do RPS[ron.$f]=; RPS[nginx.$f]=; MBS[ron.$f]=; MBS[nginx.$f]=; done
for ((i = 1; i <= BENCH_REPEAT; i++)); do
	for f in 4k 1m; do
		order=(ron nginx)
		((i % 2 == 0)) && order=(nginx ron)
		for srv in "${order[@]}"; do
			if [[ $srv == ron ]]; then url="http://127.0.0.1:$RON_STORE/o/${ID[$f]}"; else url="http://127.0.0.1:$NGINX_PORT/$f"; fi
			res=$(wrk_run "$url")
			read -r rps mb <<<"$res"
			RPS[$srv.$f]+=" $rps"
			MBS[$srv.$f]+=" $mb"
			log "  run $i $f $srv: $rps req/s, $mb MB/s"
		done
	done
done
GET_HWM=$(awk '/VmHWM/ {printf "%.0f", $2/1024}' "/proc/$GET_PID/status")
stop_ron

# ---------------------------------------------------------------- 2. fs PUT vs dd
log "2/4 durable PUT ${BENCH_PUT_MIB} MiB (fs engine) vs dd conv=fsync ×$BENCH_PUT_REPEAT"
start_ron put
cat "$WORK/in/put" >/dev/null # warm the page cache for both
FS_T=() DD_T=()
# ext4 here may be mounted with discard on a virtual disk whose host caches
# writes: a burst is absorbed far faster than sustained writing, and deleting
# a file hands its blocks back. So both writers get the same treatment: each
# result is deleted right after its run, then sync and a pause; the order
# alternates. BENCH_PUT_KEEP=1 keeps every result instead (sustained regime).
settle() { sync; sleep "${BENCH_SETTLE:-2}"; }
fs_put_run() {
	local t
	t=$(put_timed "$WORK/in/put" "$PUT_ID")
	FS_T+=("$t")
	log "  run $i ron fs PUT: ${t}s = $(mbps "$PUT_BYTES" "$t") MB/s"
	[[ ${BENCH_PUT_KEEP:-0} == 1 ]] || delete_obj "$PUT_ID"
	settle
}
dd_run() {
	local t t0 out="$WORK/put/data/x$i"
	t0=$(now)
	dd if="$WORK/in/put" of="$out" bs=1M conv=fsync status=none
	t=$(elapsed "$t0" "$(now)")
	DD_T+=("$t")
	log "  run $i dd conv=fsync: ${t}s = $(mbps "$PUT_BYTES" "$t") MB/s"
	[[ ${BENCH_PUT_KEEP:-0} == 1 ]] || rm -f "$out"
	settle
}
for ((i = 1; i <= BENCH_PUT_REPEAT; i++)); do
	mutate "$WORK/in/put" "$i"
	PUT_ID=$(b3id "$WORK/in/put")
	settle
	if ((i % 2)); then fs_put_run; dd_run; else dd_run; fs_put_run; fi
done
rm -f "$WORK/put/data/x"*
stop_ron
rm -rf "$WORK/put"

# ---------------------------------------------------------------- 3. amnesia PUT vs b3sum
log "3/4 amnesia PUT ${BENCH_PUT_MIB} MiB vs b3sum --no-mmap ×$BENCH_PUT_REPEAT"
start_ron mem --amnesia --storage.memory-max-bytes "$(((BENCH_PUT_REPEAT + 1) * BENCH_PUT_MIB + 64))MiB"
MEM_T=() B3_T=() B3MT_T=()
for ((i = 1; i <= BENCH_PUT_REPEAT; i++)); do
	mutate "$WORK/in/put" "$((100 + i))"
	t=$(put_timed "$WORK/in/put" "$(b3id "$WORK/in/put")")
	MEM_T+=("$t")
	log "  run $i ron amnesia PUT: ${t}s = $(mbps "$PUT_BYTES" "$t") MB/s"
	t0=$(now)
	b3sum --no-mmap "$WORK/in/put" >/dev/null
	t=$(elapsed "$t0" "$(now)")
	B3_T+=("$t")
	log "  run $i b3sum --no-mmap: ${t}s = $(mbps "$PUT_BYTES" "$t") MB/s"
	t0=$(now)
	b3sum "$WORK/in/put" >/dev/null
	t=$(elapsed "$t0" "$(now)")
	B3MT_T+=("$t")
	log "  run $i b3sum (mmap, $(nproc) threads): ${t}s = $(mbps "$PUT_BYTES" "$t") MB/s"
done
stop_ron
rm -f "$WORK/in/put"

# ---------------------------------------------------------------- 4. RSS
log "4/4 peak RSS while a ${BENCH_RSS_MIB} MiB object streams in and out (fresh fs-engine ron)"
head -c $((BENCH_RSS_MIB << 20)) /dev/urandom >"$WORK/in/big"
BIG_ID=$(b3id "$WORK/in/big")
start_ron rss
RSS_PID=$RON_PID
RSS_IDLE=$(awk '/VmHWM/ {printf "%.1f", $2/1024}' "/proc/$RSS_PID/status")
# sample VmRSS too, to see the shape (VmHWM is the authoritative peak)
(while kill -0 "$RSS_PID" 2>/dev/null; do awk '/VmRSS/ {print $2}' "/proc/$RSS_PID/status" 2>/dev/null; sleep 0.2; done >"$WORK/rss.samples") &
SAMPLER=$!
PIDS+=("$SAMPLER")
BIG_PUT_T=$(put_timed "$WORK/in/big" "$BIG_ID")
RSS_AFTER_PUT=$(awk '/VmHWM/ {printf "%.1f", $2/1024}' "/proc/$RSS_PID/status")
res=$(curl -sS -o /dev/null -w '%{http_code} %{time_total} %{size_download}' "http://127.0.0.1:$RON_STORE/o/$BIG_ID")
read -r code BIG_GET_T size <<<"$res"
[[ $code == 200 && $size == $((BENCH_RSS_MIB << 20)) ]] || die "GET big: $code, $size bytes"
RSS_PEAK=$(awk '/VmHWM/ {printf "%.1f", $2/1024}' "/proc/$RSS_PID/status")
stop_pid "$SAMPLER"
RSS_SAMPLED=$(sort -n "$WORK/rss.samples" | tail -1 | awk '{printf "%.1f", $1/1024}')
stop_ron

# ---------------------------------------------------------------- report

echo "## ron storage benchmarks"
echo
echo "$(date -u +%Y-%m-%dT%H:%MZ), ron $RON_VERSION, $(nproc) cores, Linux $(uname -r);" \
	"wrk -t$BENCH_THREADS -c$BENCH_CONNS -d$BENCH_DURATION, median of $BENCH_REPEAT (GET) / $BENCH_PUT_REPEAT (PUT);" \
	"nginx $("$NGINX" -v 2>&1 | sed 's/.*nginx\///') with $BENCH_NGINX_WORKERS workers, $(b3sum --version)."
echo
echo "| benchmark | ron | reference | ron / reference | target | met |"
echo "| --- | ---: | ---: | ---: | ---: | :---: |"
for f in 4k 1m; do
	label=$([[ $f == 4k ]] && echo "4 KiB" || echo "1 MiB")
	# shellcheck disable=SC2086
	r=$(median ${RPS[ron.$f]})
	# shellcheck disable=SC2086
	n=$(median ${RPS[nginx.$f]})
	# shellcheck disable=SC2086
	rm_=$(median ${MBS[ron.$f]})
	# shellcheck disable=SC2086
	nm=$(median ${MBS[nginx.$f]})
	q=$(ratio "$r" "$n")
	echo "| GET $label (req/s; MB/s) | $(fmt "$r") ($(fmt "$rm_") MB/s) | nginx $(fmt "$n") ($(fmt "$nm") MB/s) | $q | ≥ 0.70 | $(pass "$q" 0.7 '>=') |"
done
fs=$(mbps "$PUT_BYTES" "$(median "${FS_T[@]}")")
dd=$(mbps "$PUT_BYTES" "$(median "${DD_T[@]}")")
q=$(ratio "$fs" "$dd")
echo "| durable PUT ${BENCH_PUT_MIB} MiB, fs engine (MB/s) | $fs | dd conv=fsync $dd | $q | ≥ 0.80 | $(pass "$q" 0.8 '>=') |"
mem=$(mbps "$PUT_BYTES" "$(median "${MEM_T[@]}")")
b3=$(mbps "$PUT_BYTES" "$(median "${B3_T[@]}")")
b3mt=$(mbps "$PUT_BYTES" "$(median "${B3MT_T[@]}")")
q=$(ratio "$mem" "$b3")
echo "| amnesia PUT ${BENCH_PUT_MIB} MiB (MB/s) | $mem | b3sum --no-mmap $b3 | $q | ≥ 0.50 | $(pass "$q" 0.5 '>=') |"
echo "| (alongside) multi-threaded b3sum (MB/s) | $mem | b3sum $b3mt | $(ratio "$mem" "$b3mt") | — | — |"
echo "| peak RSS, ${BENCH_RSS_MIB} MiB in then out (MiB) | $RSS_PEAK | — | — | < 200 | $(pass "$RSS_PEAK" 200 '<') |"
echo
echo "Details:"
echo
for f in 4k 1m; do
	echo "- GET $f req/s per run: ron${RPS[ron.$f]}; nginx${RPS[nginx.$f]}"
done
echo "- fs PUT seconds: ${FS_T[*]}; dd seconds: ${DD_T[*]}"
echo "- amnesia PUT seconds: ${MEM_T[*]}; b3sum --no-mmap seconds: ${B3_T[*]}; b3sum seconds: ${B3MT_T[*]}"
echo "- RSS (VmHWM, MiB): after start $RSS_IDLE, after PUT $RSS_AFTER_PUT, after GET $RSS_PEAK (max sampled VmRSS $RSS_SAMPLED);" \
	"${BENCH_RSS_MIB} MiB PUT $(mbps $((BENCH_RSS_MIB << 20)) "$BIG_PUT_T") MB/s, GET $(mbps $((BENCH_RSS_MIB << 20)) "$BIG_GET_T") MB/s"
echo "- VmHWM of the GET-benchmark ron after all wrk runs: $GET_HWM MiB"
echo "- load average: at start $LOAD_START, at end $(cut -d' ' -f1-3 /proc/loadavg)"
LOST_PUTS=$(cat "$WORK/lost" 2>/dev/null || echo 0)
((LOST_PUTS == 0)) || echo "- **$LOST_PUTS PUT(s) lost their response** although the object was stored (uploads longer than ron's 5 s server WriteTimeout); their time is still counted."
log "done"
