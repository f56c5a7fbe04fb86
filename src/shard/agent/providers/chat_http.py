"""Chat Completions to a local server over a small HTTP/1.1 client of our own (issue 31).

The ``openai`` SDK costs a one-shot run about 40 % of its CPU before the first request (its import:
httpx, httpcore, anyio and ~400 modules of its own). For a server on a plain ``http://`` base URL
(Ollama, llama.cpp, vLLM, LM Studio, a proxy on the machine) the request needs nothing the SDK alone
provides, so :class:`ChatHttp` sends it itself: the same request line, headers and JSON body the
SDK sends (``test_chat_http.py`` compares the two at one server), and the reply is read as the
SDK's ``AsyncStream`` reads it (``sse.py``), so ``OpenAIFold`` and ``errors.translate`` see the same
things and say the same words.

:func:`goes_direct` decides (pure but for the environment it is given): an ``http://`` base URL
without user, query or fragment, and none of the variables that would make the SDK's request differ
(a proxy, ``OPENAI_ORG_ID``, ``OPENAI_PROJECT_ID``, ``OPENAI_CUSTOM_HEADERS``). Anything else —
``https://`` (the SDK's trust settings), the default endpoint — stays with the SDK.

Failures are raised as the SDK's are named (``errors.translate`` reads names and attributes, not
classes): :class:`APIStatusError` with ``status_code``, ``body`` and the response's headers,
:class:`APIConnectionError` and :class:`APITimeoutError` chained to the transport's own error (and
``sse.APIError`` for an error inside the stream).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import platform
import socket
import sys
import zlib
from collections.abc import AsyncIterator, Mapping
from functools import cache
from importlib.util import find_spec
from typing import Any
from urllib.parse import urlsplit

from shard.agent.providers import early_request

REQUEST_TIMEOUT = 600.0
NO_KEY = "not-needed"  # sent when config names no key variable: local servers take none, the SDK wants one
_PROXY_VARIABLES = ("http_proxy", "HTTP_PROXY", "all_proxy", "ALL_PROXY")
_SDK_VARIABLES = ("OPENAI_ORG_ID", "OPENAI_PROJECT_ID", "OPENAI_CUSTOM_HEADERS")
_LINE_LIMIT = 64 * 1024  # a status line or one header line
_HEADERS_LIMIT = 256 * 1024


def goes_direct(base_url: str | None, environ: Mapping[str, str]) -> bool:
    """True when a request to ``base_url`` may skip the SDK: it would send exactly this."""
    if not base_url or any(environ.get(name) for name in (*_PROXY_VARIABLES, *_SDK_VARIABLES)):
        return False
    try:
        parts = urlsplit(base_url.strip())
        port = parts.port
    except ValueError:
        return False
    return (
        parts.scheme.lower() == "http"
        and bool(parts.hostname)
        and parts.username is None
        and not parts.query
        and not parts.fragment
        and (port is None or 0 < port < 65536)
        and sdk_version() is not None
    )


@cache
def sdk_version() -> str | None:
    """The installed ``openai`` package's version, read from its ``_version.py`` without importing
    the package (what the SDK names itself in ``User-Agent``); None when it cannot be read."""
    try:
        spec = find_spec("openai")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    path = os.path.join(next(iter(spec.submodule_search_locations)), "_version.py")
    try:
        with open(path, encoding="utf-8") as f:
            for line in f:
                name, _, value = line.partition("=")
                if name.strip() == "__version__":
                    return value.split("#", 1)[0].strip().strip("\"'") or None
    except OSError:
        return None
    return None


def sdk_headers(key: str) -> list[tuple[str, str]]:
    """The headers ``AsyncOpenAI.post`` sends with a bearer key, in its order (``platform_headers``
    of ``openai._base_client``)."""
    version = sdk_version() or "unknown"
    return [
        ("authorization", f"Bearer {key}"),
        ("accept", "application/json"),
        ("content-type", "application/json"),
        ("user-agent", f"AsyncOpenAI/Python {version}"),
        ("x-stainless-lang", "python"),
        ("x-stainless-package-version", version),
        ("x-stainless-os", _os_name()),
        ("x-stainless-arch", _arch()),
        ("x-stainless-runtime", platform.python_implementation()),
        ("x-stainless-runtime-version", platform.python_version()),
        ("x-stainless-async", "async:asyncio"),
        ("x-stainless-retry-count", "0"),
        ("x-stainless-read-timeout", str(REQUEST_TIMEOUT)),
    ]


def _os_name() -> str:
    system = platform.system().lower()
    names = {"darwin": "MacOS", "windows": "Windows", "linux": "Linux", "freebsd": "FreeBSD"}
    if system in names:
        return names[system]
    if "android" in system:
        return "Android"
    return f"Other:{system}" if system else "Unknown"


def _arch() -> str:
    machine = platform.machine().lower()
    if machine in ("arm64", "aarch64"):
        return "arm64"
    if machine == "arm":
        return "arm"
    if machine == "x86_64":
        return "x64"
    if sys.maxsize <= 2**32:
        return "x32"
    return f"other:{machine}" if machine else "unknown"


class APIStatusError(Exception):
    """An HTTP error status (the SDK's ``APIStatusError``): ``body`` is the JSON's ``error`` member
    (else the JSON, else the text), ``response.headers`` the reply's headers."""

    def __init__(self, message: str, status: int, body: object, response: Response) -> None:
        super().__init__(message)
        self.message = message
        self.status_code = status
        self.body = body
        self.response = response


class APIConnectionError(Exception):
    def __init__(self, message: str = "Connection error.") -> None:
        super().__init__(message)
        self.message = message


class APITimeoutError(APIConnectionError):
    def __init__(self) -> None:
        super().__init__("Request timed out.")


class Response:
    """A reply's status, headers (lowercased names) and body, read as it arrives."""

    def __init__(self, conn: Connection, status: int, headers: dict[str, str]) -> None:
        self.status_code = status
        self.headers = headers
        self._conn = conn
        self._done = False
        encoding = headers.get("content-encoding", "").strip().lower()
        self._inflate = _decoder(encoding)

    async def aiter_bytes(self) -> AsyncIterator[bytes]:
        async for raw in self._raw():
            data = self._inflate.decompress(raw) if self._inflate is not None else raw
            if data:
                yield data
        if self._inflate is not None:
            rest = self._inflate.flush()
            if rest:
                yield rest

    async def aread(self) -> bytes:
        return b"".join([piece async for piece in self.aiter_bytes()])

    async def _raw(self) -> AsyncIterator[bytes]:
        reader = self._conn.reader
        if self.headers.get("transfer-encoding", "").strip().lower() == "chunked":
            while True:
                size_line = await self._conn.read(reader.readline())
                try:
                    size = int(size_line.split(b";", 1)[0].strip(), 16)
                except ValueError:
                    raise APIConnectionError("malformed chunked encoding") from None
                if size == 0:
                    while (await self._conn.read(reader.readline())).strip():
                        pass  # trailers
                    break
                yield await self._conn.read(reader.readexactly(size))
                await self._conn.read(reader.readexactly(2))
        elif (length := self.headers.get("content-length")) is not None:
            left = int(length)
            while left > 0:
                piece = await self._conn.read(reader.read(min(left, 65536)))
                if not piece:
                    raise APIConnectionError("the server closed the connection before the whole body came")
                left -= len(piece)
                yield piece
        else:
            self._conn.reusable = False  # the body ends with the connection
            while piece := await self._conn.read(reader.read(65536)):
                yield piece
        self._done = True

    @property
    def complete(self) -> bool:
        return self._done


def _decoder(encoding: str) -> Any:
    if encoding == "gzip":
        return zlib.decompressobj(zlib.MAX_WBITS | 16)
    if encoding == "deflate":
        return _Deflate()
    return None


class _Deflate:
    """``deflate`` as servers send it: zlib-wrapped, or (some) raw; httpx tries the former first."""

    def __init__(self) -> None:
        self._inner: Any = None
        self._first = True

    def decompress(self, data: bytes) -> bytes:
        if self._first:
            self._first = False
            try:
                self._inner = zlib.decompressobj()
                return bytes(self._inner.decompress(data))
            except zlib.error:
                self._inner = zlib.decompressobj(-zlib.MAX_WBITS)
        return bytes(self._inner.decompress(data))

    def flush(self) -> bytes:
        return bytes(self._inner.flush()) if self._inner is not None else b""


class Connection:
    """One HTTP/1.1 connection; each read of it has ``timeout`` seconds."""

    def __init__(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, timeout: float = REQUEST_TIMEOUT
    ) -> None:
        self.reader = reader
        self.writer = writer
        self.reusable = True
        self.timeout = timeout

    async def read(self, awaitable: Any) -> Any:
        try:
            # a deadline on this task, not wait_for's task of its own per read: a stream is a few
            # hundred reads, and each such task cost a loop turn or two
            async with asyncio.timeout(self.timeout):
                return await awaitable
        except TimeoutError:
            raise APITimeoutError() from None
        except asyncio.IncompleteReadError:
            cut = ConnectionError("peer closed connection without sending complete message body")
            raise APIConnectionError() from cut
        except (OSError, EOFError, asyncio.LimitOverrunError) as exc:
            raise APIConnectionError() from exc

    @property
    def open(self) -> bool:
        return self.reusable and not self.reader.at_eof() and not self.writer.is_closing()

    def close(self) -> None:
        self.reusable = False
        with contextlib.suppress(Exception):
            self.writer.close()


class ChatHttp:
    """One provider's client: POSTs to ``base_url`` + path, one kept-alive connection at a time."""

    def __init__(self, base_url: str, key: str) -> None:
        parts = urlsplit(base_url.strip())
        self.host = parts.hostname or ""
        self.port = parts.port or 80
        self._prefix = parts.path.rstrip("/")
        netloc = f"[{self.host}]" if ":" in self.host else self.host
        self._authority = netloc if parts.port in (None, 80) else f"{netloc}:{parts.port}"
        self._headers = sdk_headers(key)
        self._idle: Connection | None = None

    def request_bytes(self, path: str, data: bytes) -> bytes:
        """The whole request for the JSON body ``data``, as it goes on the wire. ValueError for a
        header a line break would split (a key pasted with its newline), as httpx refuses one."""
        if any(bad in value for _, value in self._headers for bad in "\r\n\0"):
            raise ValueError("a header value holds a line break")
        head = [f"POST {self._prefix}{path} HTTP/1.1", f"Host: {self._authority}"]
        head += ["Accept-Encoding: gzip, deflate", "Connection: keep-alive"]
        head += [f"{name}: {value}" for name, value in self._headers]
        head += [f"Content-Length: {len(data)}", "", ""]
        return "\r\n".join(head).encode("latin-1") + data

    async def post(self, path: str, body: object) -> Response:
        """Send the JSON ``body``; the reply once its headers came (an error status raised as
        :class:`APIStatusError`, with its body read). A one-shot run may have sent this very request
        already, before the runtime's imports (``early_request``): its reply is read from there."""
        data = early_request.encode(body)
        request = self.request_bytes(path, data)
        early = early_request.take(self.host, self.port, request)
        if early is not None:
            conn = await adopt(early, REQUEST_TIMEOUT)
        else:
            conn = await self._connection()
        early_request.sent(path, data)
        try:
            if early is None:
                conn.writer.write(request)
                await conn.read(conn.writer.drain())
            response = await read_response(conn)
        except BaseException:
            conn.close()
            raise
        if response.status_code >= 400:
            try:
                text = (await response.aread()).decode("utf-8", errors="replace")
            finally:
                self.release(response)
            raise _status_error(response, text)
        return response

    def release(self, response: Response) -> None:
        """Done with ``response``: its connection is kept for the next request when the body was
        read to its end, else closed."""
        conn = response._conn
        if response.complete and conn.open and response.headers.get("connection", "").lower() != "close":
            if self._idle is not None and self._idle is not conn:
                self._idle.close()
            self._idle = conn
        else:
            conn.close()

    async def aclose(self) -> None:
        if self._idle is not None:
            self._idle.close()
            self._idle = None

    async def _connection(self) -> Connection:
        idle, self._idle = self._idle, None
        if idle is not None and idle.open:
            return idle
        if idle is not None:
            idle.close()
        return await connect(self.host, self.port, REQUEST_TIMEOUT)


async def connect(host: str, port: int, seconds: float) -> Connection:
    """A new connection to ``host:port`` whose every read has ``seconds``, as has the connecting
    (raised as :class:`APITimeoutError`, or :class:`APIConnectionError` when it fails)."""
    try:
        async with asyncio.timeout(seconds):
            reader, writer = await asyncio.open_connection(host, port, limit=_LINE_LIMIT)
    except TimeoutError:
        raise APITimeoutError() from None
    except OSError as exc:
        raise APIConnectionError() from exc
    return Connection(reader, writer, seconds)


async def adopt(sock: socket.socket, seconds: float) -> Connection:
    """A connection already made (and its request sent) by a blocking socket."""
    try:
        reader, writer = await asyncio.open_connection(sock=sock, limit=_LINE_LIMIT)
    except OSError as exc:
        sock.close()
        raise APIConnectionError() from exc
    return Connection(reader, writer, seconds)


async def read_response(conn: Connection) -> Response:
    """The reply's status line and headers (a 1xx skipped); its body is read from the Response."""
    while True:
        status_line = await conn.read(conn.reader.readline())
        if not status_line:
            raise APIConnectionError("the server closed the connection without a response")
        version, _, rest = status_line.decode("latin-1").strip().partition(" ")
        code = rest.partition(" ")[0]
        if not version.startswith("HTTP/") or not code.isdigit():
            raise APIConnectionError(f"not an HTTP response: {status_line[:80]!r}")
        headers: dict[str, str] = {}
        size = 0
        while True:
            line = await conn.read(conn.reader.readline())
            size += len(line)
            if size > _HEADERS_LIMIT:
                raise APIConnectionError("the response's headers are too large")
            if line in (b"\r\n", b"\n", b""):
                break
            name, _, value = line.decode("latin-1").partition(":")
            name = name.strip().lower()
            value = value.strip()
            headers[name] = f"{headers[name]}, {value}" if name in headers else value
        status = int(code)
        if status >= 200:  # a 1xx (100 Continue, 103 Early Hints) comes before the reply
            if version == "HTTP/1.0" and headers.get("connection", "").lower() != "keep-alive":
                conn.reusable = False
            return Response(conn, status, headers)


def _status_error(response: Response, text: str) -> APIStatusError:
    """As ``openai._base_client._make_status_error_from_response`` and ``_make_status_error``."""
    message = f"Error code: {response.status_code}"
    err_text = text.strip()
    body: object = err_text
    try:
        body = json.loads(err_text)
    except ValueError:
        pass
    else:
        error = body.get("error", body) if isinstance(body, dict) else None
        said = error.get("message") if isinstance(error, dict) else None
        if isinstance(said, str) and said:
            message += f" - {said}"
    data = body.get("error", body) if isinstance(body, dict) else body
    return APIStatusError(message, response.status_code, data, response)
