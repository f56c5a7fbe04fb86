"""The warm-runtime template (issue 16): one process that has already imported a runtime — the
protocol models, the turn loop, the tools and the configured providers' SDKs — and forks a new
``shard agent --stdio`` from itself whenever the daemon asks, instead of a fresh interpreter paying
for every import again.

The daemon starts it as ``python -m shard.cli.forkserver FD KEY_NAMES PADDING`` with one end of a
``SOCK_SEQPACKET`` socketpair at ``FD``. Every datagram is one JSON object:

* daemon → template: ``{"argv": [python, "-m", "shard", ...], "env": {...}, "cwd": "..."}`` with
  the child's stdin, stdout and stderr (and, when there are provider keys, the read end of the key
  pipe) attached as ``SCM_RIGHTS``; the template answers ``{"pid": N}`` or ``{"error": "..."}``,
  in request order.
* template → daemon: ``{"ready": true}`` once a runtime can serve (the rest of the warming is done
  between requests, :func:`_preload`), and ``{"exit": PID, "code": C}`` when it has reaped a child
  (``C`` as asyncio reports it: negative for a signal).

The child is made exactly what a spawned runtime is: its own session (``setsid``), those three pipes
as fds 0-2, the key pipe (if any) as fd 3 named by ``SHARD_SECRETS_FD``, no other descriptor, the
environment and working directory the daemon sent, default signal dispositions; then it runs
``shard`` with ``args`` and leaves with ``os._exit``. The template holds no secret and no thread, so a
fork copies nothing it should not. It turns non-dumpable before anything else and serves nothing if
a tracer is already attached: a key pipe passes through it, and a process of the user that could
trace it would follow the next fork (``PTRACE_O_TRACEFORK``) and read the child's key. Its children
are born non-dumpable (a fork keeps the flag) and stay so until they ``exec`` a tool. When the
daemon's end closes — or the daemon shuts its writing side: it retired the template — the template
reports the children it has reaped and exits; its children live on (a retiring daemon adopts them:
it is a child subreaper while a template leaves) and end when their own stdin does.
"""

from __future__ import annotations

import array
import contextlib
import functools
import gc
import json
import os
import selectors
import signal
import socket
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

from shard import _dataclass_code, _kept_imports, _regex_code, _schema_code, _secrets
from shard._proctitle import retitle
from shard._python import module_and_args
from shard._trace import mark

# The warming is for later runtimes; the one just forked and the daemon are then on the path of its
# first answer, and on two cores the warming's steps took a core from them (~20 ms of a fresh
# daemon's first answer): it waits this long after each fork.
QUIET_AFTER_FORK = 0.3
_MAX_MESSAGE = 1 << 20
_FDS = 4  # stdin, stdout, stderr and the key pipe
_KEY_FD = 3


def main(argv: list[str]) -> int:
    tracer = _secrets.seal()  # before anything else: no request is served while it can be traced
    if tracer:
        sys.stderr.write(f"shard: the runtime template is traced (by pid {tracer}); it serves no runtime\n")
        return 1
    mark("template: start")
    _kept_imports.install()  # before _preload imports the runtime
    _regex_code.install()  # before _preload compiles its first pattern
    _dataclass_code.install()  # and makes its first dataclass
    _schema_code.install()  # and builds its first model
    control = socket.socket(fileno=int(argv[0]))
    held_keys = [name for name in (argv[1] if len(argv) > 1 else "").split(",") if name]
    later = _preload(held_keys)
    wakeup_r, wakeup_w = os.pipe()
    os.set_blocking(wakeup_w, False)
    signal.signal(signal.SIGCHLD, lambda *_: None)  # the wakeup fd is what tells the loop
    signal.set_wakeup_fd(wakeup_w)
    selector = selectors.DefaultSelector()
    selector.register(control, selectors.EVENT_READ, "control")
    selector.register(wakeup_r, selectors.EVENT_READ, "children")
    _freeze()
    _send(control, {"ready": True})
    mark("template: ready")
    children: set[int] = set()
    quiet_until = 0.0
    while True:
        events = selector.select(max(0.0, quiet_until - time.monotonic()) if later else None)
        if not events and later and time.monotonic() >= quiet_until:
            # Nothing to serve: one more step of warming (a request waits for one step at most).
            later.pop(0)()
            if not later:  # what the warming compiled (after an upgrade), kept now: its children
                _dataclass_code.save()  # would each write it again as they leave
                _schema_code.save()
            _freeze(collect=not later)
            continue
        for key, _ in events:
            if key.data == "children":
                with contextlib.suppress(BlockingIOError):
                    os.read(wakeup_r, 512)
                _reap(control, children)
                continue
            try:
                data, ancdata, _flags, _addr = control.recvmsg(_MAX_MESSAGE, socket.CMSG_SPACE(_FDS * 4))
            except InterruptedError:
                continue
            except OSError:
                data = b""
            if not data:  # the daemon is gone, or retired this template: its children live on
                _reap(control, children)  # told what it has reaped; the rest go to the daemon (or init)
                return 0
            fds = _received_fds(ancdata)
            try:
                request = json.loads(data)
                mark("template: fork")
                pid = os.fork()
                if pid == 0:
                    _become_runtime(request, fds, (control, selector, wakeup_r, wakeup_w))
                children.add(pid)
                quiet_until = time.monotonic() + QUIET_AFTER_FORK
                reply: dict[str, Any] = {"pid": pid}
            except (OSError, ValueError, TypeError, KeyError) as exc:
                reply = {"error": f"{type(exc).__name__}: {exc}"}
            finally:
                for fd in fds:
                    os.close(fd)
            _send(control, reply)


def _freeze(*, collect: bool = False) -> None:
    """What the template built stays out of the children's collections: fewer copied pages. (The
    one collection waits for the last step: it takes tens of milliseconds.)"""
    if collect:
        gc.unfreeze()
        gc.collect()
    gc.freeze()


def _preload(held_keys: list[str]) -> list[Callable[[], None]]:
    """Import what a runtime serves with (before the template says it is ready: a fork then answers
    its first prompt without importing anything for a plain-http server, ``chat_http``), and return
    the steps that warm it further, taken between requests: the subagent tools a daemon's runtime
    offers (``_import_hosted_tools``), building Shard's models, importing the
    SDKs of the providers this configuration can reach that go through one, one failing call per
    SDK (a broken config preloads less: the runtime itself reports it)."""
    import importlib

    from shard.daemon.early_template import TEMPLATE_IMPORTS

    for name in TEMPLATE_IMPORTS:  # the list a daemon checks before it forks its template itself
        importlib.import_module(name)
    from shard.agent.providers.sdk import sdk_for_provider
    from shard.cli.main import keep_parser

    kinds: dict[str, str] = {}  # provider kind -> its SDK
    with contextlib.suppress(Exception):
        from shard.agent.catalog import builtin_api_providers
        from shard.agent.config.settings import load_config, shard_home

        config = load_config(shard_home(None))
        providers = [*config.providers, *builtin_api_providers(dict.fromkeys(held_keys, "held"))]
        kinds = {p.kind: name for p in providers if (name := sdk_for_provider(p)) is not None}
    mark("template: imports")
    warm: list[str] = []
    later: list[Callable[[], None]] = [_import_hosted_tools, keep_parser]
    later.append(lambda: later.extend(functools.partial(_build, model) for model in _deferred_models()))
    later += [functools.partial(_import_sdk, kind, name, warm) for kind, name in sorted(kinds.items())]
    later.append(lambda: _warm_up(warm))
    return later


def _import_hosted_tools() -> None:
    """The subagent tools every runtime of a daemon offers (``SHARD_DAEMON_SOCKET``): ~20 ms a child
    forked before this step imports itself, and one after it does not (a one-shot never loads them)."""
    import shard.agent.tools.subagents  # noqa: F401

    mark("template: hosted tools")


def _import_sdk(kind: str, name: str, warm: list[str]) -> None:
    from shard.agent.providers.sdk import import_now

    with contextlib.suppress(Exception):
        import_now(name)  # recorded as loaded: a runtime forked from now on never waits for it
        warm.append(kind)
    mark(f"template: {name}")


# What a daemon's new runtime builds for its first attach and prompt, in that order (``Sync`` builds
# its parts: the live window, messages, permission requests…): built first, so that a fresh daemon's
# first agent, forked once the template has had those steps, builds none of them itself (~20 ms).
FIRST_BUILDS = (
    "shard.protocol.agent_commands.RuntimeResponders",
    "shard.protocol.agent_events.Response",
    "shard.protocol.agent_commands.RuntimeSync",
    "shard.protocol.agent_events.Sync",
    "shard.protocol.agent_commands.Prompt",
    "shard.protocol.agent_events.Status",
    "shard.protocol.agent_events.TurnStart",
    "shard.protocol.agent_events.MessageDelta",
    "shard.protocol.agent_events.MessageComplete",
    "shard.protocol.agent_events.UsageEvent",
    "shard.protocol.agent_events.ToolCall",
    "shard.protocol.agent_events.ToolResult",
    "shard.protocol.agent_events.TurnEnd",
)


def _deferred_models() -> list[Any]:
    """Every Shard model a runtime may validate or serialize: they are deferred (built at first use,
    which a spawned runtime pays once), so the template builds them once for every fork, one step
    each (a request waits for one model's build at most); :data:`FIRST_BUILDS` first."""
    import pydantic

    found: dict[Any, None] = {}  # a model with two bases is found twice
    pending = [pydantic.BaseModel]
    while pending:
        model = pending.pop()
        pending.extend(model.__subclasses__())
        if model.__module__.startswith("shard.") and not model.__pydantic_complete__:
            found[model] = None
    first = {name: i for i, name in enumerate(FIRST_BUILDS)}
    return sorted(found, key=lambda m: first.get(f"{m.__module__}.{m.__qualname__}", len(first)))


def _build(model: Any) -> None:
    if not model.__pydantic_complete__:  # else built already, as another one's part
        with contextlib.suppress(Exception):
            model.model_rebuild()


def _warm_up(kinds: list[str]) -> None:
    """One failing call per SDK imported, so the first real one imports nothing more (``warm_up``)."""
    import asyncio

    from shard.agent.providers.anthropic import AnthropicProvider
    from shard.agent.providers.openai import OpenAIProvider
    from shard.agent.providers.sdk_provider import warm_up

    async def calls() -> None:
        classes = {"openai": OpenAIProvider, "anthropic": AnthropicProvider}
        for kind in kinds:
            with contextlib.suppress(Exception):
                await warm_up(classes[kind], kind)

    if kinds:
        asyncio.run(calls())
        mark("template: warm-up")
    if threading.active_count() > 1:  # a fork copies no thread: say so rather than fork a half state
        sys.stderr.write(f"shard: the runtime template holds {threading.active_count()} threads\n")


def _received_fds(ancdata: list[tuple[int, int, bytes]]) -> list[int]:
    fds = array.array("i")
    for level, kind, data in ancdata:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            fds.frombytes(data[: len(data) - (len(data) % fds.itemsize)])
    return list(fds)


def _send(control: socket.socket, message: dict[str, Any]) -> None:
    with contextlib.suppress(OSError):  # a daemon that left reads nothing more
        control.send(json.dumps(message).encode())


def _reap(control: socket.socket, children: set[int]) -> None:
    while children:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            children.clear()
            return
        if pid == 0:
            return
        children.discard(pid)
        _send(control, {"exit": pid, "code": os.waitstatus_to_exitcode(status)})


def _become_runtime(request: dict[str, Any], fds: list[int], template: tuple[Any, ...]) -> None:
    """In the forked child: never returns."""
    code = 1
    try:
        control, selector, wakeup_r, wakeup_w = template
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        selector.close()
        control.close()
        os.close(wakeup_r)
        os.close(wakeup_w)
        os.setsid()
        for target, fd in enumerate(fds[:3]):
            os.dup2(fd, target)
        env = dict(request["env"])
        if len(fds) > 3:
            os.dup2(fds[3], _KEY_FD, inheritable=False)
            env["SHARD_SECRETS_FD"] = str(_KEY_FD)
        os.closerange(_KEY_FD + (1 if len(fds) > 3 else 0), os.sysconf("SC_OPEN_MAX"))
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(env)
        args = module_and_args(request["argv"])[1:]  # after `python -P -m shard`
        sys.argv = [sys.argv[0], *args]
        retitle(request["argv"])
        from shard.cli.main import main

        code = main(args)
    except SystemExit as exit_:
        code = exit_.code if isinstance(exit_.code, int) else 1
    except KeyboardInterrupt:
        code = 130
    except BaseException:  # the runtime's own handlers failed: said on its stderr, like a crash
        with contextlib.suppress(Exception):
            import traceback

            traceback.print_exc()
    finally:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                stream.flush()
        from shard._leaving import leave  # what atexit would have removed: it never runs here

        leave()
        os._exit(code)


if __name__ == "__main__":
    code = main(sys.argv[1:])
    sys.stderr.flush()
    os._exit(code)  # no interpreter teardown: a second of a core for nothing, while runtimes stream
