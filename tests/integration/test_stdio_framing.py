"""Framing and bad input on the stdio transport (PROTOCOL §2.1, §2.3, §8): every bad line gets an
INVALID_REQUEST answer and the connection stays up."""

from __future__ import annotations

from collections.abc import AsyncIterator

import orjson
import pytest
import pytest_asyncio

from shard.testing import AgentProcess, text_step

# The tests marked SHARED send one bad or odd line and look only at what answers it: they share
# one runtime of the module (``agent``, handed over idle with nothing left to read). A test whose
# subject is a configured limit starts its own with ``start``.
SHARED = pytest.mark.asyncio(loop_scope="module")


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def shared_runtime(start_shared) -> AgentProcess:
    # every prompt gets an answer (loop), and the 5 MiB one fits the context: no test meets a
    # compaction or an overflow another one caused
    models = [{"id": "m", "context_window": 100_000_000}]
    return await start_shared([text_step("ok")], loop=True, record=False, models=models)


@pytest_asyncio.fixture(loop_scope="module")
async def agent(shared_runtime: AgentProcess) -> AsyncIterator[AgentProcess]:
    yield await shared_runtime.hand_over()


async def _still_up(agent) -> None:
    resp, _ = await agent.request({"type": "list_modes", "id": "alive"})
    assert resp["success"] is True


async def _bad(agent, raw: bytes) -> dict:
    await agent.send_raw(raw)
    msg = await agent.next()
    assert msg["type"] == "response", msg
    assert msg["success"] is False
    assert msg["error"]["code"] == "INVALID_REQUEST"
    assert isinstance(msg["error"]["message"], str)
    assert msg["error"]["message"]
    return msg


@SHARED
async def test_malformed_json_line(agent):
    """Bad JSON is answered with INVALID_REQUEST; the connection stays up.

    Covers: R8.5, R8.6, R8.1, R8.3
    """
    msg = await _bad(agent, b'{"type": "prompt", "message": \n')
    assert "id" not in msg
    assert set(msg["error"]) == {"code", "message"}
    await _still_up(agent)


@SHARED
@pytest.mark.parametrize("raw", [b"[1, 2]\n", b'"prompt"\n', b"42\n", b"null\n"])
async def test_non_object_line(agent, raw):
    """A JSON value that is not an object is INVALID_REQUEST.

    Covers: R5.0.2, R8.5
    """
    await _bad(agent, raw)
    await _still_up(agent)


@SHARED
async def test_unknown_type_echoes_id_and_command(agent):
    """An unknown type fails validation; the answer carries the id and the type it could read.

    Covers: R5.0.6, R5.1.2, R9.3.2, R8.7
    """
    msg = await _bad(agent, b'{"type": "subscribe", "id": "s1"}\n')
    assert msg["id"] == "s1"
    assert msg["command"] == "subscribe"
    assert "subscribe" in msg["error"]["message"]
    await _still_up(agent)


@SHARED
async def test_wrong_shape_names_the_field(agent):
    """A command with a wrong field is INVALID_REQUEST naming that field.

    Covers: R8.7, R9.2.1
    """
    msg = await _bad(agent, b'{"type": "prompt", "id": "p1", "message": 5}\n')
    assert msg["id"] == "p1"
    assert msg["command"] == "prompt"
    assert "message" in msg["error"]["message"]
    msg = await _bad(agent, b'{"type": "set_mode", "id": "p2"}\n')
    assert "mode" in msg["error"]["message"]
    await _still_up(agent)


@SHARED
async def test_orchestrator_command_on_direct_connection(agent):
    """A direct connection carries only per-agent messages: agent.list is refused there.

    Covers: R5.2.7, R10.1.1
    """
    msg = await _bad(agent, b'{"type": "agent.list", "id": "o1"}\n')
    assert msg["id"] == "o1"
    assert msg["command"] == "agent.list"
    await _still_up(agent)


async def test_over_cap_line_is_answered_and_dropped(start):
    """A line above the input cap (limits.max_input_bytes) is answered with INVALID_REQUEST carrying
    the id and type read from its start; the next line is handled normally.

    Covers: R8.5, R5.1.2
    """
    agent = await start([text_step("hi")], extra_toml="\n[limits]\nmax_input_bytes = 4096\n")
    await agent.handshake()
    big = orjson.dumps({"type": "prompt", "id": "huge", "message": "x" * 20000}) + b"\n"
    msg = await _bad(agent, big)
    assert msg["id"] == "huge"
    assert msg["command"] == "prompt"
    assert "cap" in msg["error"]["message"]
    await _still_up(agent)
    # nothing of the dropped prompt was acted on
    assert not any(m["type"] == "turn_start" for m in agent.seen)


@SHARED
async def test_default_cap_is_64_mib(agent):
    """With no limits configured, a 64 MiB + 1 byte line is over the cap and is refused.

    Covers: R8.5
    """
    payload = b'{"type":"prompt","id":"big","message":"' + b"y" * (64 * 1024 * 1024) + b'"}\n'
    msg = await _bad(agent, payload)
    assert msg["id"] == "big"
    await _still_up(agent)


@SHARED
async def test_crlf_input_is_accepted(agent):
    """A CRLF-terminated command is read with its single trailing CR stripped.

    Covers: R2.1.4
    """
    await agent.send_raw(b'{"type": "list_modes", "id": "crlf"}\r\n')
    msg = await agent.next()
    assert msg["type"] == "response"
    assert msg["id"] == "crlf"
    assert msg["success"] is True


@SHARED
async def test_line_separators_inside_strings_do_not_split(agent):
    """U+2028/U+2029 inside a JSON string are part of the message, not record ends; the split is
    on LF only, even when the bytes arrive in several writes.

    Covers: R2.1.2, R2.1.3, R2.3.1
    """
    text = "a\u2028b\u2029c — ünïcode ✓"
    line = orjson.dumps({"type": "prompt", "id": "u", "message": text}) + b"\n"
    for i in range(0, len(line), 3):  # a command split across many writes
        await agent.send_raw(line[i : i + 3])
    read = await agent.until(lambda m: m["type"] == "message_complete")
    user = read[-1]["message"]
    assert user["role"] == "user"
    assert user["content"][0]["text"] == text
    responses = [m for m in read if m["type"] == "response"]
    assert len(responses) == 1
    assert responses[0]["success"] is True


@SHARED
async def test_multi_megabyte_message_is_delivered_intact(agent):
    """There is no hard size limit below the cap: a 5 MB prompt goes through whole, and its
    message_complete comes back whole.

    Covers: R2.3.2
    """
    text = ("0123456789abcdef" * 65536) * 5  # 5 MiB
    await agent.send({"type": "prompt", "id": "big", "message": text})
    read = await agent.until(lambda m: m["type"] == "message_complete")
    assert read[-1]["message"]["content"][0]["text"] == text


@SHARED
async def test_blank_lines_are_ignored(agent):
    """Empty lines between commands carry nothing and get no answer."""
    await agent.send_raw(b"\n\r\n   \n")
    resp, before = await agent.request({"type": "list_modes", "id": "after-blank"})
    assert before == []
    assert resp["success"] is True
