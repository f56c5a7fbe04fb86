"""The SDK's one exception root and its small tree.

::

    ShardClientError
    ├── ConnectError            could not reach the daemon or agent (socket, spawn, HTTP)
    │   └── AuthError           the daemon refused the credentials (no/expired cookie, bad ticket)
    ├── ProtocolVersionError    the server speaks another major protocol version (R7.11): fatal
    ├── ConnectionLost          the connection dropped while a request was waiting for its answer
    ├── ClientClosed            the client was closed (by you) while something was waiting
    ├── RequestTimeout          no response within the request's timeout (TimeoutError too)
    │   └── TurnTimeout         prompt-and-wait: the turn did not end within its timeout
    ├── StaleRuntime            the answer would have come from a superseded runtime (R9.1.17)
    ├── CapabilityMissing       the attached runtime does not advertise the capability (R9.1.10)
    ├── TurnFailed              prompt-and-wait: the turn ended with a fatal error event
    └── CommandError            the server answered ``success: false``; ``code`` is the wire code
"""

from __future__ import annotations

from typing import Any


class ShardClientError(Exception):
    """Every error the SDK raises on purpose derives from this."""


class ConnectError(ShardClientError):
    """The transport could not be opened (the daemon is not running, the socket is gone…)."""


class AuthError(ConnectError):
    """The daemon refused the WebSocket credentials: HTTP ``status`` and the daemon's reason."""

    def __init__(self, status: int, reason: str) -> None:
        super().__init__(f"HTTP {status}: {reason}")
        self.status = status
        self.reason = reason


class ProtocolVersionError(ShardClientError):
    """The server's ``hello`` names a major protocol version this client does not speak (R7.11).
    The client disconnects and does not reconnect: pick a compatible client/daemon pair."""

    def __init__(self, server_version: str, client_major: int) -> None:
        super().__init__(
            f"the server speaks protocol {server_version!r}; this client speaks {client_major}.x "
            "(no down-negotiation in v0.1: upgrade the older side)"
        )
        self.server_version = server_version
        self.client_major = client_major


class ConnectionLost(ShardClientError):
    """The connection dropped before the answer came. A reconnecting client reconnects by itself;
    whether the command took effect is unknown (commands are not replayed)."""


class ClientClosed(ShardClientError):
    """The client was closed while something was still waiting on it."""


class RequestTimeout(ShardClientError, TimeoutError):
    """No response within the timeout. The connection stays usable; a late answer is dropped."""


class TurnTimeout(RequestTimeout):
    """``prompt_and_wait`` gave up waiting for the turn to end (the turn itself goes on)."""


class StaleRuntime(ShardClientError):
    """A replacement runtime took over the agent (a new ``runtime_epoch``) before the answer came:
    the superseded process's answer is discarded (R9.1.17)."""


class CapabilityMissing(ShardClientError):
    """The attached runtime's ``sync.capabilities`` lacks what the call needs (R9.1.10, R7.10)."""


class TurnFailed(ShardClientError):
    """The turn reported a fatal ``error`` event."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message


class CommandError(ShardClientError):
    """A ``response`` with ``success: false``: ``code`` (e.g. ``NOT_FOUND``), ``message``, ``data``."""

    def __init__(self, command: str | None, code: str, message: str, data: Any = None) -> None:
        super().__init__(f"{command or 'command'} failed: {code}: {message}")
        self.command = command
        self.code = code
        self.message = message
        self.data = data
