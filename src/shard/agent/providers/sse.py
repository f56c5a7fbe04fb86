"""Server-sent events as the ``openai`` SDK's ``AsyncStream`` reads them, for ``chat_http``: lines
end at ``\\r\\n``, ``\\n`` or ``\\r`` (a ``\\r\\n`` split between two chunks is one end), fields
build an event until a blank line dispatches it, its data is JSON until ``[DONE]``, and an event
whose JSON has an ``error`` member is raised as :class:`APIError` (what the SDK raises: the words
``errors.translate`` gives it are the same)."""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator
from typing import Any

from shard.agent.providers.chat_http import APIConnectionError, Response


class APIError(Exception):
    """An error the server sent inside a 200 stream (the SDK's ``APIError``)."""

    def __init__(self, message: str, body: object) -> None:
        super().__init__(message)
        self.message = message
        self.body = body


async def events(response: Response) -> AsyncIterator[dict[str, Any] | list[Any] | object]:
    """The stream's JSON events until ``[DONE]``, as ``openai.AsyncStream`` reads them: an event
    whose JSON has an ``error`` member is raised as :class:`APIError`."""
    lines = _Lines()
    event = _Event()
    chunks = response.aiter_bytes()
    async for chunk in chunks:
        for line in lines.feed(chunk):
            data = event.line(line)
            if data is None:
                continue
            if data.startswith("[DONE]"):
                with contextlib.suppress(APIConnectionError):
                    async for _ in chunks:  # the rest, so that the connection can be used again
                        pass
                return
            yield _checked(json.loads(data))
    for line in lines.finish():
        data = event.line(line)
        if data is not None:
            if data.startswith("[DONE]"):
                return
            yield _checked(json.loads(data))


def _checked(data: object) -> object:
    if isinstance(data, dict) and data.get("error"):
        error = data.get("error")
        message = error.get("message") if isinstance(error, dict) else None
        if not message or not isinstance(message, str):
            message = "An error occurred during streaming"
        raise APIError(message, data["error"])
    return data


class _Lines:
    """Bytes → lines split at ``\\r\\n``, ``\\n`` or ``\\r`` (the SDK's ``_SSELineDecoder``)."""

    def __init__(self) -> None:
        self._buffer = b""

    def feed(self, chunk: bytes) -> list[str]:
        data = self._buffer + chunk
        held = data.endswith(b"\r")  # perhaps the first half of a \r\n: decided by the next chunk
        if held:
            data = data[:-1]
        *lines, rest = data.replace(b"\r\n", b"\n").replace(b"\r", b"\n").split(b"\n")
        self._buffer = rest + b"\r" if held else rest
        return [line.decode("utf-8") for line in lines]

    def finish(self) -> list[str]:
        rest, self._buffer = self._buffer, b""
        return [line.decode("utf-8") for line in rest.replace(b"\r", b"\n").split(b"\n")[:1] if line]


class _Event:
    """SSE fields → the data of each dispatched event (the SDK's ``SSEDecoder.decode``)."""

    def __init__(self) -> None:
        self._event: str | None = None
        self._data: list[str] = []
        self._id: str | None = None
        self._retry: int | None = None

    def line(self, line: str) -> str | None:
        if not line:
            if not self._event and not self._data and not self._id and self._retry is None:
                return None
            data = "\n".join(self._data)
            self._event, self._data, self._retry = None, [], None
            return data
        if line.startswith(":"):
            return None
        name, _, value = line.partition(":")
        value = value.removeprefix(" ")
        if name == "event":
            self._event = value
        elif name == "data":
            self._data.append(value)
        elif name == "id" and "\0" not in value:
            self._id = value
        elif name == "retry":
            with contextlib.suppress(ValueError):
                self._retry = int(value)
        return None
