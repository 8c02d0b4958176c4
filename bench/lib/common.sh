# bench/lib/common.sh — helpers shared by the bench/*.sh scripts (source it;
# do not run it). One place for: messages, prerequisites, building avtool, the
# timed runner (GNU time: wall seconds + peak RSS), the machine-load gate and
# the medians.
#
# The sourcing script sets, before calling the helpers:
#   BENCH_TAG     prefix of messages, e.g. "remux-bench"
#   RESULTS       directory for per-benchmark result files
#   BENCH_VARS    (array, optional) names of variables the bench_<name>
#                 functions read (AVTOOL, PRESET, …); passed to the timed child
#   BENCH_MAX_LOAD / BENCH_MAX_WAIT   (optional) for bench_wait_quiet

die() { echo "${BENCH_TAG:-bench}: ERROR: $*" >&2; exit 1; }
log() { echo "${BENCH_TAG:-bench}: $*" >&2; }

file_size() { stat -c %s "$1"; }

# bench_require_tools PROGRAM... — die unless every program is on PATH.
bench_require_tools() {
    local tool
    for tool in "$@"; do
        command -v "$tool" >/dev/null 2>&1 || die "required program '$tool' not found"
    done
}

# bench_ensure_time — sets TIME_BIN to GNU time (installs it as root via apt-get).
bench_ensure_time() {
    TIME_BIN=/usr/bin/time
    if [[ ! -x "$TIME_BIN" ]]; then
        if [[ "$(id -u)" == 0 ]] && command -v apt-get >/dev/null 2>&1; then
            log "installing GNU time via apt-get"
            DEBIAN_FRONTEND=noninteractive apt-get install -y time >&2 \
                || { apt-get update >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y time >&2; }
        fi
        [[ -x "$TIME_BIN" ]] || die "/usr/bin/time (GNU time) is required: apt-get install time"
    fi
}

# bench_ensure_avtool PATH EXPLICIT REPO_ROOT [SWIFT BUILD ARG...] — when PATH
# is missing: die if it was given explicitly (EXPLICIT=1), else build it with
# `swift build -c release --product avtool ARG...` in REPO_ROOT.
bench_ensure_avtool() {
    local bin="$1" explicit="$2" root="$3"
    shift 3
    [[ -x "$bin" ]] && return 0
    [[ "$explicit" == 1 ]] && die "avtool binary not found or not executable: $bin"
    command -v swift >/dev/null 2>&1 || die "$bin missing and no swift toolchain to build it"
    log "building avtool (swift build -c release --product avtool $*)"
    (cd "$root" && swift build -c release --product avtool "$@") >&2
    [[ -x "$bin" ]] || die "build finished but $bin does not exist"
}

# bench_load — the 1-minute load average.
bench_load() { cut -d' ' -f1 /proc/loadavg; }

# bench_wait_quiet — before a timed run: while the 1-minute load average is
# above BENCH_MAX_LOAD (default 1.0), poll every 5 s for at most BENCH_MAX_WAIT
# seconds (default 180), naming the busiest processes once. Prints the load
# finally measured (the run goes ahead either way; report it).
bench_wait_quiet() {
    local max="${BENCH_MAX_LOAD:-1.0}" limit="${BENCH_MAX_WAIT:-180}" waited=0 load
    load=$(bench_load)
    while awk -v l="$load" -v m="$max" 'BEGIN { exit !(l > m) }'; do
        if [[ $waited -ge $limit ]]; then
            log "load still $load after ${waited}s; running anyway"
            break
        fi
        if [[ $waited == 0 ]]; then
            log "load $load > $max; waiting up to ${limit}s. Busiest now: $(ps -eo pcpu=,comm= --sort=-pcpu | head -n3 | awk '{printf "%s %s%%; ", $2, $1}')"
        fi
        sleep 5
        waited=$((waited + 5))
        load=$(bench_load)
    done
    [[ $waited -gt 0 && $waited -lt $limit ]] && log "load $load after ${waited}s"
    echo "$load"
}

# bench_timed NAME IN OUT — runs `bench_NAME IN OUT` in a child bash under GNU
# time (the variables named in BENCH_VARS are passed along) and appends
# "wall_seconds peak_rss_kib" to $RESULTS/NAME. Returns the command's status.
bench_timed() {
    local name="$1" in="$2" out="$3" tfile="$RESULTS/$1.time" vars=""
    if [[ -n "${BENCH_VARS+x}" && ${#BENCH_VARS[@]} -gt 0 ]]; then
        vars="$(declare -p "${BENCH_VARS[@]}")"
    fi
    sync
    # Wall time from the clock in nanoseconds (time's %e counts hundredths:
    # a step of 12 % on a job of 0.08 s); peak RSS from time.
    local t0 t1
    t0=$(date +%s%N)
    "$TIME_BIN" -f '%e %M' -o "$tfile" \
        bash -c "$vars
$(declare -f "bench_$name")
bench_$name \"\$1\" \"\$2\"" _ "$in" "$out" || return 1
    t1=$(date +%s%N)
    tail -n1 "$tfile" | awk -v ns="$((t1 - t0))" '{printf "%.4f %s\n", ns / 1e9, $2}' >>"$RESULTS/$name"
}

# bench_last NAME — "X.XX s, Y.Y MiB" of NAME's latest timed run.
bench_last() {
    tail -n1 "$RESULTS/$1" | awk '{printf "%.2f s, %.1f MiB", $1, $2/1024}'
}

# bench_medians_json NAME... — one JSON object on stdout:
#   {"NAME": {"wall_s": median, "min_s": .., "max_s": .., "rss_mib": median, "runs": n}, ...}
bench_medians_json() {
    python3 - "$RESULTS" "$@" <<'PY'
import json, os, statistics, sys

results_dir, names = sys.argv[1], sys.argv[2:]
out = {}
for n in names:
    rows = [l.split() for l in open(os.path.join(results_dir, n)) if l.strip()]
    wall = [float(r[0]) for r in rows]
    rss = [float(r[1]) / 1024.0 for r in rows]
    out[n] = {"wall_s": statistics.median(wall), "min_s": min(wall), "max_s": max(wall),
              "rss_mib": statistics.median(rss), "runs": len(wall)}
print(json.dumps(out))
PY
}
