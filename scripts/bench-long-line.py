#!/usr/bin/env python3
"""What a long command line costs through `omnish wrap bash`, driven in a pseudo-terminal as a
person would: the line is put in bash's history, recalled with `!!` (a repeat, which bash keeps
out of history, so omnish reads it off the screen) and with `!-2` (saved: the hook reports it).
Prints the time from Enter to the next prompt (and the same in a bash without omnish), omnish's
peak resident memory, and how each recall was stored.

Usage (from the repo root, after `cargo build --release`):
  python3 scripts/bench-long-line.py [--size BYTES] [--before BIN]
    --size BYTES   length of the line (default 10000000)
    --before BIN   also measure another omnish binary (an older build), for before/after
OMNISH_BIN overrides the binary (default target/release/omnish).
"""
import glob
import json
import os
import pty
import select
import shutil
import sys
import tempfile
import time


def drive(argv, env, home):
    """Runs `argv` in a pty; returns (seconds for `!!`, seconds for `!-2`, peak RSS KiB)."""
    pid, fd = pty.fork()
    if pid == 0:
        os.chdir(home)
        os.execve(argv[0], argv, env)
    buf = bytearray()

    def until(pred, timeout=1800):
        start = time.time()
        while not pred():
            ready, _, _ = select.select([fd], [], [], 1)
            if ready:
                try:
                    buf.extend(os.read(fd, 1 << 16))
                except OSError:
                    break
            if time.time() - start > timeout:
                raise SystemExit("bench-long-line.py: timed out; is the shell stuck?")
        return time.time() - start

    def run(cmd):
        n = buf.count(b"READY> ")
        os.write(fd, cmd.encode() + b"\r")
        return until(lambda: buf.count(b"READY> ") > n and buf.rstrip().endswith(b"READY>"))

    until(lambda: buf.count(b"READY> ") >= 1)
    run('history -s "$(<~/line)"')
    screen = run("!!")
    run(": between")
    hook = run("!-2")
    with open("/proc/%d/status" % pid) as f:
        hwm = next(int(l.split()[1]) for l in f if l.startswith("VmHWM"))
    os.write(fd, b"exit\r")
    os.waitpid(pid, 0)
    os.close(fd)
    return screen, hook, hwm


def main():
    args = sys.argv[1:]
    size, before = 10_000_000, None
    while args:
        if args[0] == "--size" and len(args) > 1:
            size, args = int(args[1]), args[2:]
        elif args[0] == "--before" and len(args) > 1:
            before, args = args[1], args[2:]
        elif args[0] in ("-h", "--help"):
            print(__doc__)
            return
        else:
            sys.exit("bench-long-line.py: unknown argument %r (try --help)" % args[0])
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    binary = os.environ.get("OMNISH_BIN", os.path.join(root, "target/release/omnish"))
    if not os.access(binary, os.X_OK):
        sys.exit("bench-long-line.py: no %s; run `cargo build --release` first" % binary)
    line = ("true '" + "".join("w%08d " % i for i in range(size // 10 + 2)))[: size - 1] + "'"
    load = open("/proc/loadavg").read().split()[:3]
    print("a %d-byte command line; machine load average %s" % (size, " ".join(load)))
    runs = [("bash without omnish", None), ("omnish", binary)]
    if before:
        runs.append(("before", before))
    for label, omnish in runs:
        home = tempfile.mkdtemp(prefix="omnish-long-line.")
        try:
            with open(home + "/line", "w") as f:
                f.write(line)
            with open(home + "/.bashrc", "w") as f:
                f.write("PS1='READY> '\nHISTCONTROL=ignoredups\n")
            env = {"HOME": home, "PATH": os.environ["PATH"], "TERM": "xterm-256color",
                   "LANG": "C.UTF-8", "OMNISH_DATA_DIR": home + "/data",
                   "HISTFILE": home + "/.history"}
            bash = shutil.which("bash")
            argv = [omnish, "wrap", bash] if omnish else [bash, "-i"]
            screen, hook, hwm = drive(argv, env, home)
            print("%s: Enter to prompt %.2f s (`!!`, read off the screen), %.2f s (`!-2`, from the"
                  " hook)" % (label, screen, hook))
            if omnish:
                print("  peak RSS of omnish: %.1f MiB" % (hwm / 1024))
                for path in glob.glob(home + "/data/sessions/*/commands.jsonl"):
                    with open(path) as f:
                        for rec in map(json.loads, f):
                            if rec["command_line"].startswith("true"):
                                whole = rec.get("command_line_chars")
                                print("  stored: %d chars%s, source %s" % (
                                    len(rec["command_line"]),
                                    " (cut and marked, of %d)" % whole if whole else "",
                                    rec["command_source"]))
        finally:
            shutil.rmtree(home, ignore_errors=True)
    print()
    print("reproduce: cargo build --release && python3 scripts/bench-long-line.py --size %d%s"
          % (size, " --before " + before if before else ""))


if __name__ == "__main__":
    main()
