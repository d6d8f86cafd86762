#!/usr/bin/env bash
# What the recording relay costs, in counts that do not depend on the machine's load: for `cat`
# of a file of coloured text lines through `script -q -c ... /dev/null` (the floor: a pty relay
# that records nothing), through `omnish wrap bash -c` and through an interactive, hooked
# `omnish wrap bash`, the system calls of the relay's threads (strace -f) per MiB, its context
# switches (perf stat, when installed) and the instructions it executes (valgrind callgrind, on
# a smaller file, when installed). Prints figures only.
#
# Usage (from the repo root, after `cargo build --release`):
#   bash scripts/count-wrap.sh [--mib N] [--before BIN]
#     --mib N       size of the file in MiB (default 32; callgrind runs on a quarter of it)
#     --before BIN  also count another omnish binary (an older build), for before/after
# OMNISH_BIN overrides the binary (default target/release/omnish).
set -euo pipefail

MIB=32
BEFORE=
while [ $# -gt 0 ]; do
    case "$1" in
        --mib) MIB=${2:?--mib needs a number}; shift 2 ;;
        --before) BEFORE=${2:?--before needs a binary}; shift 2 ;;
        -h|--help) sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "count-wrap.sh: unknown argument '$1' (try --help)" >&2; exit 2 ;;
    esac
done
case "$MIB" in ''|*[!0-9]*|0) echo "count-wrap.sh: --mib needs a positive number" >&2; exit 2 ;; esac

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
OMNISH=${OMNISH_BIN:-$ROOT/target/release/omnish}
[ -x "$OMNISH" ] || { echo "count-wrap.sh: no $OMNISH; run \`cargo build --release\` first" >&2; exit 1; }
[ -z "$BEFORE" ] || [ -x "$BEFORE" ] || { echo "count-wrap.sh: --before $BEFORE is not an executable" >&2; exit 1; }
for tool in script bash awk strace; do
    command -v "$tool" >/dev/null || { echo "count-wrap.sh: needs $tool" >&2; exit 1; }
done
unset OMNISH_SESSION_ID OMNISH_PTY

TMP=$(mktemp -d "${TMPDIR:-/tmp}/omnish-count-wrap.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
FILE=$TMP/build.log
SMALL=$TMP/small.log
DATA=$TMP/data
# The same text as bench-wrap.sh.
seq 1 $((MIB * 32000)) | awk '{
    m = $1 % 7
    if (m < 3)      printf "\033[1m\033[92m   Compiling\033[0m crate-%d v1.%d.%d (/home/dev/src/crate-%d)\n", $1 % 97, $1 % 40, $1 % 20, $1 % 97
    else if (m < 6) printf "test module_%d::tests::case_%d ... \033[32mok\033[0m\n", $1 % 53, $1
    else            printf "\033[1m\033[33mwarning\033[0m: unused variable: `x%d` at src/lib.rs:%d:9\n", $1, $1 % 900
}' | head -c $((MIB * 1024 * 1024)) >"$FILE" || true
head -c $((MIB * 256 * 1024)) "$FILE" >"$SMALL"

# name, then the command with F standing for the file
variants=("floor: script -c" "omnish: bash -c" "omnish: interactive bash")
run() { # variant index, binary, file, wrapper...
    local i=$1 bin=$2 f=$3
    shift 3
    rm -rf "$DATA"
    case $i in
        0) "$@" script -q -c "cat $f" /dev/null </dev/null >/dev/null ;;
        1) OMNISH_DATA_DIR=$DATA "$@" "$bin" wrap bash -c "cat $f" </dev/null >/dev/null ;;
        2) printf 'cat %s\nexit\n' "$f" | OMNISH_DATA_DIR=$DATA "$@" "$bin" wrap bash --norc >/dev/null ;;
    esac
}

# Syscalls of the relay (the first process strace saw; its threads when it has some) per MiB.
syscalls() { # strace output file
    awk -v mib="$MIB" '
        NR == 1 { main = $1 }
        /CLONE_THREAD/ && $1 == main && match($0, /= [0-9]+$/) { thread[substr($0, RSTART + 2)] = 1 }
        {
            who = ($1 == main) ? "main" : (($1 in thread) ? "thread" : "")
            # A call strace shows in two parts (unfinished, resumed) counts once.
            if (who == "" || $2 == "<...") next
            name = $2
            sub(/\(.*/, "", name)
            if (name ~ /^(read|write|poll|futex)$/) n[who " " name]++
        }
        END {
            printf "relay: read %.0f write %.0f poll %.0f futex %.0f; writer thread: write %.0f futex %.0f (per MiB)",
                n["main read"] / mib, n["main write"] / mib, n["main poll"] / mib, n["main futex"] / mib,
                n["thread write"] / mib, n["thread futex"] / mib
        }' "$1"
}

count() { # label, binary
    local label=$1 bin=$2 i
    for i in 0 1 2; do
        [ "$label" = omnish ] || [ "$i" != 0 ] || continue
        local name=${variants[$i]}
        [ "$label" = before ] && name="before: ${name#omnish: }"
        echo "$name"
        run "$i" "$bin" "$FILE" strace -f -o "$TMP/strace"
        echo "  $(syscalls "$TMP/strace")"
        if command -v perf >/dev/null; then
            run "$i" "$bin" "$FILE" perf stat -x, -o "$TMP/perf" -e context-switches,task-clock
            awk -F, '/context-switches/ { c = $1 } /task-clock/ { t = $1 }
                END { printf "  all processes: %s context switches, %.0f ms CPU (perf stat)\n", c, t }' "$TMP/perf"
        fi
        if command -v valgrind >/dev/null; then
            run "$i" "$bin" "$SMALL" valgrind --tool=callgrind --callgrind-out-file="$TMP/cg" 2>"$TMP/cg.err"
            awk -v mib="$MIB" '/refs:/ { gsub(",", "", $NF); printf "  relay instructions: %.1f M per MiB (callgrind, %d MiB)\n", $NF / 1e6 / (mib / 4), mib / 4 }' "$TMP/cg.err"
        fi
    done
}

echo "file: $MIB MiB of coloured text lines; machine load average $(cut -d' ' -f1-3 /proc/loadavg)"
count omnish "$OMNISH"
[ -z "$BEFORE" ] || count before "$BEFORE"
echo
echo "reproduce: cargo build --release && bash scripts/count-wrap.sh --mib $MIB${BEFORE:+ --before $BEFORE}"
