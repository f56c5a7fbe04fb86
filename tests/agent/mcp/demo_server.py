"""A small MCP server for the tests, run as a real process; it plays a third-party server.

``python demo_server.py`` serves stdio from this file, with the standard library only: the same
tools as ``demo_sdk.py`` (the server written with the MCP SDK Shard uses) and, for the requests the
tests make, the same answers, line for line — ``test_demo_parity.py`` runs both on one script of
requests and compares. The SDK's import is ~0.9 CPU-s a start, and the suite starts a server some
twenty times; the tests whose point is the SDK's own server (interop over stdio and over HTTP) run
``demo_sdk.py`` through ``--sdk`` or ``--http``.

``--http`` serves streamable HTTP (always the SDK's) on a free local port and prints the port (one
line on stdout) once it listens; ``--sdk`` serves stdio with the SDK; ``--hang-at-start`` never
answers the handshake; ``--linger`` keeps running after its stdin closes; ``--with-child`` first
starts a ``sleep`` of its own (in its process group). With ``$DEMO_PIDS`` set, the server appends its
pid there when it starts (and its child's).

What the plain server does not copy: the SDK's log lines on stderr, and its words for arguments that
do not fit a tool's schema (no test sends such arguments).
"""

from __future__ import annotations

import base64
import inspect
import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

# What demo_sdk.py's server says of itself and its tools (checked by test_demo_parity.py).
_META = {"io.modelcontextprotocol/serverInfo": {"name": "demo", "version": ""}}
_DISCOVERED = {
    "cacheScope": "private",
    "capabilities": {
        "prompts": {"listChanged": True},
        "resources": {"listChanged": True, "subscribe": True},
        "tools": {"listChanged": True},
    },
    "resultType": "complete",
    "supportedVersions": ["2026-07-28"],
    "ttlMs": 0,
    "_meta": _META,
}


def _announce() -> None:
    """Start the child, write the pids, and hang if asked — before any import of the SDK, which
    takes a second or two on a loaded machine: a test's start_timeout then never races it."""
    started = [os.getpid()]
    if "--with-child" in sys.argv:
        started.append(subprocess.Popen(["sleep", "3600"], stdin=subprocess.DEVNULL).pid)
    if pids := os.environ.get("DEMO_PIDS"):
        with open(pids, "a") as f:
            f.write("".join(f"{pid}\n" for pid in started))
    if "--hang-at-start" in sys.argv:
        time.sleep(3600)


def shout(text: str) -> str:
    return text.upper() + "!"


def add(a: int, b: int) -> str:
    return str(a + b)


def env_names() -> str:
    return json.dumps(sorted(os.environ))


def header(name: str) -> str:
    return "(none)"  # stdio carries no HTTP headers


def hang() -> str:
    time.sleep(3600)
    return "late"


def crash() -> str:
    os._exit(3)


def refuse(reason: str) -> str:
    raise ValueError(f"refused: {reason}")


def picture(size: int, count: int = 1) -> list[bytes]:
    png = b"\x89PNG\r\n\x1a\n" + bytes(max(size - 8, 0))
    return [png for _ in range(count)]


def _param(name: str, kind: str, **more: Any) -> tuple[str, dict[str, Any]]:
    return name, {**more, "title": name.title(), "type": kind}


def _tool(
    function: Callable[..., Any],
    description: str,
    *params: tuple[str, dict[str, Any]],
    read_only: bool = False,
) -> dict[str, Any]:
    """A tool as the SDK lists one it made from a function: its arguments' schema (``params``), and
    for a function returning ``str`` the object ``{"result": …}`` as its output schema."""
    name = function.__name__
    schema: dict[str, Any] = {"type": "object", "properties": dict(params)}
    if required := [p for p, spec in params if "default" not in spec]:
        schema["required"] = required
    tool: dict[str, Any] = {
        "description": description,
        "inputSchema": {**schema, "title": f"{name}Arguments"},
    }
    if read_only:
        tool = {"annotations": {"readOnlyHint": True}, **tool}
    tool["name"] = name
    if inspect.signature(function).return_annotation == "str":
        result = {"result": {"title": "Result", "type": "string"}}
        tool["outputSchema"] = {
            "properties": result,
            "required": ["result"],
            "title": f"{name}Output",
            "type": "object",
        }
    return tool


TOOLS = [
    _tool(shout, "Say the text back, shouted.", _param("text", "string")),
    _tool(add, "The sum of two numbers.", _param("a", "integer"), _param("b", "integer"), read_only=True),
    _tool(env_names, "The names of the environment variables the server got."),
    _tool(header, "The value of an HTTP request header this call came with.", _param("name", "string")),
    _tool(hang, "Never answers."),
    _tool(crash, "Dies mid-call."),
    _tool(refuse, "Reports an error the tool itself found.", _param("reason", "string")),
    _tool(
        picture,
        "PNG images of the given size in bytes.",
        _param("size", "integer"),
        _param("count", "integer", default=1),
        read_only=True,
    ),
]
_FUNCTIONS: dict[str, Callable[..., Any]] = {
    f.__name__: f for f in (shout, add, env_names, header, hang, crash, refuse, picture)
}


def call(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """A ``tools/call`` result as the SDK's server makes it: a string is text plus structured
    content, bytes are PNG images, and an exception in the tool is an error result that keeps its
    message to itself."""
    function = _FUNCTIONS.get(name)
    if function is None:
        return _result([{"text": f"Unknown tool: {name}", "type": "text"}], error=True)
    try:
        bound = inspect.signature(function).bind(**arguments)
    except TypeError as e:
        return _result([{"text": f"Error executing tool {name}: {e}", "type": "text"}], error=True)
    try:
        value = function(*bound.args, **bound.kwargs)
    except Exception:
        return _result([{"text": f"Error executing tool {name}", "type": "text"}], error=True)
    if isinstance(value, str):
        return {**_result([{"text": value, "type": "text"}]), "structuredContent": {"result": value}}
    images = [
        {"data": base64.b64encode(png).decode(), "mimeType": "image/png", "type": "image"} for png in value
    ]
    return _result(images)


def _result(content: list[dict[str, Any]], error: bool = False) -> dict[str, Any]:
    return {"content": content, "isError": error, "resultType": "complete", "_meta": _META}


class _Stdio:
    """JSON-RPC over stdin/stdout, one message a line; each tool call on a thread of its own, as the
    SDK runs a plain function's call — so a hanging call holds neither the others nor, like the
    SDK's, the exit at end of input: the process waits for it."""

    def __init__(self) -> None:
        self._write = threading.Lock()

    def serve(self) -> None:
        for line in sys.stdin.buffer:
            if line.strip():
                self._take(json.loads(line))

    def _take(self, message: dict[str, Any]) -> None:
        method, params = message.get("method"), message.get("params") or {}
        if "id" not in message:
            return  # a notification: Shard's client sends one only to cancel a call, here a hang
        request_id = message["id"]
        if method == "server/discover":
            self._answer(request_id, _DISCOVERED)
        elif method == "tools/list":
            tools = {"cacheScope": "private", "resultType": "complete", "tools": TOOLS, "ttlMs": 0}
            self._answer(request_id, {**tools, "_meta": _META})
        elif method == "tools/call":
            args = (request_id, params["name"], params.get("arguments") or {})
            threading.Thread(target=self._call, args=args).start()
        else:
            error = {"code": -32601, "message": "Method not found", "data": method}
            self._send({"jsonrpc": "2.0", "id": request_id, "error": error})

    def _call(self, request_id: int | str, name: str, arguments: dict[str, Any]) -> None:
        self._answer(request_id, call(name, arguments))

    def _answer(self, request_id: int | str, result: dict[str, Any]) -> None:
        self._send({"jsonrpc": "2.0", "id": request_id, "result": result})

    def _send(self, message: dict[str, Any]) -> None:
        data = json.dumps(message, separators=(",", ":")).encode() + b"\n"
        with self._write:
            sys.stdout.buffer.write(data)
            sys.stdout.buffer.flush()


if __name__ == "__main__":
    _announce()
    if "--http" in sys.argv or "--sdk" in sys.argv:
        import demo_sdk  # this file's folder is first on sys.path: the script's own

        if "--http" in sys.argv:
            demo_sdk.serve_http()
        else:
            demo_sdk.serve_stdio()
    else:
        _Stdio().serve()
        if "--linger" in sys.argv:  # a server that outlives its stdin: only a signal ends it
            time.sleep(3600)
