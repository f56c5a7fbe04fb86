"""``shard run PROMPT``: a headless one-shot over the same runtime as ``shard agent --stdio``.

Prints the assistant's text as it streams, or with ``--json`` every event as JSONL. In text mode,
stderr tells what one waits for: the model in use, "waiting for the model…", tool calls and their
output, each retry with its cause, and a closing line with tokens, cost and the session id.

Nobody is there to answer a permission request, so the headless policy does (deny by default);
``--allow TOOL``, ``--allow 'bash:COMMAND'`` and ``--yes-to-all`` say up front what this run may do
(``shard.agent.permissions.allowances``).

With a daemon running on the same SHARD_HOME the run goes through it (``run_daemon.py``): the same
output, from a runtime the daemon forks warm. ``--direct`` (and any run with its own allowances)
stays in this process.

The prompt is the argument, or — when it is left out and stdin is not a terminal, or is ``-`` —
everything on stdin (``echo … | shard run``, ``shard run - < task.md``).

Exit status: 0 when the turn completed, 1 when it failed, 2 for a usage or config mistake, 130 when
interrupted (Ctrl-C, at any instant), 141 when the reader of stdout went away (``| head -1``: the turn
is aborted quietly, as SIGPIPE ends any member of a pipeline).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import functools
import os
import signal
import sys
from typing import Any, Literal

import orjson

from shard.agent.boot import StartupError, prepare
from shard.agent.providers import early_request
from shard.cli.agent import io_error, options
from shard.cli.run_daemon import daemon_socket, goes_direct, run_via_daemon
from shard.cli.run_output import JsonPrinter, Printer, TextPrinter, watch_stdout
from shard.protocol.errors import ShardError

EXIT_FAILED, EXIT_USAGE, EXIT_INTERRUPTED, EXIT_PIPE = 1, 2, 130, 141


def main_run(args: argparse.Namespace) -> int:
    args.prompt = _prompt(args.prompt)
    if args.prompt is None:
        return EXIT_USAGE
    if args.continue_:
        if args.session is not None:
            print("shard: --continue and --session each choose the session: give one", file=sys.stderr)
            return EXIT_USAGE
        args.session = _latest_session(args)
        if args.session is None:
            return EXIT_USAGE
    if not goes_direct(args):
        from shard.agent.config.settings import shard_home

        path = daemon_socket(shard_home(args.home))
        if path is not None:
            cwd = os.path.realpath(os.path.expanduser(args.cwd or os.getcwd()))
            try:
                code = asyncio.run(run_via_daemon(args, path, cwd))
            except KeyboardInterrupt:
                return EXIT_INTERRUPTED
            if code is not None:
                return code
    try:
        prepared = prepare(options(args))
    except (StartupError, ShardError, OSError) as caught:
        exc = io_error(caught) if isinstance(caught, OSError) else caught
        print(f"shard: {exc.message}", file=sys.stderr)
        return exc.exit_code if isinstance(exc, StartupError) else 3
    _start_sdk_import(prepared)
    _send_early(prepared, args)
    try:
        return asyncio.run(_run(prepared, args))
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
    finally:
        early_request.finish()


def _prompt(given: str | None) -> str | None:
    """The prompt: the argument, else (left out with stdin not a terminal, or ``-``) all of stdin,
    without its final line break. None, said on stderr, when there is none."""
    if given is not None and given != "-":
        return given
    if given is None and sys.stdin.isatty():
        print(
            "shard: shard run needs a prompt: give it as an argument, or pipe it in (echo … | shard run)",
            file=sys.stderr,
        )
        return None
    text = sys.stdin.buffer.read().decode("utf-8", errors="replace").removesuffix("\n").removesuffix("\r")
    if not text.strip():
        print("shard: the prompt read from stdin is empty", file=sys.stderr)
        return None
    return text


def _latest_session(args: argparse.Namespace) -> str | None:
    """``--continue``: the newest session of the working directory (None, said on stderr, when there
    is none)."""
    from shard.agent.config.settings import shard_home
    from shard.agent.session.listing import HEAD_BYTES, sessions_in

    cwd = os.path.realpath(os.path.expanduser(args.cwd or os.getcwd()))
    found = sessions_in(shard_home(args.home), cwd, head_bytes=HEAD_BYTES)
    if not found:
        print(f"shard: no session to continue in {cwd} (shard sessions lists them all)", file=sys.stderr)
        return None
    return found[0]["session_id"]


async def _run(prepared: Any, args: argparse.Namespace) -> int:
    from shard.agent.mcp.host import McpHost
    from shard.agent.permissions.allowances import AllowanceError, Allowances
    from shard.agent.runtime import Runtime
    from shard.protocol.event_base import EventBase

    loop = asyncio.get_running_loop()
    stopping: set[asyncio.Task[None]] = set()
    why_stopped: list[int] = []

    def stop(code: int, cause: Literal["aborted", "interrupted"] = "interrupted") -> None:
        if not why_stopped:
            why_stopped.append(code)
            printer.stopping = True
            stopping.add(loop.create_task(runtime.abort(cause)))

    printer: Printer = (JsonPrinter if args.json else TextPrinter)(lambda: stop(EXIT_PIPE))

    def sink(event: EventBase) -> None:
        printer.show(event)

    # a one-shot run has nobody to ask: the headless policy answers, within the run's allowances
    mcp = McpHost.for_config(prepared.config, prepared.cwd, prepared.options.tools)
    runtime = Runtime.from_prepared(prepared, sink=sink, has_responder=False, mcp=mcp)
    # an MCP tool is known once its server starts: --allow may name one of a configured server's
    mcp_names = [n for n in args.allow or [] if mcp is not None and mcp.may_name(n)]
    try:
        runtime.gate.allowances = Allowances.parse(
            args.allow or [], yes_to_all=args.yes_to_all, tool_names=[*runtime.tools, *mcp_names]
        )
    except AllowanceError as exc:
        print(f"shard: {exc}", file=sys.stderr)
        prepared.store.close()
        return EXIT_USAGE
    for sig, cause in ((signal.SIGINT, "aborted"), (signal.SIGTERM, "interrupted")):  # Ctrl-C: you stopped it
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(sig, functools.partial(stop, EXIT_INTERRUPTED, cause))
    watch_stdout(loop, lambda: stop(EXIT_PIPE))
    allowances = runtime.gate.allowances.describe() if runtime.gate.allowances else []
    window = await runtime.models.learn_window()  # asked of the server once; the turn needs it too
    printer.start(
        prepared.model.id if prepared.model else None,
        runtime.modes.active.name,
        str(prepared.cwd),
        allowances,
        window.said if window else None,
    )
    if args.json:  # the text printer shows neither: their models need not be built before the request
        sink(runtime.hello())
        sink(runtime.sync())
    runtime.start_background_work()
    await runtime.handle(orjson.dumps({"type": "prompt", "id": "run", "message": args.prompt}))
    await runtime.wait_idle()
    if stopping:
        await asyncio.gather(*stopping)
    if mcp is not None:
        await mcp.close()
    printer.finish(prepared.store.session_id if prepared.store.exists else None)
    prepared.store.close()
    if why_stopped:
        return why_stopped[0]
    return EXIT_FAILED if printer.failed or runtime.failed_turns or runtime.fatal else 0


def _send_early(prepared: Any, args: argparse.Namespace) -> None:
    """The run's first request, sent now from what the last run in this place sent, while the
    runtime imports (``early_request``): only where nothing could differ in where it goes or whether
    it is sent at all — a new session, no allowances to check, a plain-http server ``chat_http``
    speaks to itself with the key the runtime would take."""
    from shard import _secrets
    from shard._home import shard_home
    from shard.agent.providers.chat_http import NO_KEY, ChatHttp
    from shard.agent.providers.sdk import sdk_for

    entry = prepared.model
    if entry is None or args.allow or args.yes_to_all or prepared.store.exists or prepared.instructions:
        return
    provider = entry.provider
    if provider.kind != "openai" or provider.base_url is None or sdk_for(entry) is not None:
        return
    key = _secrets.get(provider.api_key_env) if provider.api_key_env else NO_KEY
    if not key:
        return  # the runtime says which key is missing, and sends nothing
    print_ = early_request.fingerprint(
        model=entry.id,
        base_url=provider.base_url,
        cwd=str(prepared.cwd),
        mode=prepared.mode,
        reasoning=prepared.reasoning,
        tools=",".join(prepared.options.tools) if prepared.options.tools is not None else None,
        sandbox=prepared.options.sandbox,
    )
    client = ChatHttp(provider.base_url, key)  # what the runtime's provider makes: the same request
    early_request.start(shard_home(prepared.options.home), client, print_, args.prompt)


def _start_sdk_import(prepared: Any) -> None:
    """A one-shot run calls its model at once: start importing the SDK (1-3 s) now, on a thread,
    overlapping the runtime's own imports, rather than after them."""
    import importlib
    import threading

    from shard.agent.providers.sdk import sdk_for

    name = sdk_for(prepared.model) if prepared.model else None
    if name is not None:
        threading.Thread(target=importlib.import_module, args=(name,), daemon=True).start()
