"""ScriptedProvider: plays a JSON script step by step, offline and deterministic."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import orjson
import pytest

from shard.agent.catalog import DEMO_SCRIPT
from shard.agent.providers.base import (
    ProviderError,
    ProviderEvent,
    ProviderRequest,
    Stop,
    TextDelta,
    ThinkingDelta,
    ToolCallArgs,
    ToolCallStart,
    ToolSpec,
    UsageReport,
)
from shard.agent.providers.scripted import ScriptedProvider, ScriptError, load_script
from shard.protocol.content import Message, TextBlock, ToolCallBlock
from shard.protocol.errors import ErrorCode


def write_script(tmp_path: Path, script: Any, name: str = "script.json") -> Path:
    path = tmp_path / name
    path.write_bytes(orjson.dumps(script))
    return path


def provider(tmp_path: Path, script: dict[str, Any], record: Path | None = None) -> ScriptedProvider:
    return ScriptedProvider("scripted", write_script(tmp_path, script), record_path=record)


def user(text: str, n: int = 0) -> Message:
    return Message(id=f"msg-u{n}", role="user", content=[TextBlock(text=text)])


def assistant(text: str, n: int = 0) -> Message:
    return Message(id=f"msg-a{n}", role="assistant", content=[TextBlock(text=text)])


def request(*messages: Message, **kw: Any) -> ProviderRequest:
    return ProviderRequest(
        model="demo", system=kw.pop("system", "You are a test."), messages=list(messages), **kw
    )


async def play(p: ScriptedProvider, req: ProviderRequest) -> list[ProviderEvent]:
    return [e async for e in p.stream(req)]


def text_of(events: list[ProviderEvent]) -> str:
    return "".join(e.text for e in events if isinstance(e, TextDelta))


def three_steps(**extra: Any) -> dict[str, Any]:
    return {"steps": [{"blocks": [{"type": "text", "text": w}]} for w in ("zero", "one", "two")], **extra}


async def test_the_step_is_the_number_of_assistant_messages(tmp_path: Path) -> None:
    """Checks step selection: the step index is the count of assistant messages in the request, so
    the same history always gets the same answer (users' messages do not count)."""
    p = provider(tmp_path, three_steps())
    assert text_of(await play(p, request(user("hi")))) == "zero"
    assert text_of(await play(p, request(user("a", 0), user("b", 1), user("c", 2)))) == "zero"
    assert text_of(await play(p, request(user("a"), assistant("x"), user("b", 1)))) == "one"
    history = [user("a", 0), assistant("x", 0), user("b", 1), assistant("y", 1), user("c", 2)]
    assert text_of(await play(p, request(*history))) == "two"
    assert text_of(await play(p, request(*history))) == "two"


async def test_past_the_last_step_fails_without_loop(tmp_path: Path) -> None:
    """Checks that a call beyond the script is a non-retryable PROVIDER_ERROR naming the step."""
    p = provider(tmp_path, three_steps())
    history = [m for i in range(3) for m in (user("u", i), assistant("a", i))]
    with pytest.raises(ProviderError) as info:
        await play(p, request(*history))
    assert info.value.code is ErrorCode.PROVIDER_ERROR
    assert "has no step 3 (it has 3)" in info.value.message
    assert info.value.retryable is False


async def test_loop_wraps_around(tmp_path: Path) -> None:
    """Checks that with loop: true the step index wraps modulo the number of steps."""
    p = provider(tmp_path, three_steps(loop=True))
    for n_assistant, expected in [(3, "zero"), (4, "one"), (8, "two")]:
        history = [m for i in range(n_assistant) for m in (user("u", i), assistant("a", i))]
        assert text_of(await play(p, request(*history, user("now", 99)))) == expected


async def test_loop_with_no_steps_still_fails(tmp_path: Path) -> None:
    """Checks that an empty looping script fails cleanly instead of dividing by zero."""
    p = provider(tmp_path, {"loop": True, "steps": []})
    with pytest.raises(ProviderError, match="has no step 0"):
        await play(p, request(user("hi")))


async def test_text_and_thinking_are_streamed_in_chunks(tmp_path: Path) -> None:
    """Checks chunking: text and thinking arrive `chunk` characters at a time, in block order, then
    one usage report and one final stop."""
    p = provider(
        tmp_path,
        {
            "steps": [
                {
                    "chunk": 4,
                    "blocks": [
                        {"type": "thinking", "text": "ponder"},
                        {"type": "text", "text": "abcdefghij"},
                    ],
                }
            ]
        },
    )
    events = await play(p, request(user("go")))
    assert events[:5] == [
        ThinkingDelta("pond"),
        ThinkingDelta("er"),
        TextDelta("abcd"),
        TextDelta("efgh"),
        TextDelta("ij"),
    ]
    assert isinstance(events[5], UsageReport)
    assert events[6:] == [Stop("end_turn")]


async def test_default_chunk_is_twelve_characters(tmp_path: Path) -> None:
    """Checks the default chunk size of 12 characters."""
    p = provider(tmp_path, {"steps": [{"blocks": [{"type": "text", "text": "x" * 30}]}]})
    deltas = [e for e in await play(p, request(user("go"))) if isinstance(e, TextDelta)]
    assert [len(d.text) for d in deltas] == [12, 12, 6]


async def test_a_stamped_block_starts_each_piece_with_the_monotonic_clock(tmp_path: Path) -> None:
    """Checks ``stamp``: each piece of a stamped text block is ``<monotonic ns>|<piece>``, the clock
    read as the piece is handed over (between the call's start and its end), never going back."""
    block = {"type": "text", "text": "abcdefg", "stamp": True}
    p = provider(tmp_path, {"steps": [{"chunk": 3, "blocks": [block]}]})
    before = time.monotonic_ns()
    deltas = [e for e in await play(p, request(user("go"))) if isinstance(e, TextDelta)]
    after = time.monotonic_ns()
    stamps = [int(d.text.split("|", 1)[0]) for d in deltas]
    assert [d.text.split("|", 1)[1] for d in deltas] == ["abc", "def", "g"]
    assert before <= stamps[0] <= stamps[1] <= stamps[2] <= after


async def test_tool_calls_stream_their_args_as_json_text(tmp_path: Path) -> None:
    """Checks a tool_call block: a start with the given id and name, then the JSON arguments in
    chunks that concatenate to the args, and stop reason tool_use."""
    args = {"path": "src/main.py", "offset": 10}
    p = provider(
        tmp_path,
        {
            "steps": [
                {
                    "chunk": 5,
                    "blocks": [{"type": "tool_call", "id": "tc-fixed", "name": "read", "args": args}],
                }
            ]
        },
    )
    events = await play(p, request(user("go")))
    assert events[0] == ToolCallStart(id="tc-fixed", name="read")
    fragments = [e.fragment for e in events if isinstance(e, ToolCallArgs)]
    assert all(len(f) <= 5 for f in fragments)
    assert orjson.loads("".join(fragments)) == args
    assert events[-1] == Stop("tool_use")


async def test_tool_call_without_id_gets_a_fresh_tc_id(tmp_path: Path) -> None:
    """Checks that a tool call without an id gets a generated "tc-" id, and empty args are {}."""
    p = provider(tmp_path, {"steps": [{"blocks": [{"type": "tool_call", "name": "ls"}]}]})
    events = await play(p, request(user("go")))
    start = events[0]
    assert isinstance(start, ToolCallStart)
    assert start.id.startswith("tc-")
    assert "".join(e.fragment for e in events if isinstance(e, ToolCallArgs)) == "{}"


async def test_explicit_stop_reason_wins(tmp_path: Path) -> None:
    """Checks that a step's "stop" overrides the inferred stop reason."""
    p = provider(tmp_path, {"steps": [{"stop": "max_tokens", "blocks": [{"type": "text", "text": "cut"}]}]})
    assert (await play(p, request(user("go"))))[-1] == Stop("max_tokens")


async def test_given_usage_is_reported(tmp_path: Path) -> None:
    """Checks that a step's usage is reported as given, with context_tokens defaulting to
    input + output."""
    p = provider(
        tmp_path,
        {
            "steps": [
                {"usage": {"input": 120, "output": 30}, "blocks": []},
                {"usage": {"input": 5, "output": 1, "cache_read": 4, "context_tokens": 999}, "blocks": []},
            ]
        },
    )
    first = await play(p, request(user("go")))
    assert first == [UsageReport(input=120, output=30, context_tokens=150), Stop("end_turn")]
    second = await play(p, request(user("go"), assistant("x")))
    assert second[0] == UsageReport(input=5, output=1, cache_read=4, context_tokens=999)


async def test_usage_defaults_to_an_estimate_of_four_characters_a_token(tmp_path: Path) -> None:
    """Checks the default usage: input from the request's size (system + message JSON) / 4, output
    from the streamed characters / 4, at least 1."""
    p = provider(tmp_path, {"steps": [{"blocks": [{"type": "text", "text": "y" * 40}]}, {"blocks": []}]})
    req = request(user("hello there"), system="S" * 100)
    usage = next(e for e in await play(p, req) if isinstance(e, UsageReport))
    expected_in = (100 + len(req.messages[0].to_json())) // 4
    assert usage == UsageReport(input=expected_in, output=10, context_tokens=expected_in + 10)

    req2 = request(user("a"), assistant("b"))
    usage2 = next(e for e in await play(p, req2) if isinstance(e, UsageReport))
    assert usage2.output == 1


async def test_error_fails_the_call_after_the_blocks(tmp_path: Path) -> None:
    """Checks "error": the blocks are streamed first, then the call raises a non-retryable
    PROVIDER_ERROR carrying the scripted message, with no usage or stop."""
    p = provider(tmp_path, {"steps": [{"error": "overloaded", "blocks": [{"type": "text", "text": "par"}]}]})
    stream = p.stream(request(user("go")))
    assert await anext(stream) == TextDelta("par")
    with pytest.raises(ProviderError) as info:
        await anext(stream)
    assert info.value.message == "scripted provider: overloaded"
    assert info.value.retryable is False


async def test_stall_keeps_the_stream_open_until_cancelled(tmp_path: Path) -> None:
    """Checks "stall": after the blocks the stream neither ends nor errors while the loop runs;
    cancelling the consumer ends it with CancelledError."""
    p = provider(tmp_path, {"steps": [{"stall": True, "blocks": [{"type": "text", "text": "wait"}]}]})
    stream = p.stream(request(user("go")))
    assert await anext(stream) == TextDelta("wait")
    pending = asyncio.ensure_future(anext(stream))
    for _ in range(20):
        await asyncio.sleep(0)  # let the loop run the generator as far as it will go
    assert not pending.done()
    pending.cancel()
    with pytest.raises(asyncio.CancelledError):
        await pending
    await stream.aclose()


async def test_pause_with_zero_ms_emits_nothing(tmp_path: Path) -> None:
    """Checks that a pause block yields no event of its own."""
    p = provider(
        tmp_path,
        {
            "steps": [
                {
                    "blocks": [
                        {"type": "text", "text": "a"},
                        {"type": "pause", "ms": 0},
                        {"type": "text", "text": "b"},
                    ]
                }
            ]
        },
    )
    events = await play(p, request(user("go")))
    assert events[:2] == [TextDelta("a"), TextDelta("b")]
    assert len(events) == 4


async def test_every_request_is_recorded_as_one_json_line(tmp_path: Path) -> None:
    """Checks the record file: one JSON line per call with model, purpose, reasoning, system, tool
    names and the messages in wire form."""
    record = tmp_path / "requests.jsonl"
    p = provider(tmp_path, three_steps(), record=record)
    tools = [
        ToolSpec(name="read", description="r", parameters={}),
        ToolSpec(name="ls", description="l", parameters={}),
    ]
    await play(p, request(user("one"), tools=tools, reasoning="high"))
    msgs = [user("one"), assistant("zero"), user("two", 1)]
    await play(p, request(*msgs))

    lines = record.read_bytes().splitlines()
    assert len(lines) == 2
    first, second = (orjson.loads(line) for line in lines)
    assert first == {
        "model": "demo",
        "purpose": "turn",
        "reasoning": "high",
        "system": "You are a test.",
        "tools": ["read", "ls"],
        "messages": [user("one").to_wire()],
    }
    assert second["messages"] == [m.to_wire() for m in msgs]
    assert second["tools"] == []


async def test_summary_requests_get_the_scripted_summary(tmp_path: Path) -> None:
    """Checks purpose "summary": the script's fixed summary text, not a step (no step consumed)."""
    p = provider(tmp_path, three_steps(summary="They said hi."))
    events = await play(p, request(user("hi"), purpose="summary"))
    assert text_of(events) == "They said hi."
    assert events[-1] == Stop("end_turn")


async def test_summary_without_fixed_text_digests_the_messages(tmp_path: Path) -> None:
    """Checks the default summary: one line per block, role and a snippet (text or tool name)."""
    p = provider(tmp_path, three_steps())
    call = Message(id="msg-a1", role="assistant", content=[ToolCallBlock(id="tc-1", name="ls", args={})])
    events = await play(p, request(user("hello"), call, purpose="summary"))
    assert text_of(events) == "Summary of the earlier conversation:\n- user: hello\n- assistant: ls"


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "does not exist"),
        (b"{not json", "cannot be read"),
        (b"[]", "must be an object with a 'steps' array"),
        (b'{"steps": {}}', "must be an object with a 'steps' array"),
        (b'{"steps": [3]}', r"steps\[0\] must be an object with a 'blocks' array"),
        (b'{"steps": [{"blocks": "x"}]}', r"steps\[0\] must be an object with a 'blocks' array"),
        (
            b'{"steps": [{"blocks": []}, {"blocks": [{"type": "text"}, {"type": "image"}]}]}',
            r"steps\[1\]\.blocks\[1\]\.type must be one of pause, text, thinking, tool_call",
        ),
        (b'{"steps": [{"blocks": [7]}]}', r"steps\[0\]\.blocks\[0\]\.type must be one of"),
        (b'{"steps": [{"blocks": [{"type": "tool_call"}]}]}', r"steps\[0\]\.blocks\[0\] needs a tool 'name'"),
    ],
)
def test_load_script_names_what_is_wrong(tmp_path: Path, content: bytes | None, message: str) -> None:
    """Checks load_script validation: each malformed script raises ScriptError naming the place."""
    path = tmp_path / "bad.json"
    if content is not None:
        path.write_bytes(content)
    with pytest.raises(ScriptError, match=message):
        load_script(path)
    with pytest.raises(ScriptError):
        ScriptedProvider("scripted", path)


async def test_a_step_without_blocks_is_an_empty_answer(tmp_path: Path) -> None:
    """Checks that a step may omit "blocks": it loads and plays as usage then end_turn."""
    p = provider(tmp_path, {"steps": [{}]})
    events = await play(p, request(user("go")))
    assert [type(e) for e in events] == [UsageReport, Stop]
    assert events[-1] == Stop("end_turn")


async def test_demo_script_lists_the_folder_then_explains(tmp_path: Path) -> None:
    """Checks the built-in demo script: step 0 says it is not an LLM and calls ls on ".", step 1
    explains configuration, and it loops."""
    p = ScriptedProvider("scripted", DEMO_SCRIPT)
    first = await play(p, request(user("hi")))
    assert "not an LLM" in text_of(first)
    start = next(e for e in first if isinstance(e, ToolCallStart))
    assert start.name == "ls"
    assert orjson.loads("".join(e.fragment for e in first if isinstance(e, ToolCallArgs))) == {"path": "."}
    assert first[-1] == Stop("tool_use")
    second = await play(p, request(user("hi"), assistant("x")))
    assert "config.toml" in text_of(second)
    assert second[-1] == Stop("end_turn")
    third = await play(p, request(user("hi"), assistant("x"), user("again", 1), assistant("y", 1)))
    assert text_of(third) == text_of(first)
