"""Fixtures for the provider tests: a clean provider environment and the local SSE test server."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from ._server import ProviderServer

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
