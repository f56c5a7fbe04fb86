"""Fixtures for the provider tests: a clean provider environment, the local SSE test server, a
project, and ``spawn`` — a real ``shard agent --stdio`` whose config.toml points at that server."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import pytest

from shard.testing import AgentProcess, Runtimes

from ._server import ProviderServer
from ._support import KEY, KEY_ENV, server_home

Spawn = Callable[..., Awaitable[AgentProcess]]

_PROVIDER_ENV = (
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "ANTHROPIC_BASE_URL",
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "OPENAI_ORG_ID",
    "OPENAI_PROJECT_ID",
    "SHARD_HOME",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "ALL_PROXY",
    "http_proxy",
    "https_proxy",
    "all_proxy",
)


@pytest.fixture(autouse=True)
def _clean_provider_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """No key, base URL or proxy from the developer's shell leaks into a test (or its subprocesses)."""
    for name in _PROVIDER_ENV:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")


@pytest.fixture
async def server() -> AsyncIterator[ProviderServer]:
    srv = await ProviderServer.start()
    try:
        yield srv
    finally:
        await srv.close()


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """The project the agents work in: the README the recorded replies talk about."""
    root = tmp_path / "project"
    root.mkdir()
    (root / "notes.txt").write_text("hello\n")
    (root / "README.md").write_text("# Demo\nThe launch code is 7-4-1.\n")
    return root


@pytest.fixture
def home_for(tmp_path: Path, server: ProviderServer) -> Callable[[str], Path]:
    """The SHARD_HOME for a provider kind, written afresh: the test server as ``local/m`` (openai)
    or ``anth/claude-test`` (anthropic). A module overrides it for its own models or retry policy."""

    def _home(kind: str) -> Path:
        if kind == "openai":
            return server_home(tmp_path / "home", server, kind)
        return server_home(tmp_path / "home", server, kind, name="anth", model="claude-test")

    return _home


@pytest.fixture
async def spawn(home_for: Callable[[str], Path], project: Path) -> AsyncIterator[Spawn]:
    """``await spawn(kind="openai")``: config.toml for the test server (``home_for``), the agent
    started and past its handshake; every agent started is killed at the end."""
    runtimes = Runtimes()

    async def _spawn(kind: str = "openai") -> AgentProcess:
        return await runtimes.start(home_for(kind), project, env={KEY_ENV: KEY})

    yield _spawn
    await runtimes.close()
