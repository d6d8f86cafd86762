#!/usr/bin/env bash
# What hostile store files cost the readers: wall time and peak RSS (GNU time) of the issue's
# cases on a short real session (recorded here through `omnish wrap bash` in a pty) and copies
# of it damaged by this script:
#   - a record whose command line is 10 MB: `context`, `context --budget 2000`,
#     `ask --model llama3.2 --print-prompt`, MCP `recent_commands`;
#   - a 200 MB NUL tail in commands.jsonl (a crash): `context --session all`, `sessions list`;
#   - a 300 MB meta.json: `context --session all`;
#   - a digest linked to /dev/zero, a FIFO as meta.json: `context --session all`.
# Every run is limited to 4 GiB of address space and --timeout seconds (a FIFO blocks an old
# build for ever; /dev/zero would take all memory). With --before, the same for another omnish
# binary (an older build). Prints figures only; asserts nothing.
#
# Usage (from the repo root, after `cargo build --release`):
#   bash scripts/bench-hostile.sh [--before BIN] [--timeout SECS]
# OMNISH_BIN overrides the binary (default target/release/omnish).
# Needs bash, script (util-linux), python3 and GNU time (/usr/bin/time).
set -euo pipefail

BEFORE=
LIMIT=600
while [ $# -gt 0 ]; do
    case "$1" in
        --before) BEFORE=${2:?--before needs a binary}; shift 2 ;;
        --timeout) LIMIT=${2:?--timeout needs seconds}; shift 2 ;;
        -h|--help) sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "bench-hostile.sh: unknown argument '$1' (try --help)" >&2; exit 2 ;;
    esac
done
case "$LIMIT" in ''|*[!0-9]*|0) echo "bench-hostile.sh: --timeout needs a positive number" >&2; exit 2 ;; esac

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
OMNISH=${OMNISH_BIN:-$ROOT/target/release/omnish}
[ -x "$OMNISH" ] || { echo "bench-hostile.sh: no $OMNISH; run \`cargo build --release\` first" >&2; exit 1; }
if [ -n "$BEFORE" ] && [ ! -x "$BEFORE" ]; then
    echo "bench-hostile.sh: --before $BEFORE is not an executable" >&2
    exit 1
fi
for tool in script bash python3 timeout /usr/bin/time; do
    command -v "$tool" >/dev/null || { echo "bench-hostile.sh: needs $tool" >&2; exit 1; }
done
unset OMNISH_SESSION_ID OMNISH_PTY

TMP=$(mktemp -d "${TMPDIR:-/tmp}/omnish-bench-hostile.XXXXXX")
trap 'rm -rf "$TMP"' EXIT

# A short real session.
export OMNISH_DATA_DIR=$TMP/clean
for c in 'echo hello' 'seq 1 200' 'ls /nonexistent' 'uname -a'; do printf '%s\n' "$c"; sleep 0.4; done | {
    cat
    echo exit
} | SHELL=/bin/bash script -qfec "$OMNISH wrap bash" /dev/null >/dev/null 2>&1 || true
SESSION=
for d in "$OMNISH_DATA_DIR"/sessions/*/; do SESSION=$(basename "$d"); done
if [ -z "$SESSION" ] || [ ! -s "$OMNISH_DATA_DIR/sessions/$SESSION/commands.jsonl" ]; then
    echo "bench-hostile.sh: recording the session failed" >&2
    exit 1
fi
# A large output, so that a digest is cached (and can be damaged).
python3 - "$OMNISH_DATA_DIR/sessions/$SESSION" <<'EOF'
import json, os, struct, sys
d = sys.argv[1]
recs = [json.loads(l) for l in open(os.path.join(d, "commands.jsonl"))]
last = recs[-1]
data = "".join("row %d\r\n" % i for i in range(200000)).encode()
stream = os.path.join(d, "stream.bin")
off = os.path.getsize(stream)
with open(stream, "ab") as f:
    f.write(b"\x93\xce" + struct.pack(">I", 1) + b"\x01\xc6" + struct.pack(">I", len(data)) + data)
big = dict(last, seq=last["seq"] + 1, command_line="seq-like big output", stream_offset=off,
           stream_length=os.path.getsize(stream) - off, exit_code=0)
big["command_id"] = "%s:%d" % (big["session_id"], big["seq"])
with open(os.path.join(d, "commands.jsonl"), "a") as f:
    f.write(json.dumps(big) + "\n")
EOF
"$OMNISH" context --recent 20 >/dev/null

# A copy of the store with one more session, damaged by `$1` (a python snippet on `d`, the
# damaged session's directory).
damaged() {
    local name=$1 code=$2
    cp -a "$TMP/clean" "$TMP/$name"
    local src=$TMP/$name/sessions/$SESSION
    local dst=$TMP/$name/sessions/20000101T000000.000Z-0bad00
    cp -a "$src" "$dst"
    python3 -c "import os, json, sys
d = sys.argv[1]
$code" "$dst"
}

damaged cmdline '
rec = json.loads(open(os.path.join(d, "commands.jsonl")).readline())
rec.update(seq=999, exit_code=1, stream_length=0, started_at=2**52, ended_at=2**52 + 1,
           command_line="echo " + "x" * 10_000_000)
open(os.path.join(d, "commands.jsonl"), "a").write(json.dumps(rec) + "\n")
os.rename(d, d.replace("20000101T000000.000Z", "29990101T000000.000Z"))'
damaged nultail 'os.truncate(os.path.join(d, "commands.jsonl"), os.path.getsize(os.path.join(d, "commands.jsonl")) + 200_000_000)'
damaged bigmeta 'os.truncate(os.path.join(d, "meta.json"), 300_000_000)'
damaged zerodigest '
c = os.path.join(d, "cache")
for n in os.listdir(c):
    if n.endswith(".digest"):
        os.remove(os.path.join(c, n)); os.symlink("/dev/zero", os.path.join(c, n))'
damaged fifometa 'os.remove(os.path.join(d, "meta.json")); os.mkfifo(os.path.join(d, "meta.json"))'

MCP_INPUT='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"recent_commands","arguments":{}}}'

# run LABEL STORE BIN ARGS...: one timed run.
run() {
    local label=$1 store=$2 bin=$3
    shift 3
    local input=/dev/null
    if [ "$1" = mcp ]; then
        input=$TMP/mcp-input
        printf '%s\n' "$MCP_INPUT" >"$input"
    fi
    local out
    out=$( (ulimit -v 4194304; OMNISH_DATA_DIR=$TMP/$store /usr/bin/time -f '%e s, %M KB peak RSS, exit %x' \
        timeout "$LIMIT" "$bin" "$@" <"$input" >/dev/null 2>"$TMP/stderr"); tail -1 "$TMP/stderr") || true
    case "$out" in
        *'exit 124'*) out="timed out after ${LIMIT} s" ;;
    esac
    printf '   %-8s %-58s %s\n' "$label" "$store: $*" "$out"
}

BINS=("after=$OMNISH")
[ -n "$BEFORE" ] && BINS=("before=$BEFORE" "${BINS[@]}")
echo "== load: $(uptime | sed 's/.*load/load/')"
while read -r store args; do
    for b in "${BINS[@]}"; do
        # shellcheck disable=SC2086
        run "${b%%=*}" "$store" "${b#*=}" $args
    done
done <<'EOF'
clean context --budget 2000
cmdline context
cmdline context --budget 2000
cmdline ask --model llama3.2 --print-prompt
cmdline mcp
nultail context --session all
nultail sessions list
bigmeta context --session all
zerodigest context --session all
fifometa context --session all
EOF
echo "== load after: $(uptime | sed 's/.*load/load/')"
