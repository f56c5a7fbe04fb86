"""Boundary: no secret is readable by a tool.

An OpenAI-compatible local server plays a model that calls ``bash`` with a command that walks from
itself up through every ancestor process — the runtime, the daemon, the test — reading each one's
``/proc/<pid>/environ`` and ``/proc/<pid>/cmdline``, and its own environment. The provider key is
in the environment the agent (or the daemon) was started with, so before the fix the runtime's own
environ showed it to ``cat /proc/$PPID/environ``. Now no process on the way shows it — and the key
still reaches the provider (the server sees it), on a direct connection and through the daemon,
whose runtimes get it through a pipe.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from agent.providers._server import ProviderServer, Stream
from agent.providers._support import KEY, KEY_ENV, provider_toml, write_home
from shard.testing import AgentProcess, DaemonProcess

from ._support import bash_call_sse

# The key is assembled at run time so no command line holds it literally.
_HALF = len(KEY) // 2
WALK = (
    f"k=$(printf '%s%s' '{KEY[:_HALF]}' '{KEY[_HALF:]}'); p=$$; "
    'while [ "$p" -gt 1 ]; do '
    "e=$(tr '\\0' '\\n' < /proc/$p/environ | grep -cF \"$k\"); "
    "c=$(tr '\\0' '\\n' < /proc/$p/cmdline | grep -cF \"$k\"); "
    'echo "$p $e $c"; p=$(sed -n "s/^PPid:[[:space:]]*//p" /proc/$p/status); done; '
    'echo "self $(env | grep -cF "$k") 0"'
)


def _home(tmp_path: Path, server: ProviderServer) -> Path:
    body = provider_toml("local", "openai", server.openai_url, '[{ id = "m", context_window = 32768 }]')
    return write_home(tmp_path / "home", body, default_model="local/m")


def _walk(result: dict[str, Any]) -> dict[str, tuple[int, int]]:
    """pid (or "self") -> (hits in environ, hits in cmdline), from the walk's output."""
    assert result["is_error"] is False, result
    rows = [line.split() for line in result["content"]["text"].splitlines() if line.strip()]
    return {pid: (int(e), int(c)) for pid, e, c in rows}


async def _answer_and_collect(client: Any, agent_id: str | None = None) -> dict[str, Any]:
    read = await client.until_type("permission_request")
    request = read[-1]
    message = {"type": "permission_response", "request_id": request["request_id"], "choice_id": "allow"}
    if agent_id is not None:
        message["agent_id"] = agent_id
    await client.send(message)
    read = await client.until_type("tool_result")
    return read[-1]


@pytest.fixture
async def server() -> AsyncIterator[ProviderServer]:
    """A model that asks bash to walk up the process tree, then answers."""
    srv = await ProviderServer.start()
    srv.replies.extend([Stream(bash_call_sse(WALK)), Stream("openai/answer.sse")])
    try:
        yield srv
    finally:
        await srv.close()


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    return root


ENV = {KEY_ENV: KEY, "NO_PROXY": "127.0.0.1"}


def _clean(walk: dict[str, tuple[int, int]], server: ProviderServer) -> None:
    assert {pid: hits for pid, hits in walk.items() if hits != (0, 0)} == {}
    assert server.requests[0].headers["Authorization"] == f"Bearer {KEY}", (
        "the key still reached the provider"
    )


async def test_no_process_on_the_way_up_shows_the_key_on_a_direct_connection(tmp_path, server, project):
    """``shard agent --stdio`` started with the key in its environment: the bash tool finds it in no
    ancestor's environ or cmdline (the runtime's included) nor in its own environment, and the
    provider still got it.

    Covers: R4.2.1
    """
    # cold: the subject is a process started with the key in its environment, not a fork
    agent = await AgentProcess.start(_home(tmp_path, server), project, env=ENV, cold=True)
    try:
        await agent.handshake()
        await agent.send({"type": "prompt", "message": "walk"})
        walk = _walk(await _answer_and_collect(agent))
        assert str(agent.proc.pid) in walk, "the walk passed through the runtime"
        await agent.until_type("turn_end")
        _clean(walk, server)
    finally:
        await agent.kill()


async def test_no_process_on_the_way_up_shows_the_key_through_the_daemon(tmp_path, server, project):
    """``shard daemon`` started with the key: its runtime gets the key through a pipe, so neither
    the runtime's nor the daemon's environ or cmdline shows it, and the provider still got it.

    Covers: R4.2.1
    """
    daemon = await DaemonProcess.start(_home(tmp_path, server), env=ENV)
    try:
        client = await daemon.unix()
        created, _ = await client.request({"type": "agent.create", "id": "c", "cwd": str(project)})
        assert created["success"], created
        agent_id = created["data"]["agent_id"]
        attached, _ = await client.request({"type": "agent.attach", "id": "a", "agent_id": agent_id})
        assert attached["success"], attached
        await client.send({"type": "prompt", "agent_id": agent_id, "message": "walk"})
        walk = _walk(await _answer_and_collect(client, agent_id))
        assert str(daemon.proc.pid) in walk, "the walk passed through the daemon"
        assert len(walk) >= 4, walk  # self, bash, the runtime, the daemon, …
        await client.until_type("turn_end")
        _clean(walk, server)
    finally:
        await daemon.kill()


def test_the_test_itself_does_not_hold_the_key():
    """The walk would be vacuous past this test process if the key were in its own environment."""
    assert KEY not in os.environ.values()
