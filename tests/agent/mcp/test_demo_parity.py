"""The demo server's plain stdio side (``demo_server.py``) answers as the one written with the SDK
(``demo_sdk.py``, through ``--sdk``): both get one script of requests — as Shard's client sends them
(``Connection`` over the SDK's client: discover, the tool list, a call of each tool, a call cancelled
mid-way, a method and a tool that are not there) — and give the same answers, as JSON; a crash
mid-call ends both alike. The other MCP tests run the plain one, which starts without the SDK's
import; this test is what keeps it the SDK's double."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from typing import Any

from agent.mcp._servers import DEMO

# what the SDK's client (mcp 2.x, protocol 2026-07-28) sends with each request
_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": {"name": "mcp", "version": "0.1.0"},
    "io.modelcontextprotocol/clientCapabilities": {},
}


def _request(request_id: int, method: str, **params: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "method": method, "params": {**params, "_meta": _META}}


def _call(request_id: int, tool: str, arguments: dict[str, Any] | None = None) -> dict[str, Any]:
    return _request(request_id, "tools/call", name=tool, arguments=arguments or {})


_HANG_ID = 11
SCRIPT = [
    _request(1, "server/discover"),
    _request(2, "tools/list"),
    _call(3, "shout", {"text": "hi"}),
    _call(4, "add", {"a": 2, "b": 3}),
    _call(5, "env_names"),
    _call(6, "header", {"name": "X-Api-Key"}),
    _call(7, "refuse", {"reason": "no"}),
    _call(8, "picture", {"size": 20, "count": 2}),
    _call(9, "picture", {"size": 3}),
    _call(10, "no_such_tool"),
    _call(_HANG_ID, "hang"),
    {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": _HANG_ID}},
    _call(12, "add", {"a": 1, "b": 1}),  # answered while the cancelled call still runs
    _request(13, "no/such/method"),
]


async def _run(*flags: str) -> tuple[list[Any], bytes, int]:
    """The answers to SCRIPT, one request at a time (each answer read before the next request);
    then what the server writes after a ``crash`` call, and its exit status."""
    env = {"PATH": os.environ.get("PATH", ""), "DEMO_PARITY": "1"}
    proc = await asyncio.create_subprocess_exec(
        sys.executable, str(DEMO), *flags,
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL,
        env=env,
    )  # fmt: skip
    assert proc.stdin is not None
    assert proc.stdout is not None
    answers = []
    try:
        for message in SCRIPT:
            proc.stdin.write(json.dumps(message).encode() + b"\n")
            await proc.stdin.drain()
            if "id" in message and message["id"] != _HANG_ID:
                answers.append(json.loads(await asyncio.wait_for(proc.stdout.readline(), 60)))
        proc.stdin.write(json.dumps(_call(14, "crash")).encode() + b"\n")
        await proc.stdin.drain()
        after = await asyncio.wait_for(proc.stdout.read(), 60)
        return answers, after, await asyncio.wait_for(proc.wait(), 60)
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()


async def test_the_plain_demo_server_answers_as_the_sdks_does():
    plain, sdk = await asyncio.gather(_run(), _run("--sdk"))
    answers, after, status = sdk
    assert [a["id"] for a in answers] == [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 12, 13]  # the hang: none
    assert {t["name"] for t in answers[1]["result"]["tools"]} >= {"shout", "add", "crash", "picture"}
    assert (after, status) == (b"", 3)  # the crash: no answer, the process gone
    for mine, theirs in zip(plain[0], answers, strict=True):
        assert mine == theirs
    assert plain[1:] == (after, status)
