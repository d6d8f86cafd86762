#!/usr/bin/env bash
# Installs what the tests drive for real, when missing: zsh, tmux, less, strace and shellcheck
# (Debian packages), and in a virtualenv under target/ the `llm` CLI with its echo model and the
# official MCP Python SDK. Sourced by scripts/test.sh and .ci/run; it exports PATH and
# OMNISH_TEST_PYTHON for the tests.
# shellcheck shell=bash

need=()
for tool in zsh tmux less strace shellcheck; do
    command -v "$tool" >/dev/null 2>&1 || need+=("$tool")
done
if [ ${#need[@]} -gt 0 ]; then
    echo "installing ${need[*]} (apt)" >&2
    sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${need[@]}" >/dev/null
fi

venv="${OMNISH_CI_VENV:-$PWD/target/ci-venv}"
if ! "$venv/bin/python" -c 'import mcp' >/dev/null 2>&1 || [ ! -x "$venv/bin/llm" ]; then
    echo "installing llm, llm-echo and mcp into $venv (pip)" >&2
    python3 -m venv "$venv"
    "$venv/bin/pip" install -q --disable-pip-version-check llm==0.36 llm-echo==0.5 mcp==2.3.0
fi
export PATH="$venv/bin:$PATH"
export OMNISH_TEST_PYTHON="$venv/bin/python"
