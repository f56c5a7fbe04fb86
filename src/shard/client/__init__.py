"""L2: the Python SDK — async clients of the Shard wire protocol (PROTOCOL.md), typed with the
models of :mod:`shard.protocol`. See docs/sdk.md.

* :class:`ShardClient` — a daemon connection (unix socket or WebSocket): agent.* and subagent.*
  commands, attached agents demultiplexed by ``agent_id``, reconnect with backoff and re-attach.
* :func:`connect_stdio` — a direct connection to a spawned ``shard agent --stdio``.
* :class:`Agent` — one agent: event streams, prompt / prompt_and_wait / permissions / modes / models.
* :meth:`ShardClient.delegated_requests` — requests a background child asks this client as its
  nearest interactive ancestor's (``answer_delegated`` / ``answer_delegated_ui`` answer them).
* :class:`WebSession` — WebSocket credentials: an enrolled session cookie that buys tickets.
* :func:`resolution_text` — who answered a request, in words ("Allowed by Chrome on Linux").
"""

from shard.client.agent import Agent, choice_for, prompt_command
from shard.client.answers import resolution_text
from shard.client.auth import WebSession
from shard.client.backoff import Backoff
from shard.client.client import ShardClient
from shard.client.connection import CLIENT_PROTOCOL_MAJOR, Connection, State
from shard.client.delegated import CLOSED_WHILE_AWAY, Delegated
from shard.client.direct import DirectAgent, connect_stdio
from shard.client.errors import (
    AuthError,
    CapabilityMissing,
    ClientClosed,
    CommandError,
    ConnectError,
    ConnectionLost,
    ProtocolVersionError,
    RequestTimeout,
    ShardClientError,
    StaleRuntime,
    TurnFailed,
    TurnTimeout,
)
from shard.client.streams import EventStream
from shard.client.transcript import Transcript
from shard.client.turns import TurnResult

__all__ = [
    "CLIENT_PROTOCOL_MAJOR",
    "CLOSED_WHILE_AWAY",
    "Agent",
    "AuthError",
    "Backoff",
    "CapabilityMissing",
    "ClientClosed",
    "CommandError",
    "ConnectError",
    "Connection",
    "ConnectionLost",
    "Delegated",
    "DirectAgent",
    "EventStream",
    "ProtocolVersionError",
    "RequestTimeout",
    "ShardClient",
    "ShardClientError",
    "StaleRuntime",
    "State",
    "Transcript",
    "TurnFailed",
    "TurnResult",
    "TurnTimeout",
    "WebSession",
    "choice_for",
    "connect_stdio",
    "prompt_command",
    "resolution_text",
]
