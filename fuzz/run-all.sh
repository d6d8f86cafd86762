#!/usr/bin/env bash
# Runs every fuzz target for SECONDS each (default 600) and keeps the corpus under corpus/.
# The committed corpus is the smallest inputs of a minimized run (`cargo fuzz cmin`); what a run
# adds stays untracked (corpus/ is ignored).
# Needs cargo-fuzz (`cargo install cargo-fuzz`); on a stable toolchain, RUSTC_BOOTSTRAP=1 lets it
# use the sanitizer flags it needs.
set -uo pipefail
cd "$(dirname "$0")" || exit
secs=${1:-600}
for t in ${TARGETS:-marker_scanner stream_frames commands_backwards mcp_request config}; do
    echo "== $t for ${secs}s"
    RUSTC_BOOTSTRAP=1 cargo fuzz run -O "$t" "corpus/$t" -- -max_total_time="$secs" -rss_limit_mb=512 -max_len=65536 2>&1 | tail -4
done
