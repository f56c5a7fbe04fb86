"""A small MCP server, written with the same SDK Shard uses, for the tests (run as a real process).

``python demo_server.py`` serves stdio; ``--http`` serves streamable HTTP on a free local port and
prints the port (one line on stdout) once it listens; ``--hang-at-start`` never answers the
handshake; ``--linger`` keeps running after its stdin closes; ``--with-child`` first starts a
``sleep`` of its own (in its process group). With ``$DEMO_PIDS`` set, the server appends its pid
there when it starts (and its child's).
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time


def _announce() -> None:
    """Start the child, write the pids, and hang if asked — before the SDK's imports, which take a
    second or two on a loaded machine: a test's start_timeout then never races them."""
    started = [os.getpid()]
    if "--with-child" in sys.argv:
        started.append(subprocess.Popen(["sleep", "3600"], stdin=subprocess.DEVNULL).pid)
    if pids := os.environ.get("DEMO_PIDS"):
        with open(pids, "a") as f:
            f.write("".join(f"{pid}\n" for pid in started))
    if "--hang-at-start" in sys.argv:
        time.sleep(3600)


if __name__ == "__main__":
    _announce()

from mcp.server.mcpserver import Context, Image, MCPServer  # noqa: E402
from mcp.types import ToolAnnotations  # noqa: E402

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


def _serve_http() -> None:
    import uvicorn

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen()  # connections wait in the backlog until uvicorn takes them: the port can be told now
    print(sock.getsockname()[1], flush=True)
    uvi = uvicorn.Server(uvicorn.Config(server.streamable_http_app(), log_level="warning"))
    uvi.run(sockets=[sock])


if __name__ == "__main__":
    if "--http" in sys.argv:
        _serve_http()
    else:
        server.run()
        if "--linger" in sys.argv:  # a server that outlives its stdin: only a signal ends it
            time.sleep(3600)
