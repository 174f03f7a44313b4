#!/usr/bin/env bash
# Edge benchmarks of ron (docs/edge.md §14 "Benchmarks"), measured in one run
# on one machine against Debian nginx on loopback serving the same bytes:
#
#   1. tiles: warm tile hits. One ron (--roles edge,storage) mounts
#      stamen_toner_z3 as pack "toner"; nginx serves the same 85 tiles
#      (extracted with ron's own reader by tiledump) as static files with the
#      same Content-Type. wrk cycles through all 85 tile URLs (a Lua script),
#      alternating ron and nginx WRK_REPEAT times; medians, ron/nginx
#      (goal ≥ 0.70).
#   2. objects: warm /o hits of an OBJECT_KIB (64) KiB object put into the
#      co-located storage and filled into the edge cache, vs nginx serving
#      the same file (goal ≥ 0.80).
#   3. latency: tile hits (8 tiles, LOAD_RATE/8 req/s each) and /o hits at
#      LOAD_RATE (400) req/s open loop for LOAD_DURATION (30) s, latency from
#      each request's scheduled send time (openloop); ron's p99 (goal < 5 ms),
#      nginx's as the reference.
#   4. ready: process start → /readyz 200 of `ron serve --amnesia --roles
#      edge` with every valid fixture of testdata/ mounted (basic
#      verification), READY_REPEAT times (readytime); median (goal < 300 ms)
#      and max. Then the packs Go benchmark (go test -bench PACKS_BENCH
#      ./roles/edge/packs) when the package has one.
#
# Usage: scripts/bench/edge.sh                 (full run, about 8 minutes)
#        DURATION=5 scripts/bench/edge.sh      (smoke run: every wrk/openloop run 5 s)
#        PARTS="tiles ready" scripts/bench/edge.sh
#        AMNESIA=1 scripts/bench/edge.sh       (edge cache in memory instead of on disk)
#
# Durations are whole seconds. DURATION, when set, is the default of
# WRK_DURATION and LOAD_DURATION (and shortens WARMUP). ron runs with its
# data dir under the scratch directory (the /o cache on disk) unless
# AMNESIA=1; nginx with NGINX_WORKERS (nproc) workers, sendfile and no
# access log. The Markdown report goes to stdout, progress to stderr.
# Everything it starts and creates is removed on exit. wrk, nginx, curl and
# jq are installed with apt-get when missing.
set -euo pipefail

WRK_DURATION=${WRK_DURATION:-${DURATION:-20}}   # wrk -d, seconds
WRK_REPEAT=${WRK_REPEAT:-3}                     # alternating wrk pairs
WRK_THREADS=${WRK_THREADS:-2}                   # wrk -t
WRK_CONNS=${WRK_CONNS:-64}                      # wrk -c
OBJECT_KIB=${OBJECT_KIB:-64}                    # object of parts 2 and 3
LOAD_DURATION=${LOAD_DURATION:-${DURATION:-30}} # measured part of each openloop run, seconds
LOAD_RATE=${LOAD_RATE:-400}                     # open-loop req/s of part 3
if [[ -n ${DURATION:-} ]]; then
	WARMUP=${WARMUP:-$((DURATION >= 10 ? 5 : 1))}
else
	WARMUP=${WARMUP:-5}
fi
READY_REPEAT=${READY_REPEAT:-10}
NGINX_WORKERS=${NGINX_WORKERS:-$(nproc)}
PACKS_BENCH=${PACKS_BENCH:-Mount}
AMNESIA=${AMNESIA:-0}
PARTS=${PARTS:-tiles objects latency ready}

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# shellcheck source=scripts/bench/lib.sh
source "$REPO/scripts/bench/lib.sh"
LOGS=()

for v in WRK_DURATION WRK_REPEAT WRK_THREADS WRK_CONNS OBJECT_KIB LOAD_DURATION LOAD_RATE READY_REPEAT NGINX_WORKERS; do
	[[ ${!v} =~ ^[1-9][0-9]*$ ]] || die "$v=${!v}: want a positive whole number"
done
[[ $WARMUP =~ ^[0-9]+$ ]] || die "WARMUP=$WARMUP: want a whole number of seconds"
[[ $AMNESIA == 0 || $AMNESIA == 1 ]] || die "AMNESIA=$AMNESIA: want 0 or 1"
for p in $PARTS; do [[ $p =~ ^(tiles|objects|latency|ready)$ ]] || die "PARTS: unknown part $p"; done
want() { [[ " $PARTS " == *" $1 "* ]]; }

bench_workdir "$(mktemp -d /tmp/ron-bench-edge.XXXXXX)"
BIN=$WORK/bin
TESTDATA=$REPO/testdata
[[ -d $TESTDATA/pmtiles ]] || die "$TESTDATA/pmtiles missing: run from a complete checkout"
# The valid fixtures (docs/edge.md §14): each mounts under basic verification.
PMTILES_OK=(stamen_toner_z3 test_fixture_1 test_fixture_2 test_fixture_mlt)
MBTILES_OK=(world_cities zoomed_world_cities geography-class-png uncompressed_mvt webp json bad_hash)

# ---------------------------------------------------------------- commands
# The report lists every load and server command as run, with the scratch
# directory replaced by $WORK and the tools' folder dropped.
CMDS=()
quote_arg() {
	if [[ $1 =~ ^[A-Za-z0-9_./:=,@%+-]+$ ]]; then printf '%s' "$1"; else printf "'%s'" "${1//\'/\'\\\'\'}"; fi
}
record() {
	local line="" a
	for a in "$@"; do line+="${line:+ }$(quote_arg "$a")"; done
	line=${line//"$BIN/"/}
	CMDS+=("${line//"$WORK"/\$WORK}")
}

# ---------------------------------------------------------------- build
build() {
	log "building ron, openloop, tiledump, readytime"
	mkdir -p "$BIN"
	(cd "$REPO" && go build -o "$BIN/ron" . &&
		go build -o "$BIN/" ./scripts/bench/cmd/openloop ./scripts/bench/cmd/tiledump ./scripts/bench/cmd/readytime) ||
		die "go build failed"
	RON_VERSION=$(cd "$REPO" && git rev-parse --short HEAD 2>/dev/null || echo unknown)
	[[ -z $(cd "$REPO" && git status --porcelain 2>/dev/null | grep -v '^??' | head -1) ]] || RON_VERSION+="+dirty"
}

# ---------------------------------------------------------------- servers
# start_edge: ron with the edge and storage roles, pack "toner" mounted;
# sets ADMIN, EDGE, STORE and EDGE_PID.
start_edge() {
	free_port ADMIN
	free_port EDGE
	free_port STORE
	mkdir -p "$WORK/packs"
	cp "$TESTDATA/pmtiles/stamen_toner_z3.pmtiles" "$WORK/packs/toner.pmtiles"
	cat >"$WORK/edge.toml" <<-TOML
		[edge]
		packs_dir = "$WORK/packs"
	TOML
	local amnesia=()
	[[ $AMNESIA == 0 ]] || amnesia=(--amnesia)
	local cmd=("$BIN/ron" serve "${amnesia[@]}" --roles "edge,storage" --data-dir "$WORK/ron" --config "$WORK/edge.toml"
		--admin.listen "127.0.0.1:$ADMIN" --edge.listen "127.0.0.1:$EDGE" --storage.listen "127.0.0.1:$STORE" --log.level warn)
	LOGS+=("$WORK/ron.log")
	record "${cmd[@]}"
	"${cmd[@]}" >"$WORK/ron.log" 2>&1 &
	EDGE_PID=$!
	PIDS+=("$EDGE_PID")
	wait_http "http://127.0.0.1:$ADMIN/readyz" || die "ron did not become ready"
}

# put_object FILE prints the id storage gives FILE.
put_object() {
	local out code
	out=$(curl -sS -XPOST --data-binary @"$1" -H "Authorization: Bearer $(token "$ADMIN" storage:write)" \
		-H 'Content-Type: application/octet-stream' -w '\n%{http_code}' "http://127.0.0.1:$STORE/o") || die "PUT failed"
	code=${out##*$'\n'}
	[[ $code == 20[01] ]] || die "PUT: $code ${out%$'\n'*}"
	out=$(sed -n 's/.*"cid":"\(b3:[0-9a-f]*\)".*/\1/p' <<<"$out")
	[[ -n $out ]] || die "PUT: no cid"
	echo "$out"
}

# prepare_content: the tiles (tiledump) and the object under $WORK/www for
# nginx; the object put into storage and filled into the edge cache. Sets
# OBJ_ID and TILE_PATHS.
prepare_content() {
	mkdir -p "$WORK/www/o"
	TILE_PATHS=$WORK/tile-paths.txt
	record "$BIN/tiledump" -archive "$WORK/packs/toner.pmtiles" -out "$WORK/www/tiles/toner" -prefix /tiles/toner -list "$TILE_PATHS"
	"$BIN/tiledump" -archive "$WORK/packs/toner.pmtiles" -out "$WORK/www/tiles/toner" -prefix /tiles/toner \
		-list "$TILE_PATHS" >&2 || die "tiledump failed"
	head -c $((OBJECT_KIB * 1024)) /dev/urandom >"$WORK/object"
	OBJ_ID=$(put_object "$WORK/object")
	cp "$WORK/object" "$WORK/www/o/$OBJ_ID"
	# nginx workers run unprivileged: let them reach the static files.
	chmod 711 "$WORK"
	find "$WORK/www" -type d -exec chmod 755 {} +
	find "$WORK/www" -type f -exec chmod 644 {} +
	local cs
	cs=$(curl -fsS -o /dev/null -D - "http://127.0.0.1:$EDGE/o/$OBJ_ID" | tr -d '\r' | sed -n 's/^[Cc]ache-[Ss]tatus: //p')
	[[ $cs == *fwd=miss* ]] || die "first GET /o/$OBJ_ID through the edge: Cache-Status '$cs', want a miss"
	cs=$(curl -fsS -o /dev/null -D - "http://127.0.0.1:$EDGE/o/$OBJ_ID" | tr -d '\r' | sed -n 's/^[Cc]ache-[Ss]tatus: //p')
	[[ $cs == "ron-edge; hit"* ]] || die "second GET /o/$OBJ_ID through the edge: Cache-Status '$cs', want a hit"
}

# start_nginx: nginx on NGINX serving $WORK/www (png as image/png, the rest
# as application/octet-stream).
start_nginx() {
	free_port NGINX
	NGINX_BIN=$(command -v nginx || echo /usr/sbin/nginx)
	nginx_static_conf "$WORK/nginx" "$NGINX" "$WORK/www" "$NGINX_WORKERS" \
		"tcp_nopush on; types { image/png png; } default_type application/octet-stream;"
	LOGS+=("$WORK/nginx/error.log")
	record "$NGINX_BIN" -c "$WORK/nginx/nginx.conf" -p "$WORK/nginx"
	"$NGINX_BIN" -c "$WORK/nginx/nginx.conf" -p "$WORK/nginx" >"$WORK/nginx/stdout.log" 2>&1 &
	PIDS+=("$!")
	wait_http "http://127.0.0.1:$NGINX/o/$OBJ_ID" || die "nginx did not start or serve"
}

# same_answers: every tile and the object are the same bytes with the same
# Content-Type from ron and nginx.
same_answers() {
	local p ct_ron ct_ngx
	while read -r p; do
		cmp -s <(curl -fsS "http://127.0.0.1:$EDGE$p") <(curl -fsS "http://127.0.0.1:$NGINX$p") ||
			die "GET $p: ron and nginx answer different bytes"
	done <"$TILE_PATHS"
	cmp -s <(curl -fsS "http://127.0.0.1:$EDGE/o/$OBJ_ID") "$WORK/object" || die "GET /o/$OBJ_ID: not the object's bytes"
	for p in "$(head -1 "$TILE_PATHS")" "/o/$OBJ_ID"; do
		ct_ron=$(curl -fsS -o /dev/null -w '%{content_type}' "http://127.0.0.1:$EDGE$p")
		ct_ngx=$(curl -fsS -o /dev/null -w '%{content_type}' "http://127.0.0.1:$NGINX$p")
		[[ $ct_ron == "$ct_ngx" ]] || die "GET $p: Content-Type $ct_ron from ron, $ct_ngx from nginx"
	done
	log "all $(wc -l <"$TILE_PATHS") tiles and the object: same bytes and Content-Type from ron and nginx"
}

# ---------------------------------------------------------------- wrk
# The Lua script that cycles through the paths in $TILE_PATHS, each wrk
# thread starting at its own offset.
write_cycle_lua() {
	cat >"$WORK/cycle.lua" <<-'LUA'
		local counter = 0
		function setup(thread)
		  thread:set("id", counter)
		  counter = counter + 1
		end
		function init(args)
		  paths = {}
		  for line in io.lines(os.getenv("TILE_PATHS")) do paths[#paths + 1] = line end
		  i = (id * 37) % #paths
		end
		function request()
		  i = i % #paths + 1
		  return wrk.format(nil, paths[i])
		end
	LUA
}

# wrk_run URL [LUA] → "<req/s> <p99 ms>"; dies on socket errors or non-2xx.
wrk_run() {
	local out script=()
	[[ -z ${2:-} ]] || script=(-s "$2")
	out=$(TILE_PATHS=${TILE_PATHS:-} wrk --latency -t"$WRK_THREADS" -c"$WRK_CONNS" -d"${WRK_DURATION}s" "${script[@]}" "$1" 2>&1) ||
		die "wrk $1: $out"
	if grep -qE 'Non-2xx|Socket errors' <<<"$out"; then
		grep -E 'Non-2xx|Socket errors' <<<"$out" >&2
		[[ ${BENCH_ALLOW_ERRORS:-0} == 1 ]] || die "wrk errors for $1 (set BENCH_ALLOW_ERRORS=1 to go on)"
	fi
	awk 'function ms(v) {
			if (v ~ /us$/) return substr(v, 1, length(v)-2) / 1000
			if (v ~ /ms$/) return substr(v, 1, length(v)-2) + 0
			if (v ~ /s$/)  return substr(v, 1, length(v)-1) * 1000
			return v + 0 }
		/^Requests\/sec:/ { rps = $2 }
		$1 == "99%" { p99 = ms($2) }
		END { printf "%s %.3f\n", rps, p99 }' <<<"$out"
}

# wrk_pairs LABEL PATH [LUA]: WRK_REPEAT runs per server on PATH, the order
# switching every round; appends to RPS[LABEL/ron|nginx], P99[…].
declare -A RPS=() P99=()
wrk_pairs() {
	local label=$1 path=$2 lua=${3:-} i srv res port
	local pre=()
	[[ -z $lua ]] || pre=("TILE_PATHS=$TILE_PATHS")
	for port in "$EDGE" "$NGINX"; do
		if [[ -n $lua ]]; then
			record "${pre[@]}" wrk --latency -t"$WRK_THREADS" -c"$WRK_CONNS" -d"${WRK_DURATION}s" -s "$lua" "http://127.0.0.1:$port$path"
		else
			record wrk --latency -t"$WRK_THREADS" -c"$WRK_CONNS" -d"${WRK_DURATION}s" "http://127.0.0.1:$port$path"
		fi
	done
	for ((i = 1; i <= WRK_REPEAT; i++)); do
		for srv in $( ((i % 2)) && echo "ron nginx" || echo "nginx ron"); do
			port=$EDGE
			[[ $srv == nginx ]] && port=$NGINX
			res=$(wrk_run "http://127.0.0.1:$port$path" "$lua")
			RPS[$label/$srv]+=" ${res% *}"
			P99[$label/$srv]+=" ${res#* }"
			log "  run $i $label $srv: ${res% *} req/s, p99 ${res#* } ms"
		done
	done
}

bench_tiles() {
	log "1 tiles: wrk -t$WRK_THREADS -c$WRK_CONNS -d${WRK_DURATION}s cycling through $(wc -l <"$TILE_PATHS") tiles, ×$WRK_REPEAT per server"
	write_cycle_lua
	wrk_pairs tiles / "$WORK/cycle.lua"
}

bench_objects() {
	log "2 objects: wrk -t$WRK_THREADS -c$WRK_CONNS -d${WRK_DURATION}s GET /o (${OBJECT_KIB} KiB), ×$WRK_REPEAT per server"
	wrk_pairs objects "/o/$OBJ_ID"
}

# ---------------------------------------------------------------- openloop
# openloop NAME ARGS…: runs openloop with ARGS, its summary in $WORK/NAME.json.
openloop() {
	local name=$1
	shift
	record "$BIN/openloop" "$@" -o "$WORK/$name.json"
	"$BIN/openloop" "$@" -o "$WORK/$name.json" 2>"$WORK/$name.brief" ||
		{ cat "$WORK/$name.brief" >&2; die "openloop $name failed"; }
	sed 's/^/  /' "$WORK/$name.brief" >&2
}
jqf() { jq -r "$2" "$WORK/$1.json"; }

# tile_classes PORT prints 8 -class flags, one per tile spread over the
# list, at LOAD_RATE/8 req/s each.
tile_classes() {
	local n i p rate
	n=$(wc -l <"$TILE_PATHS")
	rate=$(awk -v r="$LOAD_RATE" 'BEGIN { printf "%.3f", r / 8 }')
	for i in 0 1 2 3 4 5 6 7; do
		p=$(sed -n "$((i * n / 8 + 1))p" "$TILE_PATHS")
		printf -- '-class\nname=t%d,url=http://127.0.0.1:%s%s,rate=%s\n' "$i" "$1" "$p" "$rate"
	done
}

bench_latency() {
	local flags=(-d "${LOAD_DURATION}s" -warmup "${WARMUP}s" -window "${LOAD_DURATION}s")
	local srv port args
	for srv in ron nginx; do
		port=$EDGE
		[[ $srv == nginx ]] && port=$NGINX
		log "3 latency: $srv tiles at $LOAD_RATE req/s open loop for ${LOAD_DURATION}s after ${WARMUP}s"
		mapfile -t args < <(tile_classes "$port")
		openloop "lat-tiles-$srv" "${flags[@]}" "${args[@]}"
		log "3 latency: $srv /o at $LOAD_RATE req/s open loop for ${LOAD_DURATION}s after ${WARMUP}s"
		openloop "lat-o-$srv" "${flags[@]}" -class "name=o,url=http://127.0.0.1:$port/o/$OBJ_ID,rate=$LOAD_RATE"
	done
}

# ---------------------------------------------------------------- ready
READY_MS=()
bench_ready() {
	local i a e ms
	mkdir -p "$WORK/fixtures"
	for f in "${PMTILES_OK[@]}"; do cp "$TESTDATA/pmtiles/$f.pmtiles" "$WORK/fixtures/"; done
	for f in "${MBTILES_OK[@]}"; do cp "$TESTDATA/mbtiles/$f.mbtiles" "$WORK/fixtures/"; done
	cat >"$WORK/ready.toml" <<-TOML
		[edge]
		packs_dir = "$WORK/fixtures"
		verify_packs = "basic"
	TOML
	log "4 ready: process start → /readyz 200 with $(find "$WORK/fixtures" -type f | wc -l) fixtures mounted, ×$READY_REPEAT"
	LOGS+=("$WORK/ready.log")
	for ((i = 1; i <= READY_REPEAT; i++)); do
		free_port a
		free_port e
		local cmd=("$BIN/readytime" -url "http://127.0.0.1:$a/readyz" -log "$WORK/ready.log" --
			"$BIN/ron" serve --amnesia --roles edge --data-dir "$WORK/ready" --config "$WORK/ready.toml"
			--admin.listen "127.0.0.1:$a" --edge.listen "127.0.0.1:$e" --log.level warn)
		((i > 1)) || record "${cmd[@]}"
		ms=$("${cmd[@]}") || die "readytime run $i failed"
		READY_MS+=("$ms")
		log "  run $i: $ms ms"
	done
	PACKS_OUT=
	if grep -qs "^func Benchmark$PACKS_BENCH" "$REPO"/roles/edge/packs/*_test.go; then
		log "4 ready: go test -run '^\$' -bench $PACKS_BENCH -count 5 ./roles/edge/packs"
		record go test -run '^$' -bench "$PACKS_BENCH" -count 5 ./roles/edge/packs
		PACKS_OUT=$(cd "$REPO" && go test -run '^$' -bench "$PACKS_BENCH" -count 5 ./roles/edge/packs 2>&1) ||
			die "packs benchmark failed: $PACKS_OUT"
	else
		log "4 ready: roles/edge/packs has no Benchmark$PACKS_BENCH; skipped"
	fi
}

# ---------------------------------------------------------------- report
report_wrk() {
	local label=$1 what=$2 goal=$3 r n q
	# shellcheck disable=SC2086
	r=$(median ${RPS[$label/ron]}) n=$(median ${RPS[$label/nginx]})
	q=$(ratio "$r" "$n")
	echo "| $what (req/s) | $(fmt "$r") | nginx $(fmt "$n") | $q | ≥ $goal | $(pass "$q" "$goal" '>=') |"
}

report_latency() {
	local kind what r n bad
	for kind in tiles o; do
		what="tile hits, 8 tiles"
		[[ $kind == o ]] && what="/o hits, ${OBJECT_KIB} KiB"
		r=$(fmt "$(jqf "lat-$kind-ron" '.all.latency_ms.p99')" 3)
		n=$(fmt "$(jqf "lat-$kind-nginx" '.all.latency_ms.p99')" 3)
		# shellcheck disable=SC2016 # $c is a jq variable
		bad=$(jqf "lat-$kind-ron" '([.all.status | to_entries[] | (.key | tonumber) as $c | select($c < 200 or $c > 299) | .value] | add // 0)
			+ .all.conn_errors + .all.timeouts + .all.dropped')
		echo "| $what at $LOAD_RATE req/s open loop, ${LOAD_DURATION} s: 2xx p99 (ms); non-2xx, errors, drops | $r; $bad | nginx $n | $(ratio "$r" "$n") | < 5; 0 | $(pass "$r" 5 '<') |"
	done
}

report_ready() {
	local med max
	med=$(median "${READY_MS[@]}")
	max=$(printf '%s\n' "${READY_MS[@]}" | sort -g | tail -1)
	echo "| start to ready: process start → /readyz 200, ${#PMTILES_OK[@]} PMTiles + ${#MBTILES_OK[@]} MBTiles fixtures, basic verification (ms) | $(fmt "$med" 1) | max $(fmt "$max" 1) | — | < 300 | $(pass "$med" 300 '<') |"
}

report_details() {
	echo "Details:"
	echo
	local label
	for label in tiles objects; do
		want "$label" || continue
		echo "- $label req/s per run: ron${RPS[$label/ron]}; nginx${RPS[$label/nginx]}"
		echo "- $label wrk p99 ms per run: ron${P99[$label/ron]}; nginx${P99[$label/nginx]}"
	done
	if want latency; then
		local run
		for run in lat-tiles-ron lat-tiles-nginx lat-o-ron lat-o-nginx; do
			echo "- $run: $(jqf "$run" '"sent \(.all.sent), 2xx \(.all.ok), status \(.all.status | to_entries | map("\(.key)×\(.value)") | join(" ")), dropped \(.all.dropped), conn errors \(.all.conn_errors), timeouts \(.all.timeouts), 2xx latency ms p50 \(.all.latency_ms.p50) p90 \(.all.latency_ms.p90) p99 \(.all.latency_ms.p99) max \(.all.latency_ms.max), generator lag max \(.all.max_send_lag_ms) ms"')"
		done
	fi
	if want ready; then
		echo "- start to ready, ms per run: ${READY_MS[*]}"
		if [[ -n ${PACKS_OUT:-} ]]; then
			echo "- packs benchmark (\`go test -run '^\$' -bench $PACKS_BENCH -count 5 ./roles/edge/packs\`):"
			echo
			echo '```'
			grep -E '^(Benchmark|goos|goarch|cpu|pkg)' <<<"$PACKS_OUT"
			echo '```'
		fi
	fi
	echo "- load average: at start $LOAD_START, at end $(cut -d' ' -f1-3 /proc/loadavg)"
	echo
	echo "Commands (ports as run):"
	echo
	echo '```sh'
	printf '%s\n' "${CMDS[@]}"
	echo '```'
}

report() {
	echo "## Edge (issue 5)"
	echo
	local setup
	setup="$(date -u +%Y-%m-%dT%H:%MZ), ron $RON_VERSION, $(nproc) cores, Linux $(uname -r), $(go version | cut -d' ' -f3)"
	setup+=", $(wrk -v 2>&1 | head -1 | cut -d' ' -f1-2), nginx $("$NGINX_BIN" -v 2>&1 | sed 's/.*nginx\///') with $NGINX_WORKERS workers; parts: $PARTS"
	setup+="; wrk -t$WRK_THREADS -c$WRK_CONNS -d${WRK_DURATION}s, median of $WRK_REPEAT alternating runs per server"
	setup+="; edge cache $([[ $AMNESIA == 1 ]] && echo "in memory (--amnesia)" || echo "on disk")"
	echo "$setup."
	echo
	echo "| benchmark | ron | reference | ratio | goal | met |"
	echo "| --- | ---: | ---: | ---: | ---: | :---: |"
	if want tiles; then report_wrk tiles "warm tile hits, stamen_toner_z3, wrk cycling through all 85 tiles" 0.7; fi
	if want objects; then report_wrk objects "warm /o hits, ${OBJECT_KIB} KiB object" 0.8; fi
	if want latency; then report_latency; fi
	if want ready; then report_ready; fi
	echo
	report_details
}

# ---------------------------------------------------------------- main
need_tools wrk=wrk "nginx|/usr/sbin/nginx=nginx-light" curl=curl jq=jq
NGINX_BIN=$(command -v nginx || echo /usr/sbin/nginx)
LOAD_START=$(cut -d' ' -f1-3 /proc/loadavg)
busy=$(ps -eo pcpu=,comm= --sort=-pcpu | awk '$1 > 20 {printf "%s(%s%%) ", $2, $1}')
[[ -z $busy ]] || log "warning: busy processes before the run: $busy"
log "load average at start: $LOAD_START"
build
if want tiles || want objects || want latency; then
	start_edge
	prepare_content
	start_nginx
	same_answers
	if want tiles; then bench_tiles; fi
	if want objects; then bench_objects; fi
	if want latency; then bench_latency; fi
fi
if want ready; then bench_ready; fi
report
log "done"
