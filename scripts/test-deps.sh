#!/usr/bin/env bash
# Installs what the tests drive for real, when missing: zsh, fish, tmux, less, vim and fzf (the
# full-screen and picker tests), strace, shellcheck,
# and for the ssh, sudo/su and container tests OpenSSH's server and client, sudo, hostname,
# podman and runc (a real container, from an image the test makes of this machine's programs),
# and chromium-headless-shell, the browser that loads the page `omnish export` writes, and node,
# which loads the opencode plugin `omnish hooks install opencode` writes, patchelf and curl (Debian
# packages); fish 4 and starship from Debian trixie's packages (pinned, sha256-checked), under
# target/;
# nushell and asciinema-player (the JS player that reads asciicast v3) from their official
# packages on the npm registry (pinned), under target/; and in a virtualenv under target/ the
# `llm` CLI with its echo model and the official MCP Python SDK and asciinema, and poetry and
# pipenv in one each of their own. Sourced by scripts/test.sh and .ci/run; it exports PATH,
# OMNISH_TEST_PYTHON and OMNISH_TEST_FISH4 for the tests. The ssh tests start their own sshd on
# a loopback port (tests/common/remote.rs): installing openssh-server here starts no server and
# leaves none running or enabled.
# shellcheck shell=bash

need=()
for tool in zsh fish tmux less vim fzf strace shellcheck sudo ssh hostname chromium-headless-shell node patchelf curl podman runc; do
    command -v "$tool" >/dev/null 2>&1 || need+=("$tool")
done
# Debian names the packages of these after the project, not the program.
command -v ssh-keygen >/dev/null 2>&1 || need+=(ssh-keygen)
command -v sshd >/dev/null 2>&1 || [ -x /usr/sbin/sshd ] || need+=(openssh-server)
if [ ${#need[@]} -gt 0 ]; then
    packages=()
    for tool in "${need[@]}"; do
        case $tool in
            ssh | ssh-keygen) packages+=(openssh-client) ;;
            node) packages+=(nodejs) ;;
            *) packages+=("$tool") ;;
        esac
    done
    # Once each (ssh and ssh-keygen are one package).
    mapfile -t packages < <(printf '%s\n' "${packages[@]}" | sort -u)
    echo "installing ${packages[*]} (apt)" >&2
    sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    # openssh-server's postinst starts the ssh service: a policy-rc.d that refuses every start
    # (Debian's mechanism, as container images ship it) keeps it from doing so, unless the
    # machine has one already. Removed again whatever apt did (this file is sourced: no trap).
    policy=""
    if [ ! -e /usr/sbin/policy-rc.d ]; then
        policy=/usr/sbin/policy-rc.d
        printf '#!/bin/sh\n# omnish scripts/test-deps.sh: start no service while it installs\nexit 101\n' |
            $sudo tee "$policy" >/dev/null
        $sudo chmod 755 "$policy"
    fi
    status=0
    $sudo apt-get update -qq || status=$?
    if [ "$status" -eq 0 ]; then
        DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${packages[@]}" >/dev/null ||
            status=$?
    fi
    [ -z "$policy" ] || $sudo rm -f "$policy"
    if [ "$status" -ne 0 ]; then
        echo "apt-get failed (status $status) installing ${packages[*]}" >&2
        return "$status"
    fi
    if printf '%s\n' "${packages[@]}" | grep -qx openssh-server; then
        # Under systemd the package enables the service (and a socket) for the next boot, and
        # may have started it: neither on a machine that runs the tests.
        if [ -d /run/systemd/system ]; then
            $sudo systemctl disable --now --quiet ssh.service ssh.socket 2>/dev/null || true
        fi
        # Whatever started it anyway (an init script): stopped. The tests start their own sshd,
        # and nothing of this install listens on port 22. (Only an sshd installed just now: one
        # that ran before is the machine's own.)
        pid=$(cat /run/sshd.pid 2>/dev/null || true)
        if [ -n "$pid" ] && [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = sshd ]; then
            echo "stopping the ssh service the package started (pid $pid)" >&2
            $sudo kill "$pid" || true
        fi
    fi
fi

# nushell: the release binary of the npm package for this machine (`nushell` itself is a Node
# wrapper that starts it; the tests want the shell itself, as users run it). Pinned: the hooks
# are tested against this version.
nu_version=0.115.1
nu_dir="${OMNISH_CI_NUSHELL:-$PWD/target/ci-nushell}"
case $(uname -m) in
    x86_64) nu_arch=x64 ;;
    aarch64) nu_arch=arm64 ;;
    *) nu_arch=$(uname -m) ;;
esac
nu_bin="$nu_dir/node_modules/@nushell/linux-$nu_arch/bin/nu"
if [ "$("$nu_bin" --version 2>/dev/null)" != "$nu_version" ]; then
    echo "installing nushell $nu_version into $nu_dir (npm)" >&2
    mkdir -p "$nu_dir"
    npm install --silent --no-audit --no-fund --prefix "$nu_dir" "@nushell/linux-$nu_arch@$nu_version" ||
        { echo "npm failed installing nushell $nu_version" >&2; return 1; }
fi
mkdir -p "$nu_dir/bin"
ln -sf "$nu_bin" "$nu_dir/bin/nu"
export PATH="$nu_dir/bin:$PATH"

# fish 4 and starship, the real prompt framework (tests/wrap_fish.rs runs its fish scenarios in
# fish 4 too): Debian trixie's packages, pinned and checked against the sha256 of trixie's
# Packages index, extracted with `dpkg-deb -x` under target/ (nothing of the system changes).
# Their binaries need glibc >= 2.39, so trixie's libc6 comes along, and patchelf points each
# binary at trixie's loader and libraries (interpreter and RUNPATH): the programs fish starts
# use the system's libc, and fish 4, which finds its data (functions, completions) beside its
# own executable (<dir>/usr/bin/fish -> <dir>/usr/share/fish and <dir>/usr/etc/fish), finds
# trixie's and reports its own path (`status fish-path`, which `omnish init fish --wrap`
# runs). (Through `ld-linux-x86-64.so.2 --library-path`, its executable would be the loader:
# fish 4 would take bookworm's fish 3.6 data and report the loader as its path.)
# Exports OMNISH_TEST_FISH4 (the directory holding fish 4's `fish`; the tests put it first in
# PATH) and puts starship on PATH. When a download fails, one line says so and the tests that
# need them fail (or skip, with OMNISH_ALLOW_SKIP=1): the rest of the suite still runs.
fish4_dir="${OMNISH_CI_FISH4:-$PWD/target/ci-fish4}"
fish4_want="fish, version 4.0.2 | starship 1.22.1"
fish4_have() {
    printf '%s | %s' "$("$fish4_dir/bin/fish" --version 2>/dev/null)" \
        "$("$fish4_dir/tools/starship" --version 2>/dev/null | head -1)"
}
if [ "$(uname -m)" = x86_64 ] && [ "$(fish4_have)" != "$fish4_want" ]; then
    echo "installing fish 4.0.2 and starship 1.22.1 into $fish4_dir (Debian trixie)" >&2
    fish4_ok=1
    rm -rf "$fish4_dir"
    mkdir -p "$fish4_dir/debs" "$fish4_dir/root" "$fish4_dir/bin" "$fish4_dir/tools"
    while read -r sum path; do
        deb="$fish4_dir/debs/${path##*/}"
        if ! curl -sSf --retry 2 -o "$deb" "http://deb.debian.org/debian/$path" ||
            ! echo "$sum  $deb" | sha256sum -c --quiet -; then
            echo "fish 4: could not fetch or check ${path##*/}" >&2
            fish4_ok=0
            break
        fi
        dpkg-deb -x "$deb" "$fish4_dir/root"
    done <<'DEBS'
56136a4d9bee8e8cc4fc7ae43d54c82b7eb49e4f24bb1853aad92659490b3a20 pool/main/f/fish/fish_4.0.2-1_amd64.deb
eaeaf43cd391711060db323af1fd98bd5b61589b6c15ab27fbd14d06067e5924 pool/main/f/fish/fish-common_4.0.2-1_all.deb
b59b0625cd1a791375d40dab23a4d5d3d0641e3d0a773501becdc3725b7f99cf pool/main/g/glibc/libc6_2.41-12+deb13u5_amd64.deb
d6095c7eebb3e783243ec9784b9b6774434aa5c16aca8f179483215fadb4313c pool/main/p/pcre2/libpcre2-32-0_10.46-1~deb13u3_amd64.deb
e226f661d918f04daf38cdbc4806b7ed7d6ef95c7eb0ade692fc350e31970040 pool/main/p/pcre2/libpcre2-8-0_10.46-1~deb13u3_amd64.deb
3c71917b490d1a17aed43196a2787a256ecf060526cdb20216a74bedc061b150 pool/main/g/gcc-14/libgcc-s1_14.2.0-19_amd64.deb
be0d0a9a02d2f1e9ede0f70aa2113dde85013c7e87ae839a10399dcb546bd142 pool/main/s/starship/starship_1.22.1-5_amd64.deb
DEBS
    if [ "$fish4_ok" = 1 ]; then
        rm -rf "$fish4_dir/debs"
        lib="$fish4_dir/root/usr/lib/x86_64-linux-gnu"
        for b in fish fish_indent fish_key_reader starship; do
            patchelf --set-interpreter "$lib/ld-linux-x86-64.so.2" --set-rpath "$lib" \
                "$fish4_dir/root/usr/bin/$b"
        done
        ln -sfn ../etc "$fish4_dir/root/usr/etc"
        for b in fish fish_indent fish_key_reader; do
            ln -sf "../root/usr/bin/$b" "$fish4_dir/bin/$b"
        done
        ln -sf ../root/usr/bin/starship "$fish4_dir/tools/starship"
        [ "$(fish4_have)" = "$fish4_want" ] ||
            echo "fish 4: installed, but it does not run: $(fish4_have)" >&2
    fi
fi
if [ "$(fish4_have)" = "$fish4_want" ]; then
    export OMNISH_TEST_FISH4="$fish4_dir/bin"
    export PATH="$fish4_dir/tools:$PATH"
fi

# asciinema-player (pinned), asciinema's own JS player: the independent reader of the asciicast
# v3 files `omnish export` writes (asciinema 3, the CLI that reads v3, is not on PyPI; the tests
# load the player in the headless Chromium above). Its package from the npm registry, under
# target/, installed only when missing.
player_version=3.18.0
player_dir="${OMNISH_CI_ASCIINEMA_PLAYER:-$PWD/target/ci-asciinema-player}"
player_pkg="$player_dir/node_modules/asciinema-player"
if ! grep -q "\"version\": \"$player_version\"" "$player_pkg/package.json" 2>/dev/null; then
    echo "installing asciinema-player $player_version into $player_dir (npm)" >&2
    mkdir -p "$player_dir"
    npm install --silent --no-audit --no-fund --prefix "$player_dir" "asciinema-player@$player_version" ||
        { echo "npm failed installing asciinema-player $player_version" >&2; return 1; }
fi
export OMNISH_TEST_ASCIINEMA_PLAYER="$player_pkg/dist/bundle/asciinema-player.min.js"

venv="${OMNISH_CI_VENV:-$PWD/target/ci-venv}"
# asciinema 2.x (pinned): the real CLI that reads back the asciicast `omnish export` writes.
if ! "$venv/bin/python" -c 'import mcp' >/dev/null 2>&1 || [ ! -x "$venv/bin/llm" ] ||
    [ "$("$venv/bin/asciinema" --version 2>/dev/null)" != "asciinema 2.4.0" ]; then
    echo "installing llm, llm-echo, mcp and asciinema into $venv (pip)" >&2
    python3 -m venv "$venv"
    "$venv/bin/pip" install -q --disable-pip-version-check llm==0.36 llm-echo==0.5 mcp==2.3.0 \
        asciinema==2.4.0
fi
# Installs SPEC with pip into a virtualenv of its own at DIR, unless PROGRAM there already says
# WANT to --version, and links PROGRAM into the first virtualenv's bin.
omnish_ci_own_venv() {
    local dir=$1 program=$2 want=$3 spec=$4
    if [ "$("$dir/bin/$program" --version 2>/dev/null)" != "$want" ]; then
        echo "installing $spec into $dir (pip)" >&2
        python3 -m venv "$dir"
        "$dir/bin/pip" install -q --disable-pip-version-check "$spec"
    fi
    ln -sf "$dir/bin/$program" "$venv/bin/$program"
}
# Real programs that start the user's shell for a project (tests/nest.rs), each in a virtualenv
# of its own (their dependencies and llm's do not agree): poetry 1.8 (pinned: `poetry shell` is
# built in up to 1.8), pipenv, whose `pipenv shell` starts the shell through pexpect and
# reads its first output away, and hatch, whose `hatch shell` starts it through pexpect and
# types the virtualenv's activation into it.
omnish_ci_own_venv "${OMNISH_CI_POETRY_VENV:-$PWD/target/ci-poetry}" poetry \
    "Poetry (version 1.8.5)" poetry==1.8.5
omnish_ci_own_venv "${OMNISH_CI_PIPENV_VENV:-$PWD/target/ci-pipenv}" pipenv \
    "pipenv, version 2026.10.3" pipenv==2026.10.3
omnish_ci_own_venv "${OMNISH_CI_HATCH_VENV:-$PWD/target/ci-hatch}" hatch \
    "Hatch, version 1.18.2" hatch==1.18.2
unset -f omnish_ci_own_venv
export PATH="$venv/bin:$PATH"
export OMNISH_TEST_PYTHON="$venv/bin/python"
