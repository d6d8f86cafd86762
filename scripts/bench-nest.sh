#!/usr/bin/env bash
# What following a shell through `omnish nest` costs (issue 16): the time from Enter on
# `ssh HOST` (or `sudo -u USER -i`) to the far shell's first prompt, plain and through omnish's
# bootstrap, and the cost of each command in that far shell. Starts, as root, an OpenSSH server
# on 127.0.0.1 with throwaway keys and a throwaway user (removed at the end). Prints "p50 p99
# mean max" in ms per variant; asserts no timings.
#
# Usage (from the repo root, as root, after `cargo build --release`):
#   bash scripts/bench-nest.sh [--runs N]     (N logins per variant, default 30; 10 N commands)
# (ptylat.py takes `login --first LINE N -- CMD`.)
# OMNISH_BIN overrides the binary (default target/release/omnish).
set -euo pipefail

RUNS=30
while [ $# -gt 0 ]; do
    case "$1" in
        --runs) RUNS=${2:?--runs needs a number}; shift 2 ;;
        -h|--help) sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "bench-nest.sh: unknown argument '$1' (try --help)" >&2; exit 2 ;;
    esac
done
case "$RUNS" in ''|*[!0-9]*|0) echo "bench-nest.sh: --runs needs a positive number" >&2; exit 2 ;; esac
[ "$(id -u)" -eq 0 ] || { echo "bench-nest.sh: needs root (a user and an sshd of its own)" >&2; exit 1; }
SSHD=$(command -v sshd || echo /usr/sbin/sshd)
[ -x "$SSHD" ] || { echo "bench-nest.sh: no sshd (Debian package openssh-server)" >&2; exit 1; }

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
OMNISH=${OMNISH_BIN:-$ROOT/target/release/omnish}
[ -x "$OMNISH" ] || { echo "bench-nest.sh: no $OMNISH; run \`cargo build --release\` first" >&2; exit 1; }
unset OMNISH_SESSION_ID OMNISH_PTY OMNISH_RUNTIME_DIR
TMP=$(mktemp -d "${TMPDIR:-/tmp}/omnish-bench-nest.XXXXXX")
chmod 755 "$TMP"
USERNAME=omb$(od -An -N4 -tx1 /dev/urandom | tr -d ' \n')
SSHD_PID=
cleanup() {
    [ -n "$SSHD_PID" ] && kill "$SSHD_PID" 2>/dev/null
    pkill -u "$USERNAME" 2>/dev/null || true
    userdel -r "$USERNAME" >/dev/null 2>&1 || true
    rm -f "/etc/ssh/ssh_config.d/$USERNAME.conf"
    rm -rf "$TMP"
}
trap cleanup EXIT

# The far user: bash, a prompt the measure waits for, no history file.
useradd -m -d "$TMP/far" -s /bin/bash -p '*' "$USERNAME"
printf "PS1='RDY> '\nHISTFILE=/dev/null\n" >"$TMP/far/.bashrc"
printf '. ~/.bashrc\n' >"$TMP/far/.bash_profile"
chown "$USERNAME:" "$TMP/far/.bashrc" "$TMP/far/.bash_profile"

# The server, on a free loopback port.
mkdir -p /run/sshd "$TMP/keys"
ssh-keygen -q -t ed25519 -N '' -f "$TMP/host_key"
ssh-keygen -q -t ed25519 -N '' -f "$TMP/client_key"
cp "$TMP/client_key.pub" "$TMP/keys/$USERNAME"
chmod 755 "$TMP/keys"
chmod 644 "$TMP/keys/$USERNAME"
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
cat >"$TMP/sshd_config" <<EOF
ListenAddress 127.0.0.1:$PORT
HostKey $TMP/host_key
AuthorizedKeysFile $TMP/keys/%u
StrictModes no
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
PrintMotd no
PrintLastLog no
AllowUsers $USERNAME
PidFile none
EOF
"$SSHD" -D -e -f "$TMP/sshd_config" 2>"$TMP/sshd.log" &
SSHD_PID=$!
for _ in $(seq 100); do
    (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null && break
    sleep 0.05
done

# The local side: its own HOME, an ssh alias for the far user (ssh reads the config of the
# passwd home, so a drop-in includes it), the same prompt.
LOCAL=$TMP/local
mkdir -p "$LOCAL/.ssh"
printf "PS1='RDY> '\nHISTFILE=/dev/null\n" >"$LOCAL/.bashrc"
cp "$TMP/client_key" "$LOCAL/.ssh/id"
printf '[127.0.0.1]:%s %s\n' "$PORT" "$(cut -d' ' -f1,2 "$TMP/host_key.pub")" >"$LOCAL/.ssh/known_hosts"
cat >"$LOCAL/.ssh/config" <<EOF
Host $USERNAME
    HostName 127.0.0.1
    Port $PORT
    User $USERNAME
    IdentityFile $LOCAL/.ssh/id
    UserKnownHostsFile $LOCAL/.ssh/known_hosts
    StrictHostKeyChecking yes
    BatchMode yes
    LogLevel ERROR
EOF
chmod 600 "$LOCAL/.ssh/config" "$LOCAL/.ssh/id"
printf 'Include %s/.ssh/config\n' "$LOCAL" >"/etc/ssh/ssh_config.d/$USERNAME.conf"
export HOME=$LOCAL OMNISH_DATA_DIR=$TMP/data OMNISH_CONFIG=/dev/null
PATH="$(dirname "$OMNISH"):$PATH"
export PATH
LAT=$ROOT/scripts/ptylat.py

echo "# Enter to the far shell's first prompt, ms: p50 p99 mean max ($RUNS logins each)"
echo "# reproduce: sudo bash scripts/bench-nest.sh --runs $RUNS"
row() { printf '%-44s %s\n' "$1" "$(python3 "$LAT" "${@:2}")"; }
row "ssh, plain bash" login --first "ssh $USERNAME" "$RUNS" -- bash -i
row "ssh, in omnish wrap bash (one record)" login --first "ssh $USERNAME" "$RUNS" -- "$OMNISH" wrap bash
row "omnish ssh, in omnish wrap bash (followed)" login --first "omnish ssh $USERNAME" "$RUNS" -- "$OMNISH" wrap bash
row "sudo -u U -i, plain bash" login --first "sudo -u $USERNAME -i" "$RUNS" -- bash -i
row "omnish nest -- sudo -u U -i (followed)" login --first "omnish nest -- sudo -u $USERNAME -i" "$RUNS" -- "$OMNISH" wrap bash
CMDS=$((RUNS * 10))
echo "# Enter on \`:\` to the next prompt in the far shell, ms: p50 p99 mean max ($CMDS commands each)"
row "ssh, plain bash" cycle --first "ssh $USERNAME" "$CMDS" -- bash -i
row "omnish ssh, in omnish wrap bash (followed)" cycle --first "omnish ssh $USERNAME" "$CMDS" -- "$OMNISH" wrap bash
