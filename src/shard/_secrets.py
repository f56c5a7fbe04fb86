"""Provider keys, kept where no tool can read them (stdlib only: it runs before ``hello``).

A key arrives in an environment variable (``OPENAI_API_KEY``, or the one ``api_key_env`` names).
Any command the agent runs could print it — from its own environment, or from its ancestors' through
``/proc/<pid>/environ``, which shows the *initial* environment block however ``os.environ`` changes
later. So a Shard process takes its keys at start (:func:`capture`): each moves into this module's
memory, leaves ``os.environ`` (so no child inherits it) and is overwritten with NUL bytes in the
initial block (so ``/proc`` shows nothing); the process then turns non-dumpable, so its memory is not
readable through ``/proc/<pid>/mem`` by the user's other processes. Later readers ask :func:`get`.

The daemon hands its runtimes their keys through a pipe (:func:`handoff`): a runtime's environment
and command line, both readable through ``/proc``, never hold a key; the runtime reads the pipe once
at start (:func:`inherit`) and closes it before any tool runs.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from collections.abc import Iterable

FD_VARIABLE = "SHARD_SECRETS_FD"
_store: dict[str, str] = {}
_asked: set[str] = set()  # every variable capture() was given, set or not


def capture(names: Iterable[str]) -> None:
    """Take the variables ``names`` out of the environment into memory, and scrub them from the
    initial environment block."""
    taken = set()
    for name in names:
        _asked.add(name)
        value = os.environ.pop(name, None)
        if value:
            _store.setdefault(name, value)
            taken.add(name)
    if taken:
        _scrub_initial_environment(taken)
        _undumpable()


def get(name: str) -> str | None:
    """The key held under ``name``; one that was never captured (a variable config did not name
    at start) is read from the environment."""
    return _store.get(name) or os.environ.get(name)


def held() -> dict[str, str]:
    """Every key held, for building the catalog (a provider appears when its key is set)."""
    return dict(_store)


def asked() -> set[str]:
    """The key variables this process was asked to capture (set or not): what it can say of them
    is final — a runtime it starts reads none of them from anywhere else."""
    return set(_asked)


def inherit() -> None:
    """Read the keys a parent handed over through the pipe named by ``SHARD_SECRETS_FD``.

    The process turns non-dumpable before it reads, and reads only if no tracer is attached: a
    tracer that attached earlier (while it was still dumpable, or to the template it was forked
    from) stays attached through ``PR_SET_DUMPABLE`` and would see the key arrive. Then the pipe is
    closed unread and the runtime goes on without keys (one line on stderr says why)."""
    raw = os.environ.pop(FD_VARIABLE, None)
    if raw is None:
        return
    _scrub_initial_environment({FD_VARIABLE})
    try:
        fd = int(raw)
    except ValueError:
        return
    tracer = seal()
    if tracer:
        with contextlib.suppress(OSError):
            os.close(fd)
        sys.stderr.write(f"shard: this process is traced (by pid {tracer}): its provider keys are withheld\n")
        return
    with contextlib.suppress(ValueError, OSError):
        chunks = []
        try:
            while chunk := os.read(fd, 65536):
                chunks.append(chunk)
        finally:
            os.close(fd)
        data = json.loads(b"".join(chunks) or b"{}")
        if isinstance(data, dict):
            _store.update({k: v for k, v in data.items() if isinstance(k, str) and isinstance(v, str)})


MAX_HANDOFF_BYTES = 4 << 20  # keys, a config.toml and a system prompt: far less in practice


def inherit_stream(fd: int = 0) -> dict[str, object]:
    """Read the handoff a daemon sends a runtime on another host ahead of the protocol on its stdin:
    a line with the payload's length, then that many bytes of JSON ``{"keys": {…}, …}``. Nothing
    past it is read, so the protocol's first line is left for the runtime. The keys go into memory
    (the process sealed first, as :func:`inherit`); the other members are returned.

    The key crossed the SSH channel, never a command line, an environment or the host's disk."""
    digits = b""
    while not digits.endswith(b"\n"):
        byte = os.read(fd, 1)
        if not byte or len(digits) > 12:
            raise ValueError("no handoff on stdin")
        digits += byte
    size = int(digits)
    if not 0 <= size <= MAX_HANDOFF_BYTES:
        raise ValueError("a handoff of an impossible size")
    chunks: list[bytes] = []
    while size:
        chunk = os.read(fd, size)
        if not chunk:
            raise ValueError("the handoff was cut short")
        chunks.append(chunk)
        size -= len(chunk)
    data = json.loads(b"".join(chunks) or b"{}")
    if not isinstance(data, dict):
        raise ValueError("the handoff is not an object")
    keys = data.pop("keys", None)
    asked = data.pop("asked", None)
    if isinstance(asked, list):
        _asked.update(name for name in asked if isinstance(name, str))
    traced = seal()
    if traced:
        sys.stderr.write(f"shard: this process is traced (by pid {traced}): its provider keys are withheld\n")
    elif isinstance(keys, dict):
        _store.update({k: v for k, v in keys.items() if isinstance(k, str) and isinstance(v, str)})
    return data


def handoff_bytes(extra: dict[str, object], *, keys: bool = True) -> bytes:
    """What :func:`inherit_stream` reads: every key held (none when ``keys`` is false: a host that
    uses its own configuration), with ``extra``."""
    held = {"keys": dict(_store), "asked": sorted(_asked)} if keys else {}
    payload = json.dumps({**held, **extra}).encode()
    return f"{len(payload)}\n".encode() + payload


def seal() -> int:
    """Make this process non-dumpable (no other process of the user can attach to it or read its
    memory or descriptors through ``/proc``) and return the pid of a tracer already attached, 0 if
    none: a process that is about to hold a key must not hold it while traced."""
    _undumpable()
    return tracer()


def tracer() -> int:
    """The pid tracing this process (``TracerPid`` of ``/proc/self/status``), 0 if none or unknown."""
    try:
        with open("/proc/self/status", "rb") as f:
            for line in f:
                if line.startswith(b"TracerPid:"):
                    return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return 0


def handoff() -> int | None:
    """A pipe's read end holding every key for a child (pass it in ``pass_fds`` and name it in
    ``SHARD_SECRETS_FD``; close it after the spawn); None when there is nothing to hand over."""
    if not _store:
        return None
    data = json.dumps(_store).encode()
    read_end, write_end = os.pipe()
    try:
        os.write(write_end, data)  # a few hundred bytes: far below the pipe's buffer, never blocks
    finally:
        os.close(write_end)
    return read_end


def _scrub_initial_environment(names: set[str]) -> None:
    """Overwrite ``NAME=value`` of ``names`` in the block ``/proc/self/environ`` shows.

    The block's bounds are fields 50 and 51 of ``/proc/self/stat`` (Linux ≥ 3.5). Where they are
    not available (another system) there is no ``/proc/<pid>/environ`` to protect from.
    """
    try:
        with open("/proc/self/stat", "rb") as f:
            stat = f.read()
        fields = stat[stat.rindex(b")") + 2 :].split()
        start, end = int(fields[47]), int(fields[48])
    except (OSError, ValueError, IndexError):
        return
    if not 0 < start < end:
        return
    import ctypes  # only when there is something to scrub: not on every start

    block = ctypes.string_at(start, end - start)
    offset = 0
    for entry in block.split(b"\0"):
        name = entry.split(b"=", 1)[0].decode("utf-8", "replace")
        if name in names and b"=" in entry:
            ctypes.memset(start + offset, 0, len(entry))
        offset += len(entry) + 1


def _undumpable() -> None:
    """Keys now live in this process's memory: make it non-dumpable, so another process of the same
    user (a command a tool runs) can neither attach to it nor read ``/proc/<pid>/mem`` (root still
    can). Children are dumpable again after their ``exec``, so tools are unaffected."""
    from shard._prctl import PR_SET_DUMPABLE, prctl

    call = prctl()
    if call is not None:  # else not Linux: no /proc/<pid>/mem to protect
        call(PR_SET_DUMPABLE, 0, 0, 0, 0)
