"""The demo server written with the MCP SDK Shard uses: ``demo_server.py --sdk`` (stdio) and
``demo_server.py --http`` (streamable HTTP) run it. The plain stdio server in ``demo_server.py``
answers as this one does, which ``test_demo_parity.py`` holds it to; this one is the real thing the
interop tests run against. Importing it costs the SDK's import (~0.9 CPU-s).
"""

from __future__ import annotations

import json
import os
import socket
import sys
import time

from mcp.server.mcpserver import Context, Image, MCPServer
from mcp.types import ToolAnnotations

server = MCPServer("demo")


@server.tool(description="Say the text back, shouted.")
def shout(text: str) -> str:
    return text.upper() + "!"


@server.tool(description="The sum of two numbers.", annotations=ToolAnnotations(read_only_hint=True))
def add(a: int, b: int) -> str:
    return str(a + b)


@server.tool(description="The names of the environment variables the server got.")
def env_names() -> str:
    return json.dumps(sorted(os.environ))


@server.tool(description="The value of an HTTP request header this call came with.")
def header(name: str, ctx: Context) -> str:
    return (ctx.headers or {}).get(name.lower(), "(none)")


@server.tool(description="Never answers.")
def hang() -> str:
    time.sleep(3600)
    return "late"


@server.tool(description="Dies mid-call.")
def crash() -> str:
    os._exit(3)


@server.tool(description="Reports an error the tool itself found.")
def refuse(reason: str) -> str:
    raise ValueError(f"refused: {reason}")


@server.tool(
    description="PNG images of the given size in bytes.", annotations=ToolAnnotations(read_only_hint=True)
)
def picture(size: int, count: int = 1) -> list[Image]:
    png = b"\x89PNG\r\n\x1a\n" + bytes(max(size - 8, 0))
    return [Image(data=png, format="png") for _ in range(count)]


def serve_http() -> None:
    """Streamable HTTP on a free local port, told on stdout (one line) once it listens."""
    import uvicorn

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen()  # connections wait in the backlog until uvicorn takes them: the port can be told now
    print(sock.getsockname()[1], flush=True)
    uvi = uvicorn.Server(uvicorn.Config(server.streamable_http_app(), log_level="warning"))
    uvi.run(sockets=[sock])


def serve_stdio() -> None:
    server.run()
    if "--linger" in sys.argv:  # a server that outlives its stdin: only a signal ends it
        time.sleep(3600)
