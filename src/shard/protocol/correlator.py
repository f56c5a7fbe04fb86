"""Requests matched to their responses by ``id`` (PROTOCOL §5, §9: every command carries an ``id``
and its ``response`` echoes it), sans-I/O and pydantic-free, for the small clients of the daemon that
must start fast and so speak the wire as plain dicts (``shard run`` through a daemon, ``shard web``,
a runtime's line to its daemon); the SDK has its own, typed, table in ``shard.client.connection``.

:meth:`Correlator.request` gives a command a fresh ``id`` and the future its response settles;
:meth:`Correlator.feed` takes each decoded message the caller reads and says whether it was the
awaited response (anything else, an event or an answer to a command sent without the correlator, is
the caller's); :meth:`Correlator.close` fails every future still open when the connection ends. A
successful response resolves its future with the response's ``data`` (``{}`` when it has none); a
refusal fails it with :class:`Refused`, carrying the error's code, message and data.

Like :class:`~shard.protocol.framing.LineBuffer` it never reads or writes and never imports asyncio:
the futures come from the caller (``loop.create_future`` in a coroutine), or are :class:`Slot` values,
for a caller that reads until its answer is there (a blocking socket, or a loop that reads in line).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Generic, Protocol, TypeVar, overload

Data = dict[str, Any]


class Refused(Exception):
    """The peer answered the command with ``success: false``."""

    def __init__(self, code: str, message: str, data: Data | None = None) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
        self.data = data or {}


class Closed(ConnectionError):
    """The connection ended with the command unanswered."""


class Settable(Protocol):
    """What the correlator needs of a future: ``asyncio.Future`` and :class:`Slot` both are one."""

    def set_result(self, result: Data, /) -> None: ...

    def set_exception(self, exception: BaseException, /) -> None: ...

    def done(self) -> bool: ...


class Slot:
    """A future for a caller without an event loop: settled once, read after it is done."""

    def __init__(self) -> None:
        self._result: Data | None = None
        self._error: BaseException | None = None

    def set_result(self, result: Data, /) -> None:
        self._result = result

    def set_exception(self, exception: BaseException, /) -> None:
        self._error = exception

    def done(self) -> bool:
        return self._result is not None or self._error is not None

    def result(self) -> Data:
        """The response's data; raises :class:`Refused` or :class:`Closed` as the answer was."""
        if self._error is not None:
            raise self._error
        if self._result is None:
            raise RuntimeError("the response has not arrived")
        return self._result


F = TypeVar("F", bound=Settable)


class Correlator(Generic[F]):
    @overload
    def __init__(self: Correlator[Slot], *, prefix: str = "c") -> None: ...

    @overload
    def __init__(self, new_future: Callable[[], F], *, prefix: str = "c") -> None: ...

    def __init__(self, new_future: Callable[[], Any] = Slot, *, prefix: str = "c") -> None:
        self._new_future = new_future
        self._prefix = prefix
        self._count = 0
        self._pending: dict[str, F] = {}
        self._closed: BaseException | None = None

    @property
    def pending(self) -> int:
        """How many commands wait for their response."""
        return len(self._pending)

    def request(self, command: Mapping[str, Any]) -> tuple[Data, F]:
        """``command`` with a fresh ``id`` (to be sent as it is), and the future of its answer.
        After :meth:`close` there is nobody to answer: raises what the connection closed with."""
        if self._closed is not None:
            raise self._closed
        self._count += 1
        request_id = f"{self._prefix}{self._count}"
        future: F = self._new_future()
        self._pending[request_id] = future
        return {**command, "id": request_id}, future

    def feed(self, message: Mapping[str, Any]) -> bool:
        """Settle the future ``message`` answers; False when it answers none (not a response, or
        one to an id this correlator did not give or no longer waits for)."""
        if message.get("type") != "response":
            return False
        request_id = message.get("id")
        future = self._pending.pop(request_id, None) if isinstance(request_id, str) else None
        if future is None:
            return False
        if future.done():  # given up on by its caller (a cancelled task): nothing to settle
            return True
        if message.get("success") is True:
            data = message.get("data")
            future.set_result(data if isinstance(data, dict) else {})
        else:
            future.set_exception(_refused(message.get("error")))
        return True

    def close(self, error: BaseException | None = None) -> None:
        """The connection is gone: fail every open future with ``error`` (:class:`Closed` unless
        given), and every later :meth:`request` too."""
        self._closed = error or Closed("the connection closed before the answer came")
        pending, self._pending = self._pending, {}
        for future in pending.values():
            if not future.done():
                future.set_exception(self._closed)


def _refused(error: Any) -> Refused:
    fields = error if isinstance(error, dict) else {}
    data = fields.get("data")
    return Refused(
        str(fields.get("code") or "INTERNAL_ERROR"),
        str(fields.get("message") or ""),
        data if isinstance(data, dict) else None,
    )
