"""A one-shot's first request sent while the runtime imports (``early_request``, issue 31): the
policy in-process, and real ``shard run`` processes against the local test server."""

from __future__ import annotations

import json
import socket
from pathlib import Path
from typing import Any

import pytest

from shard.agent.providers import early_request
from shard.agent.providers.chat_http import ChatHttp
from shard.agent.providers.early_request import encode, take, with_prompt
from shard.testing.agent_process import run_shard

from ._server import ProviderServer, Stream
from ._support import KEY, KEY_ENV, provider_toml, write_home

SYSTEM = {"role": "system", "content": "You are Shard.\nToday: 2026-12-02"}


def _body(prompt: Any) -> dict[str, Any]:
    return {
        "model": "m",
        "messages": [SYSTEM, {"role": "user", "content": prompt}],
        "tools": [{"type": "function", "function": {"name": "read", "parameters": {"type": "object"}}}],
        "stream": True,
        "stream_options": {"include_usage": True},
        "temperature": 0.7,
    }


def test_a_kept_body_with_a_new_prompt_is_the_body_built_for_that_prompt() -> None:
    """Through the JSON text it is kept as, byte for byte: plain content, one text part among
    others, and prompts with quotes, non-ASCII and line breaks."""
    for old, new in [("first", "second"), ("a", 'say "hé"\nthen ✓'), ("x" * 3, "")]:
        kept = json.loads(encode(_body(old)).decode())
        assert encode(with_prompt(kept, old, new)) == encode(_body(new))
        image = {"type": "image_url", "image_url": {"url": "data:image/png;base64,AA=="}}
        parts = json.loads(encode(_body([{"type": "text", "text": old}, image])).decode())
        assert encode(with_prompt(parts, old, new)) == encode(_body([{"type": "text", "text": new}, image]))


@pytest.mark.parametrize(
    "body",
    [
        _body("other"),  # the kept prompt is not the one this body holds
        {**_body("first"), "messages": [SYSTEM, {"role": "user", "content": "first"}, {"role": "assistant"}]},
        {
            **_body("first"),
            "messages": [SYSTEM, {"role": "user", "content": "a"}, {"role": "user", "content": "first"}],
        },
        _body([{"type": "text", "text": "first"}, {"type": "text", "text": "first"}]),
        {**_body("first"), "messages": []},
        {"model": "m"},
    ],
)
def test_a_body_that_is_not_one_new_prompt_is_not_sent_early(body: dict[str, Any]) -> None:
    """History, a reply after the prompt, two prompts, two text parts: nothing to replace safely."""
    assert with_prompt(body, "first", "second") is None


def test_only_the_very_request_takes_the_early_connection(monkeypatch: pytest.MonkeyPatch) -> None:
    """Equal bytes to the same server: the connection, reply unread. Another server: untouched.
    Another request to the same server: the early one is closed, and nothing is taken later."""
    ours, theirs = socket.socketpair()
    try:
        monkeypatch.setattr(early_request, "_pending", early_request._Early("h", 80, b"REQUEST", ours))
        assert take("other", 80, b"REQUEST") is None
        assert early_request._pending is not None
        assert take("h", 80, b"REQUEST") is ours
        assert early_request._pending is None

        monkeypatch.setattr(early_request, "_pending", early_request._Early("h", 80, b"REQUEST", ours))
        assert take("h", 80, b"REQUESTS") is None
        assert ours.fileno() == -1  # closed unread
        assert take("h", 80, b"REQUEST") is None
    finally:
        ours.close()
        theirs.close()


# --- real runs -------------------------------------------------------------------------------


def _home(tmp_path: Path, server: ProviderServer) -> Path:
    # no context_window: the runtime asks the server (its probes), after its imports, before its call
    body = provider_toml("local", "openai", server.openai_url, '["m"]')
    return write_home(tmp_path / "home", body, default_model="local/m")


async def _run(home: Path, project: Path, *args: str) -> tuple[int, str, str]:
    code, out, err = await run_shard(home, project, "run", *args, env={KEY_ENV: KEY})
    return code, out.decode(), err.decode()


@pytest.fixture
def project(project: Path) -> Path:
    """The shared project, with instructions the system prompt carries."""
    (project / "AGENTS.md").write_text("Answer briefly.\n")
    return project


async def test_the_next_run_sends_its_first_request_before_the_runtime_imports(
    tmp_path: Path, project: Path, server: ProviderServer
) -> None:
    """The first run in a place keeps its first body (0600, no key in it); the next one, with
    another prompt, sends that body with its own prompt before the runtime has even asked the
    server for its window, and reads its answer from there: one request, not two."""
    home = _home(tmp_path, server)
    server.replies.append(Stream("openai/text.sse"))
    code, out, err = await _run(home, project, "say hello")
    assert (code, out) == (0, "Hello, world!\n"), err
    assert server.arrivals[0] == "probe"  # nothing kept yet: the runtime's own order
    kept = home / "cache" / "first-request.json"
    assert oct(kept.stat().st_mode & 0o777) == oct(0o600)
    assert KEY not in kept.read_text()

    server.arrivals.clear()
    server.requests.clear()
    server.replies.append(Stream("openai/answer.sse"))
    code, out, err = await _run(home, project, "What does the README say?")
    assert (code, out) == (0, "The README says the launch code is 7-4-1.\n"), err
    assert server.arrivals[0] == "request"  # before the probes: sent early
    assert server.arrivals.count("request") == 1  # and taken: the runtime sent no second one
    (request,) = server.requests
    assert request.body["messages"][-1] == {"role": "user", "content": "What does the README say?"}
    assert request.headers["Authorization"] == f"Bearer {KEY}"


async def test_an_early_request_that_differs_is_closed_unread_and_the_runtime_sends_its_own(
    tmp_path: Path, project: Path, server: ProviderServer
) -> None:
    """AGENTS.md changed since the kept run: the early request (the old instructions) goes out, but
    the runtime's own differs, so the early reply is never read — the answer is the reply to the
    runtime's request, which carries the new instructions."""
    home = _home(tmp_path, server)
    server.replies.append(Stream("openai/text.sse"))
    assert (await _run(home, project, "say hello"))[:2] == (0, "Hello, world!\n")
    (project / "AGENTS.md").write_text("Answer in detail, citing files.\n")

    server.arrivals.clear()
    server.requests.clear()
    server.replies.extend([Stream("openai/text.sse"), Stream("openai/answer.sse")])
    code, out, err = await _run(home, project, "What does the README say?")
    assert (code, out) == (0, "The README says the launch code is 7-4-1.\n"), err
    assert server.arrivals[0] == "request"
    early, own = server.requests
    assert "Answer briefly." in json.dumps(early.body)
    assert "citing files" in json.dumps(own.body)
    assert own.body["messages"][-1] == early.body["messages"][-1]  # the same prompt: only the context differs


async def test_allowances_and_a_restored_session_send_nothing_early(
    tmp_path: Path, project: Path, server: ProviderServer
) -> None:
    """A run with ``--allow`` (a mistake in it stops the run before any request) and a run that
    continues a session (its history is not in the kept body) send their first request only when
    the runtime does: after its window probes."""
    home = _home(tmp_path, server)
    server.replies.append(Stream("openai/text.sse"))
    assert (await _run(home, project, "say hello"))[0] == 0
    for args in (["--allow", "read", "say hello"], ["--continue", "say hello"]):
        server.arrivals.clear()
        server.replies.append(Stream("openai/text.sse"))
        code, _, err = await _run(home, project, *args)
        assert code == 0, err
        assert server.arrivals[0] == "probe", args
        assert server.arrivals.count("request") == 1


@pytest.mark.parametrize(
    ("host", "early"),
    [("127.0.0.1", True), ("::1", True), ("10.1.2.3", True), ("localhost", True), ("gpu-box", False)],
)
def test_only_an_address_or_localhost_is_sent_to_early(tmp_path: Path, host: str, early: bool) -> None:
    """A name is looked up with no timeout: the run would wait on DNS here and again in the runtime."""
    kept = {"version": 1, "fingerprint": "f", "path": "/chat/completions", "prompt": "a"}
    (tmp_path / "cache").mkdir(mode=0o700)
    file = tmp_path / "cache" / "first-request.json"
    file.write_text(json.dumps({**kept, "body": encode(_body("a")).decode()}))
    file.chmod(0o600)
    tried: list[str] = []

    class Client:
        port = 9

        def __init__(self) -> None:
            self.host = host

        def request_bytes(self, path: str, data: bytes) -> bytes:
            tried.append(self.host)
            return data

    def refuse(address: object, timeout: float) -> socket.socket:
        raise ConnectionRefusedError  # nothing listens: only whether it was tried matters here

    with pytest.MonkeyPatch.context() as m:
        m.setattr(socket, "create_connection", refuse)
        assert early_request.start(tmp_path, Client(), "f", "b") is False
        early_request.finish()
    assert tried == ([host] if early else [])


@pytest.mark.parametrize("case", ["nan", "key", "newline"])
def test_a_body_or_key_that_cannot_be_written_sends_nothing_and_raises_nothing(
    tmp_path: Path, case: str
) -> None:
    """A kept text holding NaN (JSON allows it to be read, not written), a key latin-1 cannot carry
    or one with a line break, which would split its header: no early request, no error — the
    runtime's own request says what is wrong."""
    body = encode(_body("a")).decode()
    if case == "nan":
        body = body.replace('"temperature":0.7', '"temperature":NaN')
    kept = {"version": 1, "fingerprint": "f", "path": "/chat/completions", "prompt": "a", "body": body}
    (tmp_path / "cache").mkdir(mode=0o700)
    file = tmp_path / "cache" / "first-request.json"
    file.write_text(json.dumps(kept))
    file.chmod(0o600)
    key = {"key": "sk-ключ", "newline": "sk-plain\n"}.get(case, "sk-plain")
    client = ChatHttp("http://127.0.0.1:9/v1", key)
    with pytest.MonkeyPatch.context() as m:
        m.setattr(socket, "create_connection", lambda *a: pytest.fail("nothing is sent"))
        assert early_request.start(tmp_path, client, "f", "b") is False
        early_request.finish()


async def test_a_key_with_a_line_break_is_sent_nowhere_and_said_in_one_line(
    tmp_path: Path, project: Path, server: ProviderServer
) -> None:
    """A key pasted with its newline: no request goes (not the early one, whose header it would have
    split, nor the runtime's), and the run says which variable holds what, in one line, with
    nothing of the key."""
    home = _home(tmp_path, server)
    server.replies.append(Stream("openai/text.sse"))
    assert (await _run(home, project, "say hello"))[0] == 0  # a body is kept: an early request could go
    server.arrivals.clear()
    server.requests.clear()
    code, out, err = await run_shard(home, project, "run", "say hello", env={KEY_ENV: KEY + "\n"})
    said = [line for line in err.decode().splitlines() if "PROVIDER_ERROR" in line]
    assert code == 1, err
    assert server.requests == []
    assert len(said) == 1, err
    assert f"the {KEY_ENV} environment variable holds a line break at its end" in said[0]
    assert KEY not in err.decode() + out.decode()
