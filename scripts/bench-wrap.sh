#!/usr/bin/env bash
# Recording overhead of `omnish wrap`: `cat` of a 256 MiB text file through a pseudo-terminal,
# recorded by omnish, against util-linux `script -q` recording to a file, and against
# `script -q -c ... /dev/null` (a pty relay that records nothing: the floor for any recorder).
# Then peak RSS, keystroke echo latency (omnish, script, a bare pty) and the time from Enter to
# output on screen with a normal disk and with a slow one (strace delays every rename and write
# of omnish's writer thread by 1 s).
# Prints figures only; asserts no timings.
#
# Usage (from the repo root, after `cargo build --release`):
#   bash scripts/bench-wrap.sh [--runs N] [--install] [--before BIN]
#     --runs N      timed runs per variant (default 5), after 1 warm-up
#     --install     apt-get install hyperfine if it is missing (else a date-based loop is used)
#     --before BIN  also measure another omnish binary (an older build), for before/after
# OMNISH_BIN overrides the binary (default target/release/omnish).
set -euo pipefail

RUNS=5
INSTALL=0
BEFORE=
while [ $# -gt 0 ]; do
    case "$1" in
        --runs) RUNS=${2:?--runs needs a number}; shift 2 ;;
        --install) INSTALL=1; shift ;;
        --before) BEFORE=${2:?--before needs a binary}; shift 2 ;;
        -h|--help) sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "bench-wrap.sh: unknown argument '$1' (try --help)" >&2; exit 2 ;;
    esac
done
case "$RUNS" in ''|*[!0-9]*|0) echo "bench-wrap.sh: --runs needs a positive number" >&2; exit 2 ;; esac

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
OMNISH=${OMNISH_BIN:-$ROOT/target/release/omnish}
if [ ! -x "$OMNISH" ]; then
    echo "bench-wrap.sh: no $OMNISH; run \`cargo build --release\` first" >&2
    exit 1
fi
if [ -n "$BEFORE" ] && [ ! -x "$BEFORE" ]; then
    echo "bench-wrap.sh: --before $BEFORE is not an executable" >&2
    exit 1
fi
for tool in script bash awk python3; do
    command -v "$tool" >/dev/null || { echo "bench-wrap.sh: needs $tool" >&2; exit 1; }
done
# Run inside an omnish-wrapped shell, omnish would refuse to record a second time.
unset OMNISH_SESSION_ID OMNISH_PTY

TMP=$(mktemp -d "${TMPDIR:-/tmp}/omnish-bench-wrap.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
FILE=$TMP/build.log
DATA=$TMP/data
SIZE=$((256 * 1024 * 1024))

# Text a terminal would get: coloured cargo status lines, test results and warnings.
seq 1 8000000 | awk '{
    m = $1 % 7
    if (m < 3)      printf "\033[1m\033[92m   Compiling\033[0m crate-%d v1.%d.%d (/home/dev/src/crate-%d)\n", $1 % 97, $1 % 40, $1 % 20, $1 % 97
    else if (m < 6) printf "test module_%d::tests::case_%d ... \033[32mok\033[0m\n", $1 % 53, $1
    else            printf "\033[1m\033[33mwarning\033[0m: unused variable: `x%d` at src/lib.rs:%d:9\n", $1, $1 % 900
}' | head -c "$SIZE" >"$FILE" || true
[ "$(stat -c %s "$FILE")" -eq "$SIZE" ] || { echo "bench-wrap.sh: could not generate $FILE" >&2; exit 1; }

HYPERFINE=$(command -v hyperfine || true)
if [ -z "$HYPERFINE" ] && [ "$INSTALL" = 1 ]; then
    SUDO=
    [ "$(id -u)" = 0 ] || SUDO=sudo
    $SUDO apt-get install -y hyperfine >&2 ||
        echo "bench-wrap.sh: could not install hyperfine (apt-get update first?); using the date loop" >&2
    HYPERFINE=$(command -v hyperfine || true)
fi

q() { printf '%q' "$1"; }
F=$(q "$FILE")
O=$(q "$OMNISH")
B=$(q "$BEFORE")
D=$(q "$DATA")
TS=$(q "$TMP/typescript")
# Keeps stdin open (a FIFO this shell also holds for writing) so input never ends: `script`
# stalls for up to ~2 s, not relaying output, when its stdin ends while the pty still holds
# unread input (it waits for the input queue to drain before sending EOF).
# shellcheck disable=SC2016 # expanded by the shell it is given to
HOLD='f=$(mktemp -u); mkfifo "$f"; exec 3<>"$f"; rm "$f"; printf "cat %s\nexit\n" >&3;'
# shellcheck disable=SC2059 # HOLD is the format: %s takes the file, each \n ends a line
HOLD=$(printf "$HOLD" "$F")

# Index 0 is the floor of the bash -c group, 3 the floor of the interactive group.
NAMES=(
    "floor: script -c (records nothing)"
    "script -q -c (recording to a file)"
    "omnish: bash -c"
    "floor: interactive bash (input held open)"
    "omnish: interactive bash (input held open)"
)
CMDS=(
    "script -q -c $(q "cat $F") /dev/null </dev/null >/dev/null"
    "script -q -c $(q "cat $F") $TS </dev/null >/dev/null"
    "OMNISH_DATA_DIR=$D $O wrap bash -c $(q "cat $F") </dev/null >/dev/null"
    "$HOLD script -q -c 'bash --norc' /dev/null <&3 >/dev/null"
    "$HOLD OMNISH_DATA_DIR=$D $O wrap bash --norc <&3 >/dev/null"
)
if [ -n "$BEFORE" ]; then
    NAMES+=("before: bash -c" "before: interactive bash (input held open)")
    CMDS+=(
        "OMNISH_DATA_DIR=$D $B wrap bash -c $(q "cat $F") </dev/null >/dev/null"
        "$HOLD OMNISH_DATA_DIR=$D $B wrap bash --norc <&3 >/dev/null"
    )
fi

# median mean stddev min (seconds), one value per line on stdin
stats() {
    sort -g | awk '{ v[NR] = $1; s += $1; ss += $1 * $1 }
        END { n = NR; m = (n % 2) ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
              mean = s / n; var = ss / n - mean * mean; if (var < 0) var = 0
              printf "%.4f %.4f %.4f %.4f\n", m, mean, sqrt(var), v[1] }'
}

now() { date +%s.%N; }

declare -a RESULTS
echo "file: $FILE, $SIZE bytes ($((SIZE / 1024 / 1024)) MiB) of coloured text lines"
echo "omnish: $OMNISH"
echo "machine: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"
if [ -n "$HYPERFINE" ]; then
    echo "timing: hyperfine, 1 warm-up + $RUNS runs per variant (stream store wiped before each)"
    ARGS=()
    for i in "${!CMDS[@]}"; do ARGS+=(-n "${NAMES[$i]}" "${CMDS[$i]}"); done
    "$HYPERFINE" --shell=bash --style basic --warmup 1 --runs "$RUNS" \
        --prepare "rm -rf $D $TS" --export-csv "$TMP/times.csv" "${ARGS[@]}" >&2
    # command,mean,stddev,median,user,system,min,max (the names hold no commas)
    for i in "${!CMDS[@]}"; do
        # CPU: user + system of all the processes, mean (steadier than wall time under load).
        RESULTS[i]=$(awk -F, -v row=$((i + 2)) 'NR == row { printf "%.4f %.4f %.4f %.4f %.4f\n", $4, $2, $3, $7, $5 + $6 }' "$TMP/times.csv")
    done
else
    echo "timing: no hyperfine (pass --install to get it); date loop, 1 warm-up + $RUNS runs per variant"
    for i in "${!CMDS[@]}"; do
        rm -rf "$DATA"
        bash -c "${CMDS[$i]}"
        : >"$TMP/t"
        for _ in $(seq "$RUNS"); do
            rm -rf "$DATA"
            t0=$(now)
            bash -c "${CMDS[$i]}"
            t1=$(now)
            awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.6f\n", b - a }' >>"$TMP/t"
        done
        RESULTS[i]="$(stats <"$TMP/t") n/a"
    done
fi

echo
printf '%-44s %10s %10s %10s %10s %9s %8s\n' "cat 256 MiB through ..." "median s" "mean s" "stddev s" "min s" "MB/s" "CPU s"
for i in "${!CMDS[@]}"; do
    read -r med mean sd min cpu <<<"${RESULTS[$i]}"
    mbs=$(awk -v s="$SIZE" -v t="$med" 'BEGIN { printf "%.0f", s / 1e6 / t }')
    printf '%-44s %10.3f %10.3f %10.3f %10.3f %9s %8s\n' "${NAMES[$i]}" "$med" "$mean" "$sd" "$min" "$mbs" "$cpu"
done
ratio() { awk -v a="${RESULTS[$1]%% *}" -v b="${RESULTS[$2]%% *}" 'BEGIN { printf "%.2f", a / b }'; }
cpu_ratio() { awk -v a="${RESULTS[$1]##* }" -v b="${RESULTS[$2]##* }" 'BEGIN { if (b + 0 > 0) printf "%.2f", a / b; else printf "n/a" }'; }
echo
echo "median wall time against the floor: omnish bash -c $(ratio 2 0)x, script recording $(ratio 1 0)x, omnish interactive $(ratio 4 3)x"
echo "CPU time (user + system, all processes) against the floor: omnish bash -c $(cpu_ratio 2 0)x, script recording $(cpu_ratio 1 0)x, omnish interactive $(cpu_ratio 4 3)x"
if [ -n "$BEFORE" ]; then
    echo "before, against the floor: bash -c $(ratio 5 0)x, interactive $(ratio 6 3)x; CPU $(cpu_ratio 5 0)x, $(cpu_ratio 6 3)x"
fi

# Peak RSS (GNU time: the largest of the process and the children it waited for) and the
# stream omnish wrote, one run each.
peak() { awk -F': ' '/Maximum resident set size/ { printf "%.1f MiB", $2 / 1024 }' "$1"; }
if [ -x /usr/bin/time ]; then
    rm -rf "$DATA"
    OMNISH_DATA_DIR=$DATA /usr/bin/time -v -o "$TMP/rss-omnish" "$OMNISH" wrap bash -c "cat $FILE" </dev/null >/dev/null
    /usr/bin/time -v -o "$TMP/rss-script" script -q -c "cat $FILE" /dev/null </dev/null >/dev/null
    echo "peak RSS, bash -c: omnish $(peak "$TMP/rss-omnish"), script $(peak "$TMP/rss-script") (/usr/bin/time -v)"
else
    rm -rf "$DATA"
    OMNISH_DATA_DIR=$DATA "$OMNISH" wrap bash -c "cat $FILE" </dev/null >/dev/null
    echo "peak RSS: n/a (no /usr/bin/time; apt-get install time)"
fi
stream=$(find "$DATA/sessions" -name stream.bin)
records=$(wc -l <"${stream%/*}/commands.jsonl")
bytes=$(stat -c %s "$stream")
# The pty turns each \n into \r\n, so the terminal is sent the file plus one byte a line.
shown=$((SIZE + $(wc -l <"$FILE")))
echo "stream.bin after bash -c: $bytes bytes ($(awk -v b="$bytes" -v s="$shown" 'BEGIN { printf "%.1f MiB; the pty sent %d bytes (\\n became \\r\\n), frames add %.2f%%", b / 1048576, s, (b - s) * 100 / s }')), $records command record(s)"
if [ -x /usr/bin/time ]; then
    rm -rf "$DATA"
    printf 'cat %s\nexit\n' "$FILE" | OMNISH_DATA_DIR=$DATA /usr/bin/time -v -o "$TMP/rss-omnish-i" "$OMNISH" wrap bash --norc >/dev/null
    stream=$(find "$DATA/sessions" -name stream.bin)
    echo "peak RSS, interactive piped: omnish $(peak "$TMP/rss-omnish-i"); stream.bin $(stat -c %s "$stream") bytes, $(wc -l <"${stream%/*}/commands.jsonl") command record(s)"
fi

if [ -n "$BEFORE" ] && [ -x /usr/bin/time ]; then
    rm -rf "$DATA"
    OMNISH_DATA_DIR=$DATA /usr/bin/time -v -o "$TMP/rss-before" "$BEFORE" wrap bash -c "cat $FILE" </dev/null >/dev/null
    echo "peak RSS, bash -c, before: $(peak "$TMP/rss-before")"
fi

# Latency, milliseconds: p50 p99 mean max.
LAT=$ROOT/scripts/ptylat.py
KEYS=2000
echo
echo "keystroke echo latency, $KEYS keys, cat on the inner terminal (ms: p50 p99 mean max)"
printf '  %-34s %s\n' "bare pty" "$(python3 "$LAT" echo $KEYS -- bash -c 'exec cat')"
printf '  %-34s %s\n' "script -q -c ... /dev/null" "$(python3 "$LAT" echo $KEYS -- script -q -c 'exec cat' /dev/null)"
rm -rf "$DATA"
printf '  %-34s %s\n' "omnish" "$(OMNISH_DATA_DIR=$DATA python3 "$LAT" echo $KEYS -- "$OMNISH" wrap bash -c 'exec cat' 2>/dev/null)"
if [ -n "$BEFORE" ]; then
    rm -rf "$DATA"
    printf '  %-34s %s\n' "before" "$(OMNISH_DATA_DIR=$DATA python3 "$LAT" echo $KEYS -- "$BEFORE" wrap bash -c 'exec cat' 2>/dev/null)"
fi

# Enter to output in a hooked interactive bash, with the store on a normal disk and on a slow
# one: strace, attached to omnish's writer thread alone, delays each of its renames and writes
# by 1 s, as a hung network mount would (the shell and everything else run at full speed).
printf "PS1='RDY> '\n" >"$TMP/rc"
ENTERS=50
echo "Enter to output on screen, \`echo \$((6*7))-out\` in interactive bash (ms: p50 p99 mean max)"
enter() { # name, samples, [--slow-writer US], command...
    local name=$1 n=$2
    shift 2
    local slow=()
    if [ "$1" = --slow-writer ]; then
        slow=(--slow-writer "$2")
        shift 2
    fi
    rm -rf "$DATA"
    printf '  %-34s %s\n' "$name" "$(OMNISH_DATA_DIR=$DATA python3 "$LAT" enter "${slow[@]}" "$n" -- "$@" 2>/dev/null)"
}
enter "bash, no recorder" $ENTERS bash --rcfile "$TMP/rc"
enter "omnish, normal disk" $ENTERS "$OMNISH" wrap bash --rcfile "$TMP/rc"
if command -v strace >/dev/null; then
    enter "omnish, slow disk (writes 1 s)" $ENTERS --slow-writer 1000000 "$OMNISH" wrap bash --rcfile "$TMP/rc"
else
    echo "  (no strace: the slow disk is not measured; apt-get install strace)"
fi
if [ -n "$BEFORE" ]; then
    enter "before, normal disk" $ENTERS "$BEFORE" wrap bash --rcfile "$TMP/rc"
    command -v strace >/dev/null &&
        enter "before, slow disk (writes 1 s)" $ENTERS --slow-writer 1000000 "$BEFORE" wrap bash --rcfile "$TMP/rc"
fi
echo
echo "reproduce: cargo build --release && bash scripts/bench-wrap.sh --runs $RUNS${BEFORE:+ --before $BEFORE}"
