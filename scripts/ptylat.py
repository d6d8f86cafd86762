#!/usr/bin/env python3
"""Latency through a pseudo-terminal relay, as a person at the keyboard feels it.

    ptylat.py echo  N -- CMD...   keystroke echo: CMD must end up running `cat` on its terminal
                                  in cooked mode; sends one key, waits for its echo, erases it
    ptylat.py enter N -- CMD...   Enter to output: CMD must be an interactive shell whose prompt
                                  contains RDY>; types `echo $((6*7))-out`, Enter, waits for
                                  "42-out" (which the echo of the typed line does not contain)
    ptylat.py cycle N -- CMD...   a whole command, as the shell's hooks cost it: types `:`,
                                  Enter, waits for the next RDY> prompt

    ptylat.py login --first LINE N -- CMD...
                                  starting a shell: types LINE (`ssh host`), Enter, waits for
                                  the far shell's RDY> prompt, types `exit`, waits for CMD's
                                  RDY> again; measures Enter to the far prompt

    --first LINE                  (before the N) types LINE at the first prompt and waits for
                                  the next one before measuring (`bash`: measure in a shell
                                  nested in CMD's)

    --line LINE                   (before the N) cycle: the command to type instead of `:`
                                  (nushell's no-op is `ignore`)

    --prompt-query                (before the N) cycle: a prompt is ready when the line editor
                                  has asked for the cursor position (ESC [ 6 n, which nushell's
                                  reedline sends once per prompt, not when it redraws the line)
                                  and then drawn RDY>

    Cursor position queries are answered (row 1, column 1), as a terminal would.

    --slow-writer US              (before the N) once the program runs, strace delays every
                                  rename and write of omnish's writer thread by US
                                  microseconds: a slow disk that slows nothing else (strace
                                  attaches to that one thread, not to the shell or its children)

Prints "p50_ms p99_ms mean_ms max_ms" for N samples. Used by bench-wrap.sh.
"""
import os
import pty
import select
import subprocess
import sys
import time


def read_until(fd, want, buf, limit=30.0):
    end = time.monotonic() + limit
    while want not in buf:
        left = end - time.monotonic()
        if left <= 0:
            raise SystemExit(f"ptylat: timed out waiting for {want!r}; got {bytes(buf[-200:])!r}")
        r, _, _ = select.select([fd], [], [], left)
        if r:
            try:
                chunk = os.read(fd, 65536)
            except OSError:
                raise SystemExit(f"ptylat: the program ended while waiting for {want!r}")
            if not chunk:
                raise SystemExit(f"ptylat: end of output while waiting for {want!r}")
            # A line editor that asks where the cursor is waits for the answer.
            for _ in range((bytes(buf[-3:]) + chunk).count(b"\x1b[6n")):
                os.write(fd, b"\x1b[1;1R")
            buf += chunk
    i = buf.index(want) + len(want)
    del buf[:i]


def writer_thread(pid, limit=10.0):
    """The thread id of omnish's writer thread in process `pid`."""
    end = time.monotonic() + limit
    while time.monotonic() < end:
        try:
            for tid in os.listdir(f"/proc/{pid}/task"):
                with open(f"/proc/{pid}/task/{tid}/comm") as f:
                    if f.read().strip() == "omnish-writer":
                        return int(tid)
        except OSError:
            pass
        time.sleep(0.01)
    raise SystemExit(f"ptylat: no omnish-writer thread in process {pid}")


def slow_down(tid, micros):
    """Attaches strace to one thread, delaying its renames and writes; returns the strace."""
    calls = "rename,renameat,renameat2,write,pwrite64,writev,fsync,fdatasync"
    tracer = subprocess.Popen(
        ["strace", "-qq", "-o", "/dev/null", "-p", str(tid), "-e", f"trace={calls}",
         "-e", f"inject={calls}:delay_enter={micros}"],
        stdin=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    end = time.monotonic() + 10
    while time.monotonic() < end:
        with open(f"/proc/{tid}/status") as f:
            if any(l.startswith("TracerPid:") and l.split()[1] != "0" for l in f):
                return tracer
        if tracer.poll() is not None:
            raise SystemExit("ptylat: strace could not attach (is ptrace permitted?)")
        time.sleep(0.01)
    raise SystemExit("ptylat: strace did not attach within 10 s")


def main():
    args = sys.argv[1:]
    slow = None
    mode = args.pop(0)
    first = None
    line = b":"
    query = False
    while args[0] in ("--slow-writer", "--first", "--line", "--prompt-query"):
        if args[0] == "--prompt-query":
            query = True
            del args[:1]
            continue
        if args[0] == "--slow-writer":
            slow = int(args[1])
        elif args[0] == "--line":
            line = args[1].encode()
        else:
            first = args[1].encode()
        del args[:2]
    n = int(args[0])
    cmd = args[args.index("--") + 1:]
    pid, fd = pty.fork()
    if pid == 0:
        os.execvp(cmd[0], cmd)
    tracer = slow_down(writer_thread(pid), slow) if slow is not None else None
    buf = bytearray()
    samples = []
    if mode == "echo":
        # Until cat runs, the probe may be echoed by the shell starting it: wait for two echoes.
        time.sleep(0.5)
        os.write(fd, b"ready\n")
        read_until(fd, b"ready\r\nready\r\n", buf)
        for _ in range(n):
            t0 = time.perf_counter_ns()
            os.write(fd, b"x")
            read_until(fd, b"x", buf)
            samples.append(time.perf_counter_ns() - t0)
            os.write(fd, b"\x7f")
            read_until(fd, b"\x08 \x08", buf)
    elif mode == "login":
        read_until(fd, b"RDY> ", buf)
        time.sleep(0.2)
        for _ in range(n):
            t0 = time.perf_counter_ns()
            os.write(fd, first + b"\r")
            read_until(fd, b"RDY> ", buf)
            samples.append(time.perf_counter_ns() - t0)
            os.write(fd, b"exit\r")
            read_until(fd, b"RDY> ", buf)
            time.sleep(0.02)
        first = None
    elif mode == "cycle":
        read_until(fd, b"RDY> ", buf)
        if first is not None:
            os.write(fd, first + b"\r")
            if query:
                del buf[:]
                read_until(fd, b"\x1b[6n", buf)
            read_until(fd, b"RDY> ", buf)
        time.sleep(0.2)
        for _ in range(n):
            if query:
                del buf[:]
            t0 = time.perf_counter_ns()
            os.write(fd, line + b"\r")
            if query:
                read_until(fd, b"\x1b[6n", buf)
            read_until(fd, b"RDY> ", buf)
            samples.append(time.perf_counter_ns() - t0)
            time.sleep(0.005)
    else:
        read_until(fd, b"RDY> ", buf)
        if first is not None:
            os.write(fd, first + b"\r")
            read_until(fd, b"RDY> ", buf)
        for _ in range(n):
            t0 = time.perf_counter_ns()
            os.write(fd, b"echo $((6*7))-out\r")
            read_until(fd, b"42-out\r\n", buf)
            samples.append(time.perf_counter_ns() - t0)
            read_until(fd, b"RDY> ", buf)
            time.sleep(0.02)
    os.write(fd, b"\x04" if mode == "echo" else (b"exit\rexit\r" if first else b"exit\r"))
    # Let it end on its own (a recorder saves its store), then make sure.
    end = time.monotonic() + 15
    while time.monotonic() < end:
        r, _, _ = select.select([fd], [], [], 0.2)
        try:
            if r and not os.read(fd, 65536):
                break
        except OSError:
            break
        done, _ = os.waitpid(pid, os.WNOHANG)
        if done:
            break
    else:
        os.kill(pid, 9)
    try:
        os.waitpid(pid, 0)
    except ChildProcessError:
        pass
    if tracer is not None:
        tracer.kill()
        tracer.wait()
    samples.sort()
    ms = [s / 1e6 for s in samples]
    p = lambda q: ms[min(len(ms) - 1, int(q * len(ms)))]
    print(f"{p(0.5):.3f} {p(0.99):.3f} {sum(ms) / len(ms):.3f} {ms[-1]:.3f}")


if __name__ == "__main__":
    main()
