"""Boundary: a command the agent runs cannot trace its way to a provider key through the warm template.

The template is the parent of every warm runtime, and a forked child reads its key pipe while still
running the template's code. A same-user command that could attach to the template with ptrace
would follow the next fork (``PTRACE_O_TRACEFORK``), find the child stopped at birth, and read its
key pipe through ``/proc/<child>/fd``. So the template turns non-dumpable before it serves a request
(its children are born so), and any process about to read a key pipe reads it only when nothing
traces it.

As root, ``CAP_SYS_PTRACE`` would let any command trace anything; the daemon is then started
without it (``setpriv``), which makes root exactly what every other user is to ptrace: the checks
left are the ones an ordinary user meets (same uid, dumpable).
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from agent.providers._server import ProviderServer, Stream
from agent.providers._support import KEY, KEY_ENV, provider_toml, write_home
from shard.testing import DaemonProcess

from ._support import bash_call_sse

ATTACK = Path(__file__).with_name("trace_attack.py")
PTRACE_SEIZE = 0x4206
ENV = {KEY_ENV: KEY, "NO_PROXY": "127.0.0.1"}


def _as_an_ordinary_user() -> tuple[str, ...]:
    if os.geteuid() != 0:
        return ()
    return ("setpriv", "--bounding-set=-sys_ptrace", "--inh-caps=-sys_ptrace", "--")


@pytest.fixture
async def server() -> AsyncIterator[ProviderServer]:
    srv = await ProviderServer.start()
    try:
        yield srv
    finally:
        await srv.close()


async def _approve_and_collect(client: Any, agent_id: str) -> dict[str, Any]:
    request = (await client.until_type("permission_request"))[-1]
    await client.send(
        {
            "type": "permission_response",
            "agent_id": agent_id,
            "request_id": request["request_id"],
            "choice_id": "allow",
        }
    )
    return (await client.until_type("tool_result"))[-1]


async def test_an_approved_command_that_traces_the_template_and_follows_a_fork_reads_no_key(
    tmp_path: Path, server: ProviderServer
) -> None:
    """The model runs (approved, unconfined) a command that seizes the template it descends from
    with ``PTRACE_O_TRACEFORK``, asks the daemon for a new agent, and reads every pipe of the child
    stopped at its fork. Before the fix it read ``{"<KEY_ENV>": "<key>"}``; now the template cannot
    be traced at all, and no key shows anywhere in what the command saw."""
    project = tmp_path / "project"
    project.mkdir()
    home = write_home(
        tmp_path / "home",
        provider_toml("local", "openai", server.openai_url, '[{ id = "m", context_window = 32768 }]'),
        default_model="local/m",
    )
    command = f"{sys.executable} {ATTACK} {home / 'daemon.sock'} {project}"
    server.replies.extend([Stream(bash_call_sse(command)), Stream("openai/answer.sse")])
    daemon = await DaemonProcess.start(home, env=ENV, prefix=_as_an_ordinary_user())
    try:
        client = await daemon.unix()
        created, _ = await client.request({"type": "agent.create", "id": "c", "cwd": str(project)})
        assert created["success"], created
        agent_id = created["data"]["agent_id"]
        attached, _ = await client.request({"type": "agent.attach", "id": "a", "agent_id": agent_id})
        assert attached["success"], attached
        await client.send({"type": "prompt", "agent_id": agent_id, "message": "trace"})
        result = await _approve_and_collect(client, agent_id)
        text = result["content"]["text"]
        assert KEY not in text, "the command read a runtime's key through the template"
        seen = json.loads(text.strip().splitlines()[-1])
        assert isinstance(seen.get("template"), int), seen  # it did find the template to attack
        assert seen["seized"] is False, seen
        await client.until_type("turn_end")
        assert server.requests[0].headers["Authorization"] == f"Bearer {KEY}", "the key still works"
    finally:
        await daemon.kill()


CHILD = """
import json, sys
sys.stdin.readline()
from shard import _secrets
_secrets.inherit()
print(json.dumps(_secrets.held()), flush=True)
sys.stdin.read()
"""


def _inherit_in_a_child(*, traced: bool) -> tuple[dict[str, str], str]:
    """A process handed a key pipe (as a runtime is), traced or not by this test before it reads it:
    the keys it then holds, and what it said on stderr."""
    read_end, write_end = os.pipe()
    os.write(write_end, json.dumps({KEY_ENV: KEY}).encode())
    os.close(write_end)
    env = {**os.environ, "SHARD_SECRETS_FD": str(read_end)}
    with subprocess.Popen(
        [sys.executable, "-c", CHILD],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        pass_fds=(read_end,),
        env=env,
    ) as child:
        os.close(read_end)
        assert child.stdin is not None
        assert child.stdout is not None
        assert child.stderr is not None
        try:
            if traced:
                libc = ctypes.CDLL(None, use_errno=True)
                libc.ptrace.restype = ctypes.c_long
                libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]
                seized = libc.ptrace(PTRACE_SEIZE, child.pid, None, None)
                assert seized == 0, os.strerror(ctypes.get_errno())
            child.stdin.write(b"go\n")
            child.stdin.flush()
            held = json.loads(child.stdout.readline())
            child.stdin.close()
            child.wait(timeout=30)
            return held, child.stderr.read().decode()
        finally:
            with contextlib.suppress(ProcessLookupError):
                child.kill()


def test_a_process_traced_before_it_reads_its_key_pipe_withholds_the_key() -> None:
    """A tracer attached before the key arrives (while the process was still dumpable) stays attached
    through ``PR_SET_DUMPABLE``: the process sees it in ``TracerPid``, closes the pipe unread and says
    so; untraced, the same process takes the key."""
    held, said = _inherit_in_a_child(traced=True)
    assert held == {}
    assert "traced" in said, said
    assert "withheld" in said, said
    held, said = _inherit_in_a_child(traced=False)
    assert held == {KEY_ENV: KEY}, said
