#!/usr/bin/env bash
# Verified reads through ron's roles (issue 16: every reader proves the bytes
# against the object id before it passes them on), reported as MB/s and as
# ratios to a reference measured in the same run on the same machine:
#
#   gateway  Gateway provider reads. A holder ron (--roles storage,index, fs
#            engine) stores the objects and announces them to its own index;
#            a separate gateway-only ron (amnesia, no storage upstream) has
#            the holder's index as gateway.index_url, so every GET /o/{b3} it
#            answers is a verified provider transfer from the holder. Each
#            object is read once through the gateway and once straight from
#            the holder's storage (the reference), the order alternating.
#   edge     Edge /o fills. One ron --roles edge,storage (edge cache on
#            disk); each object is put into storage and read once through
#            the edge's /o (a cold fill: distinct objects, the Cache-Status
#            must say fwd=miss) and once from storage's own GET (reference).
#            Objects above the edge's fill_max_bytes (64 MiB) are streamed
#            and verified, not stored.
#   get      `ron get b3:… --out FILE` of a GET_MIB object from a storage-only
#            ron vs `curl -o FILE` followed by `sync FILE` (ron get fsyncs its
#            file before the rename), GET_REPEAT alternating runs; plain
#            `curl -o` and `b3sum --no-mmap FILE` (one-thread hashing) are
#            reported alongside.
#   put      Durable PUT of a PUT_MIB object to the fs engine with a
#            Content-Length (curl -T) vs the same upload chunked (size not
#            known in advance), PUT_REPEAT alternating runs, each result
#            deleted and synced before the next; dd conv=fsync alongside.
#
# Usage: scripts/bench/verified.sh                       (build this tree; about 90 s on 2 cores)
#        RON_BIN=/path/to/ron scripts/bench/verified.sh  (measure a given binary)
#        SIZES="1:8 64:2" GET_MIB=128 GET_REPEAT=1 PUT_MIB=128 PUT_REPEAT=1 \
#        scripts/bench/verified.sh                       (smoke run)
#        PARTS="gateway edge" scripts/bench/verified.sh
#
# SIZES lists object sizes of the gateway and edge parts as MiB:count (count
# distinct objects of that size, each read once per side). Per size the
# table gives the median over the objects of the per-object MB/s (curl's
# time_total: request to last byte) and the aggregate (all bytes / all
# time). BENCH_LABEL names the run (default: the ron version); BENCH_TSV=FILE
# appends one tab-separated line per figure (label, part, metric, value,
# reference) to FILE, for combining runs. The markdown
# report goes to stdout, progress to stderr. Everything it starts and
# creates is removed on exit. curl and b3sum are installed with apt-get when
# missing.
set -euo pipefail

SIZES=${SIZES:-1:32 64:6 256:2} # MiB:count, gateway and edge parts
GET_MIB=${GET_MIB:-512}         # object of the get part
GET_REPEAT=${GET_REPEAT:-3}
PUT_MIB=${PUT_MIB:-512} # object of the put part
PUT_REPEAT=${PUT_REPEAT:-3}
PARTS=${PARTS:-gateway edge get put}
BENCH_LABEL=${BENCH_LABEL:-}   # name of this run in BENCH_TSV (default: the ron version)
BENCH_SETTLE=${BENCH_SETTLE:-2} # seconds after sync between durable writes

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# shellcheck source=scripts/bench/lib.sh
source "$REPO/scripts/bench/lib.sh"
LOGS=()

for v in GET_MIB GET_REPEAT PUT_MIB PUT_REPEAT; do
	[[ ${!v} =~ ^[1-9][0-9]*$ ]] || die "$v=${!v}: want a positive whole number"
done
for s in $SIZES; do [[ $s =~ ^[1-9][0-9]*:[1-9][0-9]*$ ]] || die "SIZES: $s is not MiB:count"; done
for p in $PARTS; do [[ $p =~ ^(gateway|edge|get|put)$ ]] || die "PARTS: unknown part $p"; done
want() { [[ " $PARTS " == *" $1 "* ]]; }

# Data dirs on the repo's disk: /tmp when it is the same file system.
if [[ $(stat -c %d /tmp) == "$(stat -c %d "$REPO")" ]]; then
	bench_workdir "$(mktemp -d /tmp/ron-bench-verified.XXXXXX)"
else
	bench_workdir "$(mktemp -d "$REPO/.ron-bench-verified.XXXXXX")"
fi
BIN=$WORK/bin

# ---------------------------------------------------------------- commands
# The report lists every server and client command as run, with tokens and
# the scratch directory replaced by names.
CMDS=()
declare -A SECRETS=()
# Arguments that need quoting get double quotes when that is safe, so the
# $NAME placeholders in them still read as variables.
quote_arg() {
	if [[ $1 =~ ^[A-Za-z0-9_./:=,@%+\$-]+$ ]]; then
		printf '%s' "$1"
	elif [[ $1 != *[\"\\\`]* ]]; then
		printf '"%s"' "$1"
	else
		printf "'%s'" "${1//\'/\'\\\'\'}"
	fi
}
record() {
	local line="" a k
	for a in "$@"; do line+="${line:+ }$(quote_arg "$a")"; done
	for k in "${!SECRETS[@]}"; do line=${line//"${SECRETS[$k]}"/\$$k}; done
	line=${line//"$RON "/ron }
	CMDS+=("${line//"$WORK"/\$WORK}")
}
# record_once: like record, but a line already recorded is not repeated.
record_once() {
	local before=${#CMDS[@]} last
	record "$@"
	last=${CMDS[-1]}
	local i
	for ((i = 0; i < before; i++)); do
		if [[ ${CMDS[i]} == "$last" ]]; then unset 'CMDS[-1]'; return; fi
	done
}

# ---------------------------------------------------------------- helpers
now() { echo "$EPOCHREALTIME"; }
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.6f", b-a }'; }
mbps() { awk -v n="$1" -v s="$2" 'BEGIN { printf "%.1f", n/s/1e6 }'; } # bytes, seconds → MB/s
settle() { sync; sleep "$BENCH_SETTLE"; }
# mutate FILE N: a new object of the same size (first 16 bytes rewritten).
mutate() { printf 'ron-verified-%03d' "$(($2 % 1000))" | dd of="$1" bs=16 count=1 conv=notrunc status=none; }
b3id() { echo "b3:$(b3sum --no-names "$1")"; }

# put_file BASE TOKEN FILE [chunked] prints "<id> <seconds>" of a PUT that
# must create the object (201) with FILE's id. With "chunked" the upload has
# no Content-Length (Transfer-Encoding: chunked).
put_file() {
	local out code t want te=()
	[[ ${4:-} != chunked ]] || te=(-H 'Transfer-Encoding: chunked')
	out=$(curl -sS -XPOST -T "$3" "${te[@]}" -H "Authorization: Bearer $2" -H 'Content-Type: application/octet-stream' \
		-H 'Expect:' -w '\n%{http_code} %{time_total}' "$1/o") || die "PUT $3 to $1 failed"
	read -r code t <<<"${out##*$'\n'}"
	[[ $code == 201 ]] || die "PUT $3 to $1: $code ${out%$'\n'*}"
	want=$(b3id "$3")
	[[ $out == *"\"cid\":\"$want\""* ]] || die "PUT $3 to $1: not the id $want: ${out%$'\n'*}"
	echo "$want $t"
}

# fetch URL SIZE [HEADERS_FILE] prints the seconds of one GET to /dev/null;
# dies unless it answers 200 with SIZE bytes.
fetch() {
	local res code size t hdr=()
	[[ -z ${3:-} ]] || hdr=(-D "$3")
	res=$(curl -sS "${hdr[@]}" -o /dev/null -w '%{http_code} %{size_download} %{time_total}' "$1") || die "GET $1 failed"
	read -r code size t <<<"$res"
	[[ $code == 200 && $size == "$2" ]] || die "GET $1: $code, $size bytes (want 200, $2)"
	echo "$t"
}

# wait_providers INDEX_BASE ID…: waits (up to 20 s) until the index lists a
# provider for every id.
wait_providers() {
	local base=$1 id
	shift
	for id in "$@"; do
		for _ in $(seq 200); do
			[[ $(curl -sS -o /dev/null -w '%{http_code}' "$base/providers/$id") == 200 ]] && continue 2
			sleep 0.1
		done
		die "the index at $base lists no provider for $id"
	done
}

# Figures: FIG[part.size.side] holds per-object seconds (space-separated).
declare -A FIG=()
declare -A SIZE_OF=()
TSV_LINES=()
tsv() { TSV_LINES+=("$(printf '%s\t%s\t%s\t%s\t%s' "$BENCH_LABEL" "$1" "$2" "$3" "$4")"); }
# agg BYTES SECONDS…: MB/s over all of them.
agg() {
	local b=$1
	shift
	awk -v b="$b" 'BEGIN { s = 0; for (i = 1; i < ARGC; i++) s += ARGV[i]; printf "%.1f", (ARGC - 1) * b / s / 1e6 }' "$@"
}
# per_object_mbps BYTES SECONDS… prints the MB/s of each.
per_object_mbps() {
	local b=$1 t mb=()
	shift
	for t in "$@"; do mb+=("$(mbps "$b" "$t")"); done
	echo "${mb[*]}"
}

# read_pairs PART ROLE_BASE REF_BASE BYTES ID…: each id once through ROLE_BASE
# and once from REF_BASE, alternating which goes first; records seconds.
# For the edge part every role read must be a cold fill (Cache-Status
# fwd=miss).
read_pairs() {
	local part=$1 role=$2 ref=$3 bytes=$4 i=0 id t cs
	shift 4
	local key=$part.$bytes
	record_once curl -sS -o /dev/null -w '%{http_code} %{size_download} %{time_total}' "$role/o/\$ID"
	record_once curl -sS -o /dev/null -w '%{http_code} %{size_download} %{time_total}' "$ref/o/\$ID"
	for id in "$@"; do
		i=$((i + 1))
		for side in $( ((i % 2)) && echo "role ref" || echo "ref role"); do
			if [[ $side == role ]]; then
				t=$(fetch "$role/o/$id" "$bytes" "$WORK/headers")
				if [[ $part == edge ]]; then
					cs=$(tr -d '\r' <"$WORK/headers" | sed -n 's/^[Cc]ache-[Ss]tatus: //p')
					[[ $cs == *fwd=miss* ]] || die "GET $role/o/$id: Cache-Status '$cs', want a cold fill (fwd=miss)"
				fi
			else
				t=$(fetch "$ref/o/$id" "$bytes")
			fi
			FIG[$key.$side]+=" $t"
		done
	done
	# shellcheck disable=SC2086 # the figures are space-separated lists
	log "  $part $((bytes >> 20)) MiB × $#: role $(agg "$bytes" ${FIG[$key.role]}) MB/s, reference $(agg "$bytes" ${FIG[$key.ref]}) MB/s"
}

# put_objects BASE TOKEN SIZE_MIB COUNT: puts COUNT distinct objects of
# SIZE_MIB and sets IDS to their ids; $WORK/in/SIZE holds the last one.
put_objects() {
	local base=$1 tok=$2 mib=$3 n=$4 f=$WORK/in/$3 j r
	mkdir -p "$WORK/in"
	[[ -f $f ]] || head -c $((mib << 20)) /dev/urandom >"$f"
	IDS=()
	for ((j = 1; j <= n; j++)); do
		mutate "$f" "$((SEQ_OBJ++))"
		r=$(put_file "$base" "$tok" "$f")
		IDS+=("${r%% *}")
	done
}
SEQ_OBJ=1

# ---------------------------------------------------------------- build
# ron reads RON_* variables as config (RON_BIN would be an unknown key bin):
# keep the path, drop the variable.
RON_BIN_PATH=${RON_BIN:-}
unset RON_BIN
if [[ -n $RON_BIN_PATH ]]; then
	[[ -x $RON_BIN_PATH ]] || die "RON_BIN=$RON_BIN_PATH is not an executable"
	RON=$RON_BIN_PATH
	RON_VERSION=$(go version -m "$RON" 2>/dev/null | awk '$2 == "vcs.revision" {r = substr($3, 1, 7)} $2 == "vcs.modified" && $3 == "true" {m = "+dirty"} END {print r m}')
	RON_VERSION=${RON_VERSION:-${BENCH_LABEL:-$RON}}
else
	log "building ron"
	mkdir -p "$BIN"
	(cd "$REPO" && go build -o "$BIN/ron" .) || die "go build failed"
	RON=$BIN/ron
	RON_VERSION=$(cd "$REPO" && git rev-parse --short HEAD 2>/dev/null || echo unknown)
	[[ -z $(cd "$REPO" && git status --porcelain 2>/dev/null | grep -v '^??' | head -1) ]] || RON_VERSION+="+dirty"
fi
BENCH_LABEL=${BENCH_LABEL:-$RON_VERSION}

# ---------------------------------------------------------------- parts
part_gateway() {
	local hadmin hstore hidx gadmin gw tok spec mib n
	log "gateway: holder (storage,index) and a gateway-only ron reading from the holder as a provider"
	free_port hadmin
	free_port hstore
	free_port hidx
	start_ron holder "$hadmin" -- --roles storage,index --storage.listen "127.0.0.1:$hstore" --index.listen "127.0.0.1:$hidx"
	local holder_pid=$RON_PID
	tok=$(token "$hadmin" storage:write)
	SECRETS[INDEX_TOKEN]=$(token "$hadmin" index:read)
	free_port gadmin
	free_port gw
	# The gateway has another root key: it sends a token of the holder's own
	# to the index (docs/gateway.md §2, upstream_token). Providers get none.
	start_ron gateway "$gadmin" "RON_GATEWAY__UPSTREAM_TOKEN=${SECRETS[INDEX_TOKEN]}" -- --amnesia --roles gateway \
		--gateway.listen "127.0.0.1:$gw" --gateway.index-url "http://127.0.0.1:$hidx" --gateway.anon-rps 1000000
	local gw_pid=$RON_PID
	for spec in $SIZES; do
		mib=${spec%%:*} n=${spec##*:}
		log "gateway: $n objects of $mib MiB"
		put_objects "http://127.0.0.1:$hstore" "$tok" "$mib" "$n"
		wait_providers "http://127.0.0.1:$hidx" "${IDS[@]}"
		SIZE_OF[gateway.$((mib << 20))]=$n
		read_pairs gateway "http://127.0.0.1:$gw" "http://127.0.0.1:$hstore" $((mib << 20)) "${IDS[@]}"
		# the gateway answers the right bytes (the last object put)
		cmp -s <(curl -fsS "http://127.0.0.1:$gw/o/${IDS[-1]}") "$WORK/in/$mib" ||
			die "the gateway's answer for ${IDS[-1]} is not the object's bytes"
	done
	stop_pid "$gw_pid"
	stop_pid "$holder_pid"
	rm -rf "$WORK/holder" "$WORK/gateway"
}

part_edge() {
	local admin store edge tok spec mib n
	log "edge: ron --roles edge,storage, cold /o fills vs storage's own GET"
	free_port admin
	free_port store
	free_port edge
	start_ron edge "$admin" -- --roles edge,storage --storage.listen "127.0.0.1:$store" --edge.listen "127.0.0.1:$edge"
	local pid=$RON_PID
	tok=$(token "$admin" storage:write)
	for spec in $SIZES; do
		mib=${spec%%:*} n=${spec##*:}
		log "edge: $n objects of $mib MiB"
		put_objects "http://127.0.0.1:$store" "$tok" "$mib" "$n"
		SIZE_OF[edge.$((mib << 20))]=$n
		read_pairs edge "http://127.0.0.1:$edge" "http://127.0.0.1:$store" $((mib << 20)) "${IDS[@]}"
		cmp -s <(curl -fsS "http://127.0.0.1:$edge/o/${IDS[-1]}") "$WORK/in/$mib" ||
			die "the edge's answer for ${IDS[-1]} is not the object's bytes"
	done
	stop_pid "$pid"
	rm -rf "$WORK/edge"
}

GET_RON_T=() GET_CURL_T=() GET_CURLSYNC_T=() GET_B3_T=()
part_get() {
	local admin store tok id f=$WORK/in/get i t t0 out=$WORK/out
	log "get: ron get --out vs curl -o (+ sync) of a $GET_MIB MiB object ×$GET_REPEAT"
	free_port admin
	free_port store
	start_ron getter "$admin" -- --roles storage --storage.listen "127.0.0.1:$store"
	local pid=$RON_PID
	tok=$(token "$admin" storage:write)
	SECRETS[READ_TOKEN]=$(token "$admin" storage:read)
	mkdir -p "$WORK/in" "$out"
	head -c $((GET_MIB << 20)) /dev/urandom >"$f"
	id=$(put_file "http://127.0.0.1:$store" "$tok" "$f")
	id=${id%% *}
	local getcmd=("$RON" get "$id" --out "$out/ron" --server "http://127.0.0.1:$store" --token "${SECRETS[READ_TOKEN]}" --data-dir "$WORK/cli")
	local curlcmd=(curl -fsS -o "$out/curl" "http://127.0.0.1:$store/o/$id")
	record "${getcmd[@]}"
	record "${curlcmd[@]}"
	record sync "$out/curl"
	record b3sum --no-mmap "$out/curl"
	ron_get_run() {
		t0=$(now)
		"${getcmd[@]}" >/dev/null 2>"$WORK/get.err" || { cat "$WORK/get.err" >&2; die "ron get failed"; }
		t=$(elapsed "$t0" "$(now)")
		GET_RON_T+=("$t")
		[[ $(stat -c %s "$out/ron") == $((GET_MIB << 20)) ]] || die "ron get wrote $(stat -c %s "$out/ron") bytes"
		log "  run $i ron get --out: ${t}s = $(mbps $((GET_MIB << 20)) "$t") MB/s"
		rm -f "$out/ron"
		settle
	}
	curl_run() {
		local t1
		t0=$(now)
		"${curlcmd[@]}" || die "curl -o failed"
		t1=$(now)
		sync "$out/curl"
		t=$(elapsed "$t0" "$(now)")
		GET_CURL_T+=("$(elapsed "$t0" "$t1")")
		GET_CURLSYNC_T+=("$t")
		log "  run $i curl -o + sync: ${t}s = $(mbps $((GET_MIB << 20)) "$t") MB/s (curl alone $(mbps $((GET_MIB << 20)) "$(elapsed "$t0" "$t1")") MB/s)"
		t0=$(now)
		b3sum --no-mmap "$out/curl" >/dev/null
		t=$(elapsed "$t0" "$(now)")
		GET_B3_T+=("$t")
		rm -f "$out/curl"
		settle
	}
	settle
	for ((i = 1; i <= GET_REPEAT; i++)); do
		if ((i % 2)); then ron_get_run; curl_run; else curl_run; ron_get_run; fi
	done
	stop_pid "$pid"
	rm -rf "$WORK/getter" "$f" "$out"
}

PUT_KNOWN_T=() PUT_CHUNKED_T=() PUT_DD_T=()
part_put() {
	local admin store tok f=$WORK/in/put i r id
	log "put: fs PUT of $PUT_MIB MiB with Content-Length vs chunked ×$PUT_REPEAT (dd conv=fsync alongside)"
	free_port admin
	free_port store
	start_ron putter "$admin" -- --roles storage --storage.listen "127.0.0.1:$store"
	local pid=$RON_PID
	tok=$(token "$admin" storage:write)
	SECRETS[WRITE_TOKEN]=$tok
	SECRETS[ADMIN_TOKEN]=$(token "$admin" storage:admin)
	mkdir -p "$WORK/in"
	head -c $((PUT_MIB << 20)) /dev/urandom >"$f"
	record curl -sS -XPOST -T "$f" -H "Authorization: Bearer $tok" -H 'Content-Type: application/octet-stream' -H 'Expect:' "http://127.0.0.1:$store/o"
	record curl -sS -XPOST -T "$f" -H 'Transfer-Encoding: chunked' -H "Authorization: Bearer $tok" -H 'Content-Type: application/octet-stream' -H 'Expect:' "http://127.0.0.1:$store/o"
	record dd if="$f" of="$WORK/putter/x" bs=1M conv=fsync
	del() {
		local code
		code=$(curl -sS -o /dev/null -w '%{http_code}' -XDELETE -H "Authorization: Bearer ${SECRETS[ADMIN_TOKEN]}" \
			"http://127.0.0.1:$store/o/$1")
		[[ $code == 20? ]] || die "DELETE $1: $code"
	}
	put_run() {
		mutate "$f" "$((500 + SEQ_OBJ++))"
		r=$(put_file "http://127.0.0.1:$store" "$tok" "$f" "${1:-}")
		id=${r%% *}
		if [[ ${1:-} == chunked ]]; then PUT_CHUNKED_T+=("${r##* }"); else PUT_KNOWN_T+=("${r##* }"); fi
		log "  run $i PUT ${1:-with Content-Length}: ${r##* }s = $(mbps $((PUT_MIB << 20)) "${r##* }") MB/s"
		del "$id"
		settle
	}
	dd_run() {
		local t0 t
		t0=$(now)
		dd if="$f" of="$WORK/putter/x" bs=1M conv=fsync status=none
		t=$(elapsed "$t0" "$(now)")
		PUT_DD_T+=("$t")
		rm -f "$WORK/putter/x"
		settle
	}
	cat "$f" >/dev/null
	settle
	for ((i = 1; i <= PUT_REPEAT; i++)); do
		if ((i % 2)); then put_run; put_run chunked; else put_run chunked; put_run; fi
		dd_run
	done
	stop_pid "$pid"
	rm -rf "$WORK/putter" "$f"
}

# ---------------------------------------------------------------- report
report_reads() {
	local part=$1 what=$2 refname=$3 key bytes n role ref q
	for key in $(printf '%s\n' "${!SIZE_OF[@]}" | grep "^$part\." | sort -t. -k2 -n); do
		bytes=${key#*.} n=${SIZE_OF[$key]}
		# shellcheck disable=SC2086,SC2046
		role=$(median $(per_object_mbps "$bytes" ${FIG[$key.role]}))
		# shellcheck disable=SC2086,SC2046
		ref=$(median $(per_object_mbps "$bytes" ${FIG[$key.ref]}))
		q=$(ratio "$role" "$ref")
		local ra qa rfa
		# shellcheck disable=SC2086
		ra=$(agg "$bytes" ${FIG[$key.role]}) rfa=$(agg "$bytes" ${FIG[$key.ref]})
		qa=$(ratio "$ra" "$rfa")
		echo "| $what, $((bytes >> 20)) MiB × $n (MB/s: median per object; aggregate) | $(fmt "$role") ; $(fmt "$ra") | $refname $(fmt "$ref") ; $(fmt "$rfa") | $q ; $qa |"
		tsv "$part" "$((bytes >> 20))MiB" "$role" "$ref"
		tsv "$part" "$((bytes >> 20))MiB-aggregate" "$ra" "$rfa"
	done
}

report() {
	echo "## ron verified reads"
	echo
	echo "$(date -u +%Y-%m-%dT%H:%MZ), ron $RON_VERSION, $(nproc) cores, Linux $(uname -r), $(b3sum --version);" \
		"parts: $PARTS; sizes (MiB:count) $SIZES; get ${GET_MIB} MiB ×$GET_REPEAT; put ${PUT_MIB} MiB ×$PUT_REPEAT."
	echo
	echo "| benchmark | ron | reference | ron / reference |"
	echo "| --- | ---: | ---: | ---: |"
	if want gateway; then report_reads gateway "gateway provider read (gateway-only ron, holder as provider)" "holder storage GET"; fi
	if want edge; then report_reads edge "edge /o cold fill (edge,storage)" "storage GET"; fi
	local b=$((GET_MIB << 20)) a c cs b3 q
	if want get; then
		a=$(mbps "$b" "$(median "${GET_RON_T[@]}")")
		cs=$(mbps "$b" "$(median "${GET_CURLSYNC_T[@]}")")
		c=$(mbps "$b" "$(median "${GET_CURL_T[@]}")")
		b3=$(mbps "$b" "$(median "${GET_B3_T[@]}")")
		echo "| ron get --out, $GET_MIB MiB (MB/s) | $a | curl -o + sync $cs | $(ratio "$a" "$cs") |"
		echo "| (alongside) plain curl -o; b3sum --no-mmap of the file (MB/s) | $a | curl -o $c; b3sum $b3 | $(ratio "$a" "$c"); $(ratio "$a" "$b3") |"
		tsv get "ron-get" "$a" "$cs"
		tsv get "curl-o" "$c" ""
		tsv get "b3sum" "$b3" ""
	fi
	b=$((PUT_MIB << 20))
	if want put; then
		a=$(mbps "$b" "$(median "${PUT_KNOWN_T[@]}")")
		c=$(mbps "$b" "$(median "${PUT_CHUNKED_T[@]}")")
		q=$(mbps "$b" "$(median "${PUT_DD_T[@]}")")
		echo "| fs PUT $PUT_MIB MiB, chunked (size unknown) vs with Content-Length (MB/s) | $c | with Content-Length $a | $(ratio "$c" "$a") |"
		echo "| (alongside) fs PUT with Content-Length vs dd conv=fsync (MB/s) | $a | dd $q | $(ratio "$a" "$q") |"
		tsv put "chunked" "$c" "$a"
		tsv put "known" "$a" "$q"
	fi
	echo
	echo "Details:"
	echo
	local key
	for key in $(printf '%s\n' "${!SIZE_OF[@]}" | sort -t. -k1,1 -k2n); do
		bytes=${key#*.}
		# shellcheck disable=SC2086
		echo "- ${key%%.*} $((bytes >> 20)) MiB, MB/s per object: ron $(per_object_mbps "$bytes" ${FIG[$key.role]}); reference $(per_object_mbps "$bytes" ${FIG[$key.ref]})"
	done
	if want get; then
		echo "- get seconds: ron get ${GET_RON_T[*]}; curl -o + sync ${GET_CURLSYNC_T[*]}; curl -o ${GET_CURL_T[*]}; b3sum --no-mmap ${GET_B3_T[*]}"
	fi
	if want put; then
		echo "- put seconds: with Content-Length ${PUT_KNOWN_T[*]}; chunked ${PUT_CHUNKED_T[*]}; dd conv=fsync ${PUT_DD_T[*]}"
	fi
	echo "- load average: at start $LOAD_START, at end $(cut -d' ' -f1-3 /proc/loadavg)"
	echo
	echo "Commands (ports as run; \$ID is each object's id, the tokens are minted by the node's admin plane):"
	echo
	echo '```sh'
	printf '%s\n' "${CMDS[@]}"
	echo '```'
	if [[ -n ${BENCH_TSV:-} ]]; then printf '%s\n' "${TSV_LINES[@]}" >>"$BENCH_TSV"; fi
}

# ---------------------------------------------------------------- main
need_tools curl=curl b3sum=b3sum
LOAD_START=$(cut -d' ' -f1-3 /proc/loadavg)
busy=$(ps -eo pcpu=,comm= --sort=-pcpu | awk '$1 > 20 {printf "%s(%s%%) ", $2, $1}')
[[ -z $busy ]] || log "warning: busy processes before the run: $busy"
log "load average at start: $LOAD_START; ron $RON_VERSION"
if want gateway; then part_gateway; fi
if want edge; then part_edge; fi
if want get; then part_get; fi
if want put; then part_put; fi
report
log "done"
