#!/usr/bin/env python3
"""What a full-screen program that draws 100 MB costs `omnish context`: a recorded bash
(`omnish wrap bash`, driven in a pseudo-terminal) runs a command that enters the alternate
screen, prints SIZE bytes of rows on it and leaves; then `omnish context --last --screens` is
timed, with its peak resident memory (from wait4's rusage), twice: the first run renders the
output and caches its digest, the second reads the cache.

Usage (from the repo root, after `cargo build --release`):
  python3 scripts/bench-screens.py [--size BYTES]
OMNISH_BIN overrides the binary (default target/release/omnish).
"""
import os
import pty
import select
import shutil
import subprocess
import sys
import tempfile
import time


def drain_until(fd, marker, timeout):
    """Reads the pty until `marker` has been seen (in the last 4 KiB read); False on timeout."""
    seen = b""
    end = time.time() + timeout
    while time.time() < end:
        r, _, _ = select.select([fd], [], [], 1)
        if not r:
            continue
        try:
            data = os.read(fd, 1 << 16)
        except OSError:
            return False
        seen = (seen + data)[-4096:]
        if marker in seen:
            return True
    return False


def main():
    size = 100_000_000
    if "--size" in sys.argv:
        size = int(sys.argv[sys.argv.index("--size") + 1])
    omnish = os.path.abspath(os.environ.get("OMNISH_BIN", "target/release/omnish"))
    home = tempfile.mkdtemp(prefix="omnish-bench-screens-")
    env = {
        "HOME": home,
        "PATH": os.environ["PATH"],
        "TERM": "xterm-256color",
        "LANG": "C.UTF-8",
        "OMNISH_DATA_DIR": os.path.join(home, "data"),
        "OMNISH_CONFIG": "/dev/null",
    }
    with open(os.path.join(home, ".bashrc"), "w") as f:
        f.write("PS1='READY> '\n")
    pid, fd = pty.fork()
    if pid == 0:
        os.chdir(home)
        os.execve(omnish, [omnish, "wrap", "bash"], env)
    assert drain_until(fd, b"READY> ", 30), "no prompt"
    rows = size // 18
    line = (
        "printf 'before\\n\\033[?1049h'; yes 'a full screen row' | head -n %d; "
        "printf 'last row\\033[?1049l'; echo after-it\r" % rows
    )
    start = time.time()
    os.write(fd, line.encode())
    # The echo of the line holds `after-it` too: the output's one ends its line.
    assert drain_until(fd, b"after-it\r\n", 600), "no end of the command"
    assert drain_until(fd, b"READY> ", 60), "no prompt after the command"
    recorded = time.time() - start
    text = ""
    for run in ("first (renders it, caches the digest)", "second (from the cache)"):
        with tempfile.TemporaryFile() as out:
            t0 = time.time()
            proc = subprocess.Popen(
                [omnish, "context", "--last", "--screens"],
                env=env,
                stdout=out,
                stderr=subprocess.DEVNULL,
            )
            # wait4 on this child alone: its own peak resident memory.
            _, status, usage = os.wait4(proc.pid, 0)
            secs = time.time() - t0
            out.seek(0)
            text = out.read().decode(errors="replace")
        print(
            f"omnish context --last --screens, {run}: {secs:.2f} s, "
            f"peak RSS {usage.ru_maxrss / 1024:.1f} MiB, exit {os.waitstatus_to_exitcode(status)}, "
            f"{len(text)} bytes printed"
        )
    print(f"({size / 1e6:.0f} MB drawn on the alternate screen, recorded in {recorded:.1f} s)")
    print(text[-700:])
    os.write(fd, b"exit\r")
    end = time.time() + 30
    while time.time() < end:
        r, _, _ = select.select([fd], [], [], 1)
        try:
            if r and not os.read(fd, 1 << 16):
                break
        except OSError:
            break
    os.waitpid(pid, 0)
    shutil.rmtree(home, ignore_errors=True)


if __name__ == "__main__":
    main()
