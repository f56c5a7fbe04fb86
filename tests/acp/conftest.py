"""An editor for the tests: the ACP SDK's own client side, launching a real ``shard acp`` process.

The SDK (its schema: half a second of pydantic models) is imported where it is used, not here:
every xdist worker imports this file to collect, and only the one running these tests needs it."""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

from shard.testing import start_shard
from shard.testing.forked import ACP

TIMEOUT = 30.0


class Editor:
    """Records every session/update; answers request_permission with the first option of the kind
    ``choose`` names (``None``: holds the request open until the test releases it)."""

    def __init__(self, choose: str | None = "allow_once") -> None:
        self.choose = choose
        self.updates: list[tuple[str, Any]] = []
        self.asked: list[Any] = []  # the request_permission calls, as (tool_call, options)
        # with choose=None, the option kind the test releases a held request with (None: cancelled)
        self.held: asyncio.Future[str | None] = asyncio.get_running_loop().create_future()
        self._changed = asyncio.Condition()

    async def session_update(self, session_id: str, update: Any, **_: Any) -> None:
        async with self._changed:
            self.updates.append((session_id, update))
            self._changed.notify_all()

    async def request_permission(self, session_id: str, tool_call: Any, options: list[Any], **_: Any) -> Any:
        from acp.schema import AllowedOutcome, DeniedOutcome, RequestPermissionResponse

        async with self._changed:
            self.asked.append((tool_call, options))
            self._changed.notify_all()
        choose = self.choose if self.choose is not None else await self.held
        if choose is None:
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        option = next(o for o in options if o.kind == choose)
        return RequestPermissionResponse(
            outcome=AllowedOutcome(outcome="selected", option_id=option.option_id)
        )

    async def wait_for(self, predicate: Callable[[], Any]) -> Any:
        """The first truthy ``predicate()`` as updates arrive (TimeoutError after TIMEOUT)."""
        async with asyncio.timeout(TIMEOUT), self._changed:
            while not (found := predicate()):
                await self._changed.wait()
            return found

    def of_kind(self, kind: str, session_id: str | None = None) -> list[Any]:
        return [
            u
            for sid, u in self.updates
            if u.session_update == kind and (session_id is None or sid == session_id)
        ]

    def call(self, tool_call_id: str) -> dict[str, Any]:
        """A tool call as the editor ends up showing it: each field's latest value over its
        ``tool_call`` and ``tool_call_update``s, and ``statuses`` in order."""
        seen: dict[str, Any] = {"statuses": []}
        for u in self.updates:
            update = u[1]
            if (
                update.session_update in ("tool_call", "tool_call_update")
                and update.tool_call_id == tool_call_id
            ):
                for name in ("title", "kind", "locations", "content", "raw_input", "raw_output"):
                    if getattr(update, name) is not None:
                        seen[name] = getattr(update, name)
                if update.status is not None:
                    seen["statuses"].append(update.status)
        return seen

    def text(self, session_id: str | None = None) -> str:
        return "".join(u.content.text for u in self.of_kind("agent_message_chunk", session_id))


async def _copy(stream: asyncio.StreamReader, fd: int) -> None:
    while chunk := await stream.read(1 << 16):
        os.write(fd, chunk)


async def _drained(copy: asyncio.Future[None]) -> None:
    """Its stderr read to the end (a last line, a traceback at exit, reaches the log)."""
    with contextlib.suppress(TimeoutError):  # a child of its own holds the pipe: the log has what came
        await asyncio.wait_for(copy, 10.0)  # (and the copy is cancelled)


async def _closed(proc: Any) -> None:
    """As the SDK's spawn ends its process: stdin closed, then a grace, then a kill."""
    with contextlib.suppress(OSError, RuntimeError):
        proc.stdin.close()
    try:
        await asyncio.wait_for(proc.wait(), 10.0)
    except TimeoutError:
        proc.kill()
        await proc.wait()


@pytest.fixture
async def start_acp(home: Path, project: Path, tmp_path: Path) -> AsyncIterator[Any]:
    """``await start_acp(*flags, choose="allow_once")``: a real ``shard acp`` on ``home``, initialized;
    returns (editor, connection, process). Every process is closed (stdin EOF) at the end."""
    import acp

    stack = contextlib.AsyncExitStack()
    logs = os.open(tmp_path / "acp-stderr.log", os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    stack.callback(os.close, logs)

    async def start(*flags: str, choose: str | None = "allow_once") -> tuple[Editor, Any, Any]:
        from acp.transports import default_environment

        editor = Editor(choose)
        env = {**default_environment(), "SHARD_HOME": str(home)}  # what the SDK's spawn passes
        proc = await start_shard("acp", "--home", str(home), *flags, env=env, cwd=project, preload=ACP)
        stack.push_async_callback(_drained, asyncio.ensure_future(_copy(proc.stderr, logs)))
        stack.push_async_callback(_closed, proc)
        conn = acp.connect_to_agent(editor, proc.stdin, proc.stdout)
        stack.push_async_callback(conn.close)
        await asyncio.wait_for(conn.initialize(protocol_version=acp.PROTOCOL_VERSION), TIMEOUT)
        return editor, conn, proc

    yield start
    await stack.aclose()
    log = (tmp_path / "acp-stderr.log").read_text(errors="replace")
    assert "Traceback" not in log  # whatever happened, shard acp said it in one line
