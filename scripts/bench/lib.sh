# shellcheck shell=bash
# Shared helpers of the benchmark scripts in scripts/bench (sourced, not run).
# Before sourcing, a script may set LOGS (files whose tails die prints).

log() { printf '[bench %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }

# die logs a fatal error, the last lines of every file in LOGS, and exits 1.
die() {
	log "FATAL: $*"
	local f
	for f in "${LOGS[@]}"; do
		log "last lines of $f:"
		tail -n5 "$f" >&2 || true
	done
	exit 1
}

# need_tools CMD[|CMD…]=PACKAGE…: installs with apt-get each package none of
# whose commands is there (a command may be an absolute path).
need_tools() {
	local missing=() pair cmd found
	for pair in "$@"; do
		found=
		IFS='|' read -ra cmds <<<"${pair%%=*}"
		for cmd in "${cmds[@]}"; do
			if command -v "$cmd" >/dev/null || [[ -x $cmd ]]; then found=1; fi
		done
		[[ -n $found ]] || missing+=("${pair#*=}")
	done
	((${#missing[@]} == 0)) && return 0
	log "installing ${missing[*]}"
	local sudo=()
	((EUID == 0)) || sudo=(sudo)
	export DEBIAN_FRONTEND=noninteractive
	"${sudo[@]}" apt-get install -y -qq "${missing[@]}" >&2 ||
		{ "${sudo[@]}" apt-get update -qq >&2 && "${sudo[@]}" apt-get install -y -qq "${missing[@]}" >&2; } ||
		die "could not install ${missing[*]}"
}

# bench_workdir DIR: makes DIR the run's scratch directory (WORK) and, at
# exit, stops every process in PIDS and removes WORK.
bench_workdir() {
	WORK=$1
	PIDS=()
	trap bench_cleanup EXIT
	trap 'exit 130' INT TERM
}
bench_cleanup() {
	local rc=$? p
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
	for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
	rm -rf "$WORK"
	exit "$rc"
}

# stop_pid PID stops a process we started and forgets it.
stop_pid() {
	kill "$1" 2>/dev/null || true
	wait "$1" 2>/dev/null || true
	local keep=() p
	for p in "${PIDS[@]}"; do [[ $p == "$1" ]] || keep+=("$p"); done
	PIDS=("${keep[@]}")
}

# free_port VAR sets VAR to a loopback TCP port no socket uses and that this
# run has not handed out yet (no subshell, so the list persists). Ports come
# from below the kernel's ephemeral range, so that the many client
# connections of a run cannot take them between the check and the bind.
USED_PORTS=" "
EPHEMERAL_LOW=$(cut -f1 /proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || echo 32768)
((EPHEMERAL_LOW > 12000)) || EPHEMERAL_LOW=32768
free_port() {
	local _fp
	for _ in $(seq 200); do
		_fp=$((10000 + RANDOM % (EPHEMERAL_LOW - 10000)))
		[[ $USED_PORTS == *" $_fp "* ]] && continue
		if [[ -z $(ss -Htan "sport = :$_fp" 2>/dev/null) ]]; then
			USED_PORTS+="$_fp "
			printf -v "$1" '%s' "$_fp"
			return
		fi
	done
	die "no free port"
}

# wait_http URL polls URL for up to 10 s until it answers 2xx.
wait_http() {
	for _ in $(seq 100); do
		curl -fsS -o /dev/null "$1" 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}

# median of the arguments (numbers); "nan" when there are none.
median() {
	printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {
		if (NR==0) {print "nan"; exit}
		if (NR%2) print a[(NR+1)/2]; else printf "%.6g\n", (a[NR/2]+a[NR/2+1])/2 }'
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b>0) printf "%.2f", a/b; else print "n/a" }'; }
fmt() { awk -v a="$1" -v d="${2:-0}" 'BEGIN { printf "%.*f", d, a }'; }
# pass VALUE TARGET OP (">=", "<=" or "<") prints yes or **no**.
pass() {
	awk -v v="$1" -v t="$2" -v op="$3" 'BEGIN {
		ok = (op==">=") ? (v>=t) : (op=="<=") ? (v<=t) : (v<t); print ok ? "yes" : "**no**" }'
}

# nginx_static_conf DIR PORT ROOT WORKERS DIRECTIVES: writes DIR/nginx.conf,
# the reference nginx of the benchmarks: in the foreground with WORKERS
# workers, pid, logs and temp paths under DIR, no access log, sendfile,
# unlimited keep-alive, serving ROOT on 127.0.0.1:PORT. DIRECTIVES are
# the benchmark's own http-block lines (types, tcp_nopush).
nginx_static_conf() {
	local dir=$1 port=$2 root=$3 workers=$4 directives=$5
	mkdir -p "$dir"
	cat >"$dir/nginx.conf" <<EOF
daemon off;
master_process on;
worker_processes $workers;
pid $dir/nginx.pid;
error_log $dir/error.log warn;
events { worker_connections 4096; }
http {
    access_log off;
    sendfile on;
    keepalive_requests 1000000;
    $directives
    client_body_temp_path $dir/body;
    proxy_temp_path $dir/proxy;
    fastcgi_temp_path $dir/fastcgi;
    uwsgi_temp_path $dir/uwsgi;
    scgi_temp_path $dir/scgi;
    server {
        listen 127.0.0.1:$port;
        root $root;
    }
}
EOF
}

# token ADMIN_PORT SCOPE [TENANT] prints a 1-hour token minted by the admin
# plane of the ron on that port (loopback needs no admin token).
token() {
	local body out
	body="{\"scopes\":[\"$2\"],\"ttl\":\"1h\"${3:+,\"tenant\":\"$3\"}}"
	out=$(curl -fsS -XPOST "http://127.0.0.1:$1/api/v1/tokens" -H 'Content-Type: application/json' -d "$body") ||
		die "token request $body failed"
	out=$(sed -n 's/.*"token":"\([^"]*\)".*/\1/p' <<<"$out")
	[[ -n $out ]] || die "no token in the answer to $body"
	echo "$out"
}

# start_ron NAME ADMIN_PORT [ENV=value…] -- [serve flags…] starts $RON (the
# ron binary) with data under $WORK/NAME, logging to $WORK/NAME.log (added
# to LOGS; the command goes through the script's record), puts its pid in
# RON_PID and PIDS and waits for /readyz.
RON_PID=
start_ron() {
	local name=$1 admin=$2 envs=()
	shift 2
	while [[ $1 != -- ]]; do envs+=("$1"); shift; done
	shift
	local logf=$WORK/$name.log
	local cmd=("$RON" serve --data-dir "$WORK/$name" --admin.listen "127.0.0.1:$admin" --log.level warn "$@")
	LOGS+=("$logf")
	record "${envs[@]}" "${cmd[@]}"
	env "${envs[@]}" "${cmd[@]}" >"$logf" 2>&1 &
	RON_PID=$!
	PIDS+=("$RON_PID")
	wait_http "http://127.0.0.1:$admin/readyz" || die "ron ($name) did not become ready"
}
