#!/usr/bin/env bash
# What token counting costs a short `omnish context` call: the common `--model X` calls and
# `--budget 2000` on a small real session (12 commands, ~1,400 lines of output, recorded here
# through `omnish wrap bash` in a pty), timed with hyperfine, and the same calls' instruction
# totals under `valgrind --tool=callgrind` (load-independent), in all and inside the
# tokenizer's `count` (table set-up, pattern compile and every count of the call). Then the
# binary size. With --before, the same for another omnish binary (an older build).
# Prints figures only; asserts no timings.
#
# Usage (from the repo root, after `cargo build --release`):
#   bash scripts/bench-tokenizer.sh [--runs N] [--before BIN]
#     --runs N      hyperfine runs per case (default 30), after 3 warm-ups
#     --before BIN  also measure another omnish binary (an older build), for before/after
# OMNISH_BIN overrides the binary (default target/release/omnish).
# Needs bash, script (util-linux) and hyperfine; valgrind is optional.
set -euo pipefail

RUNS=30
BEFORE=
while [ $# -gt 0 ]; do
    case "$1" in
        --runs) RUNS=${2:?--runs needs a number}; shift 2 ;;
        --before) BEFORE=${2:?--before needs a binary}; shift 2 ;;
        -h|--help) sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "bench-tokenizer.sh: unknown argument '$1' (try --help)" >&2; exit 2 ;;
    esac
done
case "$RUNS" in ''|*[!0-9]*|0) echo "bench-tokenizer.sh: --runs needs a positive number" >&2; exit 2 ;; esac

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
OMNISH=${OMNISH_BIN:-$ROOT/target/release/omnish}
[ -x "$OMNISH" ] || { echo "bench-tokenizer.sh: no $OMNISH; run \`cargo build --release\` first" >&2; exit 1; }
if [ -n "$BEFORE" ] && [ ! -x "$BEFORE" ]; then
    echo "bench-tokenizer.sh: --before $BEFORE is not an executable" >&2
    exit 1
fi
for tool in script bash hyperfine python3; do
    command -v "$tool" >/dev/null || { echo "bench-tokenizer.sh: needs $tool" >&2; exit 1; }
done
unset OMNISH_SESSION_ID OMNISH_PTY

TMP=$(mktemp -d "${TMPDIR:-/tmp}/omnish-bench-tok.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
export OMNISH_DATA_DIR=$TMP/data

# A short real session: commands typed into a wrapped bash, a few hundred lines each at most.
COMMANDS=(
    'seq 1 300' 'head -120 /etc/services' 'ls -la /usr/lib | head -60' 'ls -la /usr/bin | head -250'
    'bash --version' 'printf "%s\n" {1..40} | sed s/^/line-/' 'ls -la /usr/bin | tail -200'
    'uname -a' 'head -40 /etc/passwd' 'ls -la /etc | head -70' 'false' 'ls -la / | head -30'
)
for c in "${COMMANDS[@]}"; do printf '%s\n' "$c"; sleep 0.4; done | {
    cat
    echo exit
} | SHELL=/bin/bash script -qfec "$OMNISH wrap bash" /dev/null >/dev/null 2>&1 || true
n=$(cat "$OMNISH_DATA_DIR"/sessions/*/commands.jsonl 2>/dev/null | wc -l)
[ "$n" -ge 10 ] || { echo "bench-tokenizer.sh: recording the session failed ($n commands)" >&2; exit 1; }

CASES=("--model gpt-4o" "--model llama3.2" "--budget 2000" "--model gpt-4o --max-lines 0")
echo "== session: $n commands; the default document is $("$OMNISH" context | wc -c) bytes"
for args in "${CASES[@]}"; do
    # shellcheck disable=SC2086
    echo "   context $args: $("$OMNISH" context $args --format json | python3 -c '
import json, sys
b = json.load(sys.stdin)["budget"]
fit = "counted: %d tokens" % b["tokens"] if b["tokens"] is not None else "fits uncounted"
print("budget %d, %s, %s" % (b["budget"], b["tokenizer"], fit))')"
done

BINS=("after=$OMNISH")
[ -n "$BEFORE" ] && BINS=("before=$BEFORE" "${BINS[@]}")

echo
echo "== wall time (hyperfine, $RUNS runs, 3 warm-ups); load: $(uptime | sed 's/.*load/load/')"
for args in "${CASES[@]}"; do
    cmds=()
    for b in "${BINS[@]}"; do cmds+=(-n "${b%%=*}: context $args" "${b#*=} context $args"); done
    hyperfine -N --warmup 3 --runs "$RUNS" --style basic "${cmds[@]}" 2>&1 | grep -E 'Benchmark|Time|Range|±' || true
done
echo "load after: $(uptime | sed 's/.*load/load/')"

if command -v valgrind >/dev/null; then
    echo
    echo "== instructions (valgrind --tool=callgrind): whole call, and inside TokenCounter::count"
    for b in "${BINS[@]}"; do
        for args in "${CASES[@]}"; do
            out=$TMP/cg.out
            # shellcheck disable=SC2086
            valgrind --tool=callgrind --callgrind-out-file="$out" "${b#*=}" context $args >/dev/null 2>"$TMP/cg.err"
            total=$(grep -E '^(summary|totals):' "$out" | head -1 | awk '{print $2}' || true)
            # A call that fits uncounted never enters count.
            count=$(callgrind_annotate --inclusive=yes "$out" 2>/dev/null |
                grep -E 'TokenCounter>::count' | head -1 | awk '{gsub(",", "", $1); print $1}' || true)
            printf '   %-7s context %-32s %14s Ir total, %14s Ir counting\n' \
                "${b%%=*}:" "$args" "$total" "${count:-0}"
        done
    done
fi

if [ -x /usr/bin/time ]; then
    echo
    echo "== peak RSS (/usr/bin/time)"
    for b in "${BINS[@]}"; do
        for args in "${CASES[@]}"; do
            # shellcheck disable=SC2086
            kb=$( { /usr/bin/time -f %M "${b#*=}" context $args >/dev/null; } 2>&1 | tail -1)
            printf '   %-7s context %-32s %6s KiB\n' "${b%%=*}:" "$args" "$kb"
        done
    done
fi

echo
echo "== binary size"
for b in "${BINS[@]}"; do printf '   %-7s %s bytes\n' "${b%%=*}:" "$(stat -c %s "${b#*=}")"; done
echo
echo "reproduce: bash scripts/bench-tokenizer.sh --runs $RUNS${BEFORE:+ --before $BEFORE}"
