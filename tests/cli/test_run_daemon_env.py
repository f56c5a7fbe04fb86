"""``shard run`` gives what a direct run gives whether or not a daemon runs (issue 26 item 1): the
same model, the same endpoint, the same key — from the caller's shell, not the daemon's.

A daemon's runtimes call providers with the daemon's environment; so a run whose shell's provider
environment is not the daemon's runs in its own process (``shard._provider_env``), and one whose
environment is the daemon's still goes through it. Each test compares the provider request a direct
run sends with the one the same command sends beside a real ``shard daemon``, against a local server
that plays the OpenAI API.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest

from agent.providers._server import ProviderServer, Received, Stream
from shard.testing import DaemonProcess, run_shard

pytestmark = pytest.mark.slow

KEY = "sk-test-shell-0123456789abcdef"
_IDS = re.compile(r"\b(sess|msg|tc|turn)-[0-9a-f]+")


@pytest.fixture(autouse=True)
def _no_provider_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """Neither the test's shell nor a daemon it starts has a key or an endpoint unless a test says so."""
    for name in list(os.environ):
        if name.startswith(("OPENAI_", "ANTHROPIC_")) or name.lower().endswith("_proxy"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")


@pytest.fixture
async def server() -> Any:
    srv = await ProviderServer.start()
    try:
        yield srv
    finally:
        await srv.close()


def _shell(server: ProviderServer) -> dict[str, str]:
    return {"OPENAI_API_KEY": KEY, "OPENAI_BASE_URL": server.openai_url}


def _request(received: Received) -> dict[str, Any]:
    """What decides where a request goes and what it asks, without what differs run to run."""
    return {
        "path": received.path,
        "authorization": received.headers.get("Authorization"),
        "body": _IDS.sub(r"\1-ID", json.dumps(received.body, sort_keys=True)),
    }


async def _agents(daemon: DaemonProcess) -> list[dict[str, Any]]:
    client = await daemon.unix()
    listed, _ = await client.request({"type": "agent.list", "id": "list"})
    await client.close()
    return listed["data"]["agents"]


@pytest.mark.parametrize("model", [[], ["--model", "openai/gpt-5.4"]], ids=["default", "openai/gpt-5.4"])
@pytest.mark.parametrize(
    "daemon_env",
    [{}, {"OPENAI_API_KEY": "sk-the-daemons-own"}],
    ids=["daemon-without-key", "daemon-with-another-key"],
)
@pytest.mark.no_local_runtimes
async def test_a_shell_with_other_provider_settings_than_the_daemons_runs_as_a_direct_run(
    tmp_path: Path, project: Path, server: ProviderServer, model: list[str], daemon_env: dict[str, str]
) -> None:
    """OPENAI_API_KEY and OPENAI_BASE_URL set in the shell, not in the daemon (or another key
    there): the run beside the daemon sends the request the direct run sends — same URL, model,
    Authorization header and body — and leaves no agent in the daemon (``--keep`` says why). It
    used to run the daemon's offline demo, and ``--model openai/…`` was refused there."""
    home = tmp_path / "home"
    daemon = await DaemonProcess.start(home, env=daemon_env)
    try:
        server.replies.extend([Stream("openai/text.sse"), Stream("openai/text.sse")])
        shell = _shell(server)
        direct = await run_shard(home, project, "run", "--direct", *model, "hi", env=shell)
        beside = await run_shard(home, project, "run", "--keep", *model, "hi", env=shell)
        assert direct[0] == beside[0] == 0, (direct[2], beside[2])
        assert beside[1] == direct[1] != b""
        assert [_request(r) for r in server.requests] == [_request(server.requests[0])] * 2
        assert server.requests[0].headers["Authorization"] == f"Bearer {KEY}"
        assert server.requests[1].body["model"] == ("gpt-5.4" if model else "gpt-5.5")
        assert await _agents(daemon) == []
        assert "the daemon's provider settings are not this shell's (OPENAI_" in beside[2].decode()
        assert KEY not in beside[2].decode() + "\n".join(daemon.output)
    finally:
        await daemon.kill()


async def test_a_shell_with_the_daemons_provider_settings_goes_through_it(
    tmp_path: Path, project: Path, server: ProviderServer
) -> None:
    """The daemon started from a shell like the caller's: the run goes through it (its agent, kept,
    is listed) and its runtime sends the request a direct run sends — the key reached it through the
    daemon's key pipe, as ever."""
    home = tmp_path / "home"
    shell = _shell(server)
    daemon = await DaemonProcess.start(home, env=shell)
    try:
        server.replies.extend([Stream("openai/text.sse"), Stream("openai/text.sse")])
        direct = await run_shard(home, project, "run", "--direct", "hi", env=shell)
        through = await run_shard(home, project, "run", "--keep", "hi", env=shell)
        assert direct[0] == through[0] == 0, (direct[2], through[2])
        assert through[1] == direct[1]
        assert [_request(r) for r in server.requests] == [_request(server.requests[0])] * 2
        (agent,) = await _agents(daemon)
        assert agent["name"] == "shard run"
        assert "provider settings" not in through[2].decode()
    finally:
        await daemon.kill()


async def test_a_session_open_in_a_daemon_agent_with_other_settings_is_refused_in_one_line(
    tmp_path: Path, project: Path, server: ProviderServer
) -> None:
    """``--session`` names a session a daemon agent holds, and the daemon's provider settings are
    not the shell's: the run can neither go direct (the agent holds the session) nor through the
    daemon (another endpoint) — one line says so and where to go on, exit 2, nothing is sent."""
    home = tmp_path / "home"
    daemon = await DaemonProcess.start(home)
    try:
        client = await daemon.unix()
        created, _ = await client.request({"type": "agent.create", "id": "c", "cwd": str(project)})
        (agent,) = await _agents(daemon)
        code, out, err = await run_shard(
            home, project, "run", "--session", agent["session_id"], "hi", env=_shell(server)
        )
        assert (code, out) == (2, b""), err
        line = err.decode().strip()
        assert "\n" not in line
        assert f"is open in the daemon's agent {created['data']['agent_id']}" in line
        assert "(OPENAI_API_KEY, OPENAI_BASE_URL)" in line
        assert f"shard attach {created['data']['agent_id']}" in line
        assert server.requests == []
    finally:
        await daemon.kill()


@pytest.mark.no_local_runtimes
async def test_with_no_model_anywhere_the_run_says_so_as_a_direct_run_does(
    tmp_path: Path, project: Path
) -> None:
    """No key in the shell nor in the daemon, no config: a direct run says that no model is
    configured (exit 1); beside the daemon the same command says the same — it used to run the
    daemon's offline demo, whose answer then explained how to configure a model."""
    home = tmp_path / "home"
    daemon = await DaemonProcess.start(home)
    try:
        direct = await run_shard(home, project, "run", "--direct", "hi")
        beside = await run_shard(home, project, "run", "--keep", "hi")
        assert direct[0] == beside[0] == 1, (direct, beside)
        assert beside[1] == direct[1] == b""
        assert beside[2].decode().splitlines()[-1] == direct[2].decode().splitlines()[-1]
        assert "no model" in direct[2].decode()
        assert await _agents(daemon) == []
    finally:
        await daemon.kill()
