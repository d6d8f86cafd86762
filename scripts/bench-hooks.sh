#!/usr/bin/env bash
# What omnish's hooks cost per command, at the top level and in a nested shell: the time from
# Enter on an empty command (`:`) to the next prompt, in plain bash, zsh and fish, in `omnish wrap`
# (hooks, markers, recorder, writer) and in a bash, zsh or fish typed inside the recorded shell
# (hooked as a nested shell, issue 16); the same for nushell (`ignore` for `:`, issue 17). Prints
# "p50 p99 mean max" in ms per variant; asserts no
# timings.
#
# Usage (from the repo root, after `cargo build --release`):
#   bash scripts/bench-hooks.sh [--runs N]     (N commands per variant, default 300)
# OMNISH_BIN overrides the binary (default target/release/omnish).
set -euo pipefail

RUNS=300
while [ $# -gt 0 ]; do
    case "$1" in
        --runs) RUNS=${2:?--runs needs a number}; shift 2 ;;
        -h|--help) sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "bench-hooks.sh: unknown argument '$1' (try --help)" >&2; exit 2 ;;
    esac
done
case "$RUNS" in ''|*[!0-9]*|0) echo "bench-hooks.sh: --runs needs a positive number" >&2; exit 2 ;; esac

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
OMNISH=${OMNISH_BIN:-$ROOT/target/release/omnish}
[ -x "$OMNISH" ] || { echo "bench-hooks.sh: no $OMNISH; run \`cargo build --release\` first" >&2; exit 1; }
unset OMNISH_SESSION_ID OMNISH_PTY
TMP=$(mktemp -d "${TMPDIR:-/tmp}/omnish-bench-hooks.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
printf "PS1='RDY> '\nHISTFILE=/dev/null\n" >"$TMP/.bashrc"
printf "PROMPT='RDY> '\nHISTFILE=/dev/null\n" >"$TMP/.zshrc"
# (An existing generated_completions keeps fish from parsing man pages in the background: fish 3
# looks in ~/.local/share/fish, fish 4 in ~/.cache/fish.)
mkdir -p "$TMP/.config/fish" "$TMP/.local/share/fish/generated_completions" \
    "$TMP/.cache/fish/generated_completions"
printf "set -g fish_greeting\nset -g fish_history ''\nfunction fish_prompt; printf 'RDY> '; end\n" \
    >"$TMP/.config/fish/config.fish"
mkdir -p "$TMP/.config/nushell"
# shellcheck disable=SC2016 # nushell's variables, for nushell
printf '$env.config.show_banner = false\n$env.PROMPT_COMMAND = {|| "RDY> " }\n$env.PROMPT_COMMAND_RIGHT = ""\n$env.PROMPT_INDICATOR = ""\n' \
    >"$TMP/.config/nushell/config.nu"
export HOME=$TMP OMNISH_DATA_DIR=$TMP/data OMNISH_CONFIG=/dev/null
LAT=$ROOT/scripts/ptylat.py

echo "# Enter on \`:\` to the next prompt, ms: p50 p99 mean max ($RUNS commands each)"
echo "# reproduce: bash scripts/bench-hooks.sh --runs $RUNS"
for sh in bash zsh fish; do
    command -v "$sh" >/dev/null || { echo "$sh: not installed, skipped"; continue; }
    printf '%-28s %s\n' "$sh -i" "$(python3 "$LAT" cycle "$RUNS" -- "$sh" -i)"
    printf '%-28s %s\n' "omnish wrap $sh" "$(python3 "$LAT" cycle "$RUNS" -- "$OMNISH" wrap "$sh")"
    for inner in bash zsh fish; do
        command -v "$inner" >/dev/null || continue
        printf '%-28s %s\n' "$inner nested in wrap $sh" \
            "$(python3 "$LAT" cycle --first "$inner" "$RUNS" -- "$OMNISH" wrap "$sh")"
    done
done
# nushell: its line editor asks for the cursor position at each prompt and redraws the line on
# Enter, so a prompt is ready once it asked and drew RDY> (--prompt-query).
if command -v nu >/dev/null; then
    NU=(--line ignore --prompt-query)
    printf '%-28s %s\n' "nu" "$(python3 "$LAT" cycle "${NU[@]}" "$RUNS" -- nu)"
    printf '%-28s %s\n' "omnish wrap nu" "$(python3 "$LAT" cycle "${NU[@]}" "$RUNS" -- "$OMNISH" wrap nu)"
    printf '%-28s %s\n' "nu nested in wrap nu" \
        "$(python3 "$LAT" cycle --first nu "${NU[@]}" "$RUNS" -- "$OMNISH" wrap nu)"
else
    echo "nu: not installed, skipped"
fi
