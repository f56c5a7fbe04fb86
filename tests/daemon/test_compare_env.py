"""``daemon.compare_env`` against a real daemon (Shard, additive; issue 26 item 1): it answers the
names of the caller's provider variables whose values differ from what its runtimes would use —
the keys it captured at start, else its own environment — on the unix socket only, and tells no
value."""

from __future__ import annotations

import os
from typing import Any

import pytest

from daemon.daemon_helpers import connect
from shard._provider_env import gather, nonce, sealed
from shard.testing import text_step

pytestmark = pytest.mark.no_local_runtimes  # no test here starts a runtime

KEY = "sk-daemon-0123456789abcdef"
URL = "http://127.0.0.1:9/v1"


@pytest.fixture(autouse=True)
def _no_provider_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(name, raising=False)


async def _compare(
    client: Any, variables: dict[str, str | None], *, drop: tuple[str, ...] = ()
) -> dict[str, Any]:
    """Ask with this test's own provider environment (the daemon's: it inherited it; a CA bundle
    variable, say), changed by ``variables`` and without ``drop``."""
    variables = {**gather(os.environ, []), **variables}
    variables = {name: value for name, value in variables.items() if name not in drop}
    question = nonce()
    asked = {"type": "daemon.compare_env", "id": "env", "nonce": question}
    answer, _ = await client.request({**asked, "variables": sealed(question, variables)})
    return answer


async def test_the_daemon_names_what_differs_and_tells_no_value(
    daemon_factory: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("OPENAI_BASE_URL", URL)
    daemon = await daemon_factory([text_step("x")])
    client = await daemon.unix()
    same = await _compare(client, {"OPENAI_API_KEY": KEY, "OPENAI_BASE_URL": URL})
    assert same["data"] == {"differ": []}
    other = await _compare(client, {"OPENAI_API_KEY": "sk-mine", "OPENAI_BASE_URL": URL, "PATH": "/bin"})
    assert other["data"] == {"differ": ["OPENAI_API_KEY", "PATH"]}, "PATH: not the daemon's to compare"
    lacking = await _compare(client, {}, drop=("OPENAI_API_KEY", "OPENAI_BASE_URL"))
    assert lacking["data"] == {"differ": ["OPENAI_API_KEY", "OPENAI_BASE_URL"]}
    assert KEY not in str([same, other, lacking])


async def test_only_a_unix_socket_client_is_answered(daemon_factory: Any, transport: str) -> None:
    daemon = await daemon_factory([text_step("x")])
    client = await connect(daemon, transport)
    answer = await _compare(client, {"OPENAI_API_KEY": None})
    if transport == "unix":
        assert answer["data"] == {"differ": []}
    else:
        assert answer["success"] is False
        assert answer["error"]["code"] == "INVALID_REQUEST"
        assert "unix socket only" in answer["error"]["message"]


async def test_a_malformed_question_is_invalid_request(daemon_factory: Any) -> None:
    """Covers: R8.7"""
    daemon = await daemon_factory([text_step("x")])
    client = await daemon.unix()
    for bad in (
        {"nonce": nonce(), "variables": ["OPENAI_API_KEY"]},
        {"nonce": nonce(), "variables": {"OPENAI_API_KEY": 1}},
        {"nonce": "0" * 257, "variables": {}},
        {"nonce": nonce(), "variables": {f"V{i}": None for i in range(513)}},
    ):
        answer, _ = await client.request({"type": "daemon.compare_env", "id": "bad", **bad})
        assert answer["success"] is False, bad
        assert answer["error"]["code"] == "INVALID_REQUEST"
