"""``shard run`` through a running daemon (issue 16): when a daemon serves this SHARD_HOME, the
one-shot becomes a client of it — a fresh agent (forked warm from the daemon's template, so no
interpreter start and no imports are paid), one prompt, its events printed exactly as a run in this
process prints them, then the agent is removed (``--keep`` leaves it, to be opened in the web client
or ``shard attach``). The session is kept either way, as a direct run keeps it.

The run attaches as an *observer*: it answers nothing, so the agent's headless policy decides every
permission request, as it does in a direct run — unless a person attaches to the agent (in the web
client) and answers. Runs that carry their own allowances (``--allow``, ``--yes-to-all``) stay direct:
those grants belong to this process, not to an agent every client can see.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import signal
import socket
from pathlib import Path
from typing import Any

import orjson

from shard._version import PROTOCOL_VERSION
from shard.cli.run_output import JsonPrinter, Printer, TextPrinter, err, watch_stdout
from shard.protocol.correlator import Correlator, Refused

EXIT_FAILED, EXIT_USAGE, EXIT_SESSION, EXIT_INTERRUPTED, EXIT_PIPE = 1, 2, 3, 130, 141
_DAEMON_ONLY = ("agent_id", "runtime_epoch", "client_id")  # what the daemon adds (client_id: its hello)
_ORCHESTRATOR = ("agent_", "subagent_", "workspace_")  # event types about agents, not from one


def daemon_socket(home: Path) -> Path | None:
    """The unix socket of a daemon that answers on ``home``, or None (no daemon, or a stale
    ``daemon.json`` left by one that died)."""
    try:
        path = Path(json.loads((home / "daemon.json").read_text())["socket"])
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
            probe.settimeout(1.0)
            probe.connect(str(path))
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return path


def goes_direct(args: argparse.Namespace) -> bool:
    """What a daemon-hosted agent cannot take from this command line."""
    return bool(args.direct or args.allow or args.yes_to_all or args.create)


class _Link:
    """The daemon connection: JSONL both ways, plain dicts (no SDK: this one-shot does not pay for
    pydantic). A command sent with :meth:`call` is answered through the protocol's correlator; the
    run's prompt and abort go out with ids of their own and are answered among the events."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer
        self.calls = Correlator()

    def send(self, message: dict[str, Any]) -> None:
        self.writer.write(orjson.dumps(message) + b"\n")

    async def next(self) -> dict[str, Any]:
        line = await self.reader.readline()
        if not line:
            self.calls.close(EOFError("the daemon closed the connection"))
            raise EOFError
        message = orjson.loads(line)
        return message if isinstance(message, dict) else {}

    async def call(self, command: dict[str, Any]) -> dict[str, Any]:
        """Send ``command``; its response's data (:class:`Refused` for a refusal). What the daemon
        sends meanwhile is passed over."""
        message, answer = self.calls.request(command)
        self.send(message)
        while not answer.done():
            self.calls.feed(await self.next())
        return answer.result()

    async def data(self, command: dict[str, Any]) -> dict[str, Any]:
        """The response's data; ``{}`` when the daemon refused."""
        try:
            return await self.call(command)
        except Refused:
            return {}


async def run_via_daemon(args: argparse.Namespace, path: Path, cwd: str) -> int | None:
    """The run's exit status; None when the run is to go direct after all: the daemon could not be
    reached (it stopped since ``daemon_socket`` saw it), or its provider environment is not this
    shell's — nothing was run there."""
    try:
        reader, writer = await asyncio.open_unix_connection(str(path), limit=1 << 27)
    except OSError:
        return None
    link = _Link(reader, writer)
    try:
        return await _run(link, args, cwd)
    except (EOFError, ConnectionError):
        err("shard: the daemon went away during the run")
        return EXIT_FAILED
    finally:
        writer.close()
        with contextlib.suppress(OSError):
            await writer.wait_closed()


async def _run(link: _Link, args: argparse.Namespace, cwd: str) -> int | None:
    hello = await link.next()
    version = str(hello.get("protocol_version", ""))
    if hello.get("type") != "hello" or version.split(".")[0] != PROTOCOL_VERSION.split(".")[0]:
        err(f"shard: the daemon speaks protocol {version or '?'}, this shard {PROTOCOL_VERSION}")
        return EXIT_FAILED
    held = await _held(link, args.session) if args.session is not None else None
    config = _config(args)
    differ = await _differing(link, config) if config is not None else ["config.toml"]
    if differ and held is not None:
        err(
            f"shard: session {args.session} is open in the daemon's agent {held}, which calls the model "
            f"with the daemon's provider settings, not this shell's ({', '.join(differ)}): continue it "
            f"there (shard attach {held}), or stop that agent and run again"
        )
        return EXIT_USAGE
    if differ:
        if args.keep:
            err(
                f"shard: the daemon's provider settings are not this shell's ({', '.join(differ)}): "
                "running here, so there is no daemon agent to keep (the session is kept)"
            )
        return None
    if held is None and args.model is None and args.session is None and not _has_default(config):
        return None  # a direct run says that no model is configured; the daemon would run its demo
    agent_id, owned, code = (held, False, 0) if held is not None else await _agent(link, args, cwd)
    if agent_id is None:
        return code
    try:
        return await _one_turn(link, args, agent_id, hello)
    finally:
        if owned and not args.keep:
            await _remove(link, agent_id)


async def _held(link: _Link, session_id: str) -> str | None:
    """The daemon's agent that holds ``session_id`` (a run on it drives it and leaves it), or None."""
    listed = await link.data({"type": "agent.list"})
    for info in listed.get("agents", []):
        if info.get("session_id") == session_id:
            return str(info["agent_id"])
    return None


def _config(args: argparse.Namespace) -> Any:
    """The run's config.toml, or None when it cannot be read (the run goes direct, and says there
    what is wrong)."""
    from shard.agent.config.settings import ConfigError, load_config, shard_home

    try:
        return load_config(shard_home(args.home))
    except ConfigError:
        return None


def _has_default(config: Any) -> bool:
    """Whether this shell's catalog has a default model (what a run without ``--model`` uses)."""
    from shard.agent.catalog import ModelCatalog

    return ModelCatalog(config).default_selection is not None


async def _differing(link: _Link, config: Any) -> list[str]:
    """The provider variables (names only) whose values differ between this shell and the daemon
    (``shard._provider_env``): the daemon's runtimes call providers with its own. A daemon that
    cannot answer counts as a difference."""
    from shard._provider_env import gather, nonce, sealed
    from shard.agent.catalog import key_variables

    question = nonce()
    variables = sealed(question, gather(os.environ, key_variables(config)))
    answer = await link.data({"type": "daemon.compare_env", "nonce": question, "variables": variables})
    differ = answer.get("differ")
    return [str(name) for name in differ] if isinstance(differ, list) else ["(a daemon that cannot compare)"]


async def _agent(link: _Link, args: argparse.Namespace, cwd: str) -> tuple[str | None, bool, int]:
    """A fresh agent for the run (removed after it). A refusal is said on stderr, with the exit
    status a direct run would give it."""
    create: dict[str, Any] = {
        "type": "agent.create",
        "cwd": cwd,
        "name": "shard run",
        "subagents": False,  # a direct run has no subagent tools: the same agent either way
        "ephemeral": not args.keep,  # removed by the terminates at the end (its session stays)
    }
    for field, value in (
        ("session_id", args.session),
        ("model", args.model),
        ("mode", args.mode),
        ("headless_policy", args.headless_policy),
        ("sandbox", args.sandbox),
        ("tools", [t for t in args.tools.split(",") if t] if args.tools is not None else None),
    ):
        if value is not None:
            create[field] = value
    try:
        created = await link.call(create)
    except Refused as refused:
        kept = refused.data.get("agent_id")
        if kept is not None:  # its runtime failed to start; the daemon kept it for a retry: not ours
            await _remove(link, str(kept))
        return None, False, _refused(refused)
    return str(created["agent_id"]), True, 0


def _refused(refused: Refused) -> int:
    """A refusal said as a direct run says it (the runtime's own line, without the daemon's
    preamble), with its exit status: 2 for what the command line or config got wrong, else 3."""
    message = refused.message or "the daemon refused the run"
    message = message.removeprefix("the runtime did not become ready: ").removeprefix("shard: ")
    err(f"shard: {message}")
    return EXIT_USAGE if refused.code in ("INVALID_REQUEST", "RUNTIME_START_FAILED") else EXIT_SESSION


async def _one_turn(link: _Link, args: argparse.Namespace, agent_id: str, hello: dict[str, Any]) -> int:
    loop = asyncio.get_running_loop()
    why_stopped: list[int] = []

    def stop(code: int) -> None:
        if not why_stopped:
            why_stopped.append(code)
            printer.stopping = True
            link.send({"type": "abort", "id": "abort", "agent_id": agent_id})

    printer: Printer = (JsonPrinter if args.json else TextPrinter)(lambda: stop(EXIT_PIPE))
    try:
        attached = await link.call({"type": "agent.attach", "agent_id": agent_id, "role": "observer"})
    except Refused as refused:
        return _refused(refused)
    sync = await _next_of(link, agent_id, "sync")
    info = attached.get("info") or {}
    model, window = info.get("model"), None
    if not args.json:  # the model in use and its context window (learnt first): the agent knows them
        active = (await link.data({"type": "list_models", "agent_id": agent_id})).get("active") or {}
        model = active.get("id", model)
        if active.get("context_window"):
            from shard.protocol.figures import window_said

            window = window_said(active["context_window"], active.get("context_window_source"))
    printer.start(model, str(sync.get("mode", "build")), str(info.get("cwd", "")), [], window)
    printer.show(_Event({**_own(hello), "capabilities": sync.get("capabilities", [])}))
    printer.show(_Event(_own(sync)))
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(sig, lambda: stop(EXIT_INTERRUPTED))
    watch_stdout(loop, lambda: stop(EXIT_PIPE))
    link.send({"type": "prompt", "id": "run", "agent_id": agent_id, "message": args.prompt})
    accepted = idle = aborted = False
    while True:
        message = await link.next()
        kind = str(message.get("type", ""))
        if message.get("agent_id") != agent_id:
            continue
        if kind.startswith(_ORCHESTRATOR):
            if kind == "agent_status_changed" and message.get("runtime_state") in ("stopped", "failed"):
                printer.failed = True  # the runtime ended under the turn: its error was shown
                break
            continue
        if kind == "response" and message.get("id") != "run":
            aborted = True  # the answer to the run's own abort
        elif kind == "response":
            printer.show(_Event(_own(message)))
            if not message.get("success"):
                break
            accepted = True
        else:
            printer.show(_Event(_own(message)))
            idle = idle or (accepted and kind == "status" and message.get("status") == "idle")
        if idle and (aborted or not why_stopped):  # an abort in flight keeps the agent busy
            break
    printer.finish(sync.get("session_id"))
    if why_stopped:
        return why_stopped[0]
    return EXIT_FAILED if printer.failed else 0


async def _next_of(link: _Link, agent_id: str, kind: str) -> dict[str, Any]:
    while True:
        message = await link.next()
        if message.get("type") == kind and message.get("agent_id") == agent_id:
            return message


class _Event(dict[str, Any]):
    """An event as the printers read it, without building its pydantic model (which would cost
    this one-shot ~100 ms of imports): fields as attributes, an absent one None, and ``to_json``
    giving back the agent's own bytes (key order kept)."""

    def __getattr__(self, name: str) -> Any:
        value = self.get(name)
        return _Event(value) if isinstance(value, dict) else value

    def to_json(self) -> bytes:
        return orjson.dumps(self)


def _own(message: dict[str, Any]) -> dict[str, Any]:
    """An event as the agent itself wrote it: without what the daemon adds."""
    return {k: v for k, v in message.items() if k not in _DAEMON_ONLY}


async def _remove(link: _Link, agent_id: str) -> None:
    """Stop the run's agent, then forget it (the second terminate of a stopped agent removes it
    from the registry; its session stays)."""
    with contextlib.suppress(EOFError, OSError):
        for _step in ("stop", "forget"):  # each answered once it is done, unless deferred
            if (await link.data({"type": "agent.terminate", "agent_id": agent_id})).get("deferred"):
                await _stopped(link, agent_id)  # still busy: it stops once idle


async def _stopped(link: _Link, agent_id: str) -> None:
    while True:
        message = await link.next()
        if message.get("agent_id") == agent_id and message.get("runtime_state") in ("stopped", "failed"):
            return
