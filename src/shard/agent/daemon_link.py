"""A daemon-hosted runtime's line back to its daemon (DESIGN §2; PROTOCOL §2.1, §10.3).

The daemon starts each runtime with ``--agent-id`` and ``SHARD_DAEMON_SOCKET`` (its unix socket). The
subagent tools send ``subagent.*`` commands there for this agent as ``parent_agent_id``. Each command
gets its own connection: the daemon greets it with ``hello``, the command goes out as one JSONL line,
and lines are read until the protocol's :class:`~shard.protocol.correlator.Correlator` has its
response (``subagent_run_changed`` events the daemon also sends to a parent's job connections are
passed over). Plain dicts, no SDK: a runtime does not pay for its imports. The connection closes when the call
returns or is cancelled — an aborted ``subagent.wait`` thereby cancels the daemon's waiter (R10.3.29).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from shard.protocol.correlator import Correlator, Refused
from shard.protocol.framing import DEFAULT_MAX_LINE_BYTES

if TYPE_CHECKING:
    from shard.protocol.daemon_commands import SubagentCommand

SOCKET_VARIABLE = "SHARD_DAEMON_SOCKET"


class LinkError(Exception):
    """The daemon refused the command (``code`` is its protocol error code) or could not be reached."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message


@dataclass(frozen=True, slots=True)
class DaemonLink:
    socket: Path
    agent_id: str

    @classmethod
    def hosted(cls, agent_id: str | None, environ: Mapping[str, str] = os.environ) -> DaemonLink | None:
        """The link of a runtime the daemon hosts: both ``--agent-id`` and the socket; else None."""
        socket = environ.get(SOCKET_VARIABLE)
        if not agent_id or not socket:
            return None
        return cls(Path(socket), agent_id)

    async def call(self, command: SubagentCommand) -> dict[str, Any]:
        """Send ``command`` for this agent; its response ``data`` (``{}`` when it has none)."""
        calls = Correlator(prefix="tool-")
        message, answer = calls.request({**command.to_wire(), "parent_agent_id": self.agent_id})
        try:
            reader, writer = await asyncio.open_unix_connection(self.socket, limit=DEFAULT_MAX_LINE_BYTES)
        except OSError as exc:
            raise LinkError(
                "INTERNAL_ERROR", f"the daemon is not reachable ({exc.strerror or exc})"
            ) from None
        try:
            hello = await _read(reader)
            if hello.get("type") != "hello":
                raise LinkError("PROTOCOL_ERROR", f"the daemon opened with {hello.get('type')!r}, not hello")
            writer.write(orjson.dumps(message) + b"\n")
            await writer.drain()
            while not answer.done():
                calls.feed(await _read(reader))
            return answer.result()
        except Refused as refused:
            said = " ".join(refused.message.split()) or "the daemon refused the command"
            raise LinkError(refused.code, said) from None
        except (OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError) as exc:
            raise LinkError("INTERNAL_ERROR", f"the daemon connection failed ({exc})") from None
        finally:
            writer.close()
            with contextlib.suppress(Exception):
                await asyncio.shield(writer.wait_closed())


async def _read(reader: asyncio.StreamReader) -> dict[str, Any]:
    line = await reader.readline()
    if not line:
        raise LinkError("INTERNAL_ERROR", "the daemon closed the connection before it answered")
    try:
        value = orjson.loads(line)
    except orjson.JSONDecodeError:
        raise LinkError("PROTOCOL_ERROR", "the daemon sent a line that is not JSON") from None
    if not isinstance(value, dict):
        raise LinkError("PROTOCOL_ERROR", "the daemon sent a line that is not a JSON object")
    return value
