#!/usr/bin/env bash
# The README's test command: installs what the tests need (scripts/test-deps.sh), then runs every
# test. Arguments go to `cargo test` (`bash scripts/test.sh --test wrap_bash`).
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/test-deps.sh
. scripts/test-deps.sh
cargo test --locked "$@"
