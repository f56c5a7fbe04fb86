"""The context budget (``compaction/budget.py``): every compaction threshold follows the model's
window and what the system prompt and tool schemas already take (issue 27 item 1).

An 8K model never compacted: ``keep_recent_tokens`` (20,000) was never bounded by the window, so the
cut found nothing to summarize and the next request overflowed. These tests pin the formula at 8K,
32K and 200K, a fixed part close to the window, the one line that says a window is too small, and
the runtime's use of it: a session on an 8K window compacts and goes on; one on a window too small
is told once.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from shard.agent.boot import AgentOptions, prepare
from shard.agent.compaction.budget import MIN_ROOM, fixed_tokens, plan, too_small
from shard.agent.compaction.compactor import choose_cut, transcript
from shard.agent.compaction.tiers import ANTHROPIC_DEFAULT_REPLY
from shard.agent.config.settings import CompactionConfig
from shard.agent.modes import ModeController
from shard.agent.prompting.system_prompt import system_prompt
from shard.agent.providers.anthropic import DEFAULT_MAX_TOKENS
from shard.agent.runtime import Runtime
from shard.agent.tools.recall import RecallTool
from shard.agent.tools.registry import build_tools
from shard.agent.tools.subagents import subagent_tools
from shard.agent.transcript import estimate_tokens
from shard.protocol.content import Message, TextBlock, TextContent, ToolCallBlock, ToolResultBlock
from shard.protocol.events import EventBase
from shard.testing import text_step, tool_step, write_scripted_home

DEFAULTS = CompactionConfig()


def test_an_8k_window():
    """8,192 tokens, 2,200 of them fixed, a server that picks its own output limit: a quarter of
    the window for the reply, and a keep that leaves room to grow — not the config's 20,000."""
    b = plan(8192, 2200, None, DEFAULTS)
    assert (b.reply, b.ceiling, b.room, b.trigger) == (2048, 6144, 3944, 5355)
    assert b.keep(DEFAULTS.keep_recent_tokens) == 1183
    assert b.summary == 591
    assert b.fits
    after = b.fixed + b.keep(DEFAULTS.keep_recent_tokens) + b.summary
    assert after < b.trigger - 1000, "a compaction leaves room for more than one more exchange"


def test_a_32k_window():
    b = plan(32768, 2200, None, DEFAULTS)
    assert (b.reply, b.ceiling, b.room, b.trigger) == (4096, 28672, 26472, 23377)
    assert b.keep(DEFAULTS.keep_recent_tokens) == 7941
    assert b.summary == 3970


def test_a_200k_window_keeps_the_config_bounds():
    """A cloud window: the config's keep_recent_tokens and the summary's cap are the bounds; the
    reply's share is the request's own limit, at most a quarter of the window."""
    b = plan(200_000, 2200, 64_000, DEFAULTS)
    assert (b.reply, b.ceiling, b.trigger) == (50_000, 150_000, 120_440)
    assert b.keep(DEFAULTS.keep_recent_tokens) == 20_000
    assert b.summary == 8192
    b = plan(200_000, 2200, ANTHROPIC_DEFAULT_REPLY, DEFAULTS)
    assert (b.reply, b.trigger) == (16_384, 147_332)


def test_config_values_are_bounds_and_the_fraction():
    b = plan(32768, 2200, 1000, CompactionConfig(threshold=0.5, keep_recent_tokens=500))
    assert b.reply == 1000, "never more than the request asks"
    assert b.keep(500) == 500, "a smaller keep_recent_tokens wins"
    assert b.trigger == 2200 + int(0.5 * b.room)
    assert plan(3000, 500, None, DEFAULTS).reply == 1024, "nor less than 1,024 when the limit allows"


def test_a_fixed_part_close_to_the_window():
    """Subagent tools (~3,500 tokens) on a 4K window leave no room: said, with the figures."""
    b = plan(4096, 3500, None, DEFAULTS)
    assert (b.reply, b.room) == (1024, -428)
    assert not b.fits
    line = too_small(b, "local/qwen", "from the server", 14)
    assert line == (
        "the context window of local/qwen (4,096 tokens, from the server) is too small: the "
        "system prompt and 14 tool schemas take 3,500, a reply needs 1,024 and the conversation at "
        "least 512 (5,036 in all). Give the server a larger context (llama-server -c, "
        "OLLAMA_CONTEXT_LENGTH, vLLM --max-model-len) and set context_window in config.toml, or offer "
        "fewer tools (--tools); automatic compaction is off until then"
    )
    assert plan(8192, 3500, None, DEFAULTS).fits
    edge = plan(8192, 8192 - 2048 - MIN_ROOM, None, DEFAULTS)
    assert edge.fits
    assert edge.room == MIN_ROOM
    assert not plan(8192, 8192 - 2048 - MIN_ROOM + 1, None, DEFAULTS).fits


def test_the_anthropic_default_is_the_adapters():
    assert ANTHROPIC_DEFAULT_REPLY == DEFAULT_MAX_TOKENS


def test_the_fixed_part_of_the_default_tools_is_measured():
    """The system prompt and the tool schemas, as every request carries them: ~2,000 tokens for the
    default tools (2,200 with a project's environment block), ~3,300 with the subagent tools."""
    import orjson

    def fixed(tools: dict[str, Any]) -> int:
        tools.setdefault("recall", RecallTool(lambda _s: []))
        system = system_prompt(Path("/home/me/project"), ModeController(active="build").active, list(tools))
        schemas = (
            orjson.dumps({"name": t.name, "description": t.description, "parameters": t.parameters}).decode()
            for t in (tool.spec() for tool in tools.values())
        )
        return fixed_tokens(system, schemas)

    assert 1800 <= fixed(build_tools()) <= 2400
    assert 3000 <= fixed(build_tools(hosted=subagent_tools(None, {}))) <= 3800  # type: ignore[arg-type]


def _exchange(i: int, result_chars: int) -> list[Message]:
    call = ToolCallBlock(id=f"call-{i}", name="read", args={"path": f"f{i}.txt"})
    return [
        Message(id=f"u{i}", role="user", content=[TextBlock(text=f"read f{i}.txt")]),
        Message(id=f"a{i}", role="assistant", content=[call]),
        Message(
            id=f"r{i}",
            role="user",
            content=[ToolResultBlock(tool_call_id=f"call-{i}", content=TextContent(text="x" * result_chars))],
        ),
        Message(id=f"b{i}", role="assistant", content=[TextBlock(text=f"f{i} says x")]),
    ]


def test_the_cut_that_20000_never_found():
    """Three exchanges of ~1,500 tokens: the window's keep finds a cut, the config's 20,000 does not
    (the issue's "compaction never ran")."""
    messages = [m for i in range(3) for m in _exchange(i, 6000)]
    tokens = [estimate_tokens(m) for m in messages]
    assert choose_cut(messages, tokens, DEFAULTS.keep_recent_tokens, has_summary=False) is None
    keep = plan(8192, 2200, None, DEFAULTS).keep(DEFAULTS.keep_recent_tokens)
    cut = choose_cut(messages, tokens, keep, has_summary=False)
    assert cut is not None
    assert messages[cut.first_kept].id == "a2", "the last read and its answer, call and result together"


def test_a_large_result_once_answered_goes_into_the_summary():
    """One read of ~5,000 tokens in an 8K window: while it waits for its answer the call and result
    are kept together; once answered, both go into the summary rather than stay for good."""
    messages = [*_exchange(0, 600), *_exchange(1, 20_000)]
    tokens = [estimate_tokens(m) for m in messages]
    keep = plan(8192, 2200, None, DEFAULTS).keep(DEFAULTS.keep_recent_tokens)
    answered = choose_cut(messages, tokens, keep, has_summary=False)
    assert answered is not None
    assert messages[answered.first_kept].id == "b1"
    waiting = choose_cut(messages[:-1], tokens[:-1], keep, has_summary=False)
    assert waiting is not None
    assert messages[waiting.first_kept].id == "a1"


def test_the_summarizer_transcript_fits_the_room_left():
    """A span larger than the window is shortened for the summary request: each block cut, then
    the oldest lines left out, the newest kept."""
    messages = [m for i in range(12) for m in _exchange(i, 3000)]
    full = transcript(messages)
    short = transcript(messages, limit=2000)
    assert len(full) > 20_000
    assert len(short) <= 2000
    assert short.startswith("[… ")
    assert "earlier lines left out" in short.splitlines()[0]
    assert short.splitlines()[-1] == "[assistant] f11 says x"
    assert transcript(messages[:4], limit=100_000) == transcript(messages[:4])


# --- the runtime --------------------------------------------------------------------------------


class _Events:
    def __init__(self) -> None:
        self.seen: list[dict[str, Any]] = []

    def sink(self, event: EventBase) -> None:
        self.seen.append(event.to_wire())

    def of(self, kind: str) -> list[dict[str, Any]]:
        return [e for e in self.seen if e["type"] == kind]


def _runtime(tmp_path: Path, steps: list[dict[str, Any]], window: int) -> tuple[Runtime, _Events]:
    cwd = tmp_path / "project"
    cwd.mkdir()
    for i in range(6):
        text = "".join(f"line {j:04d} of file {i}, some words here\n" for j in range(130))
        (cwd / f"f{i}.txt").write_text(text)
    home = write_scripted_home(tmp_path / "home", steps, models=[{"id": "m", "context_window": window}])
    events = _Events()
    runtime = Runtime.from_prepared(prepare(AgentOptions(home=str(home), cwd=str(cwd))), sink=events.sink)
    return runtime, events


async def _prompt(runtime: Runtime, text: str) -> None:
    await runtime.handle(f'{{"type":"prompt","message":"{text}"}}'.encode())
    await runtime.wait_idle()


async def test_a_session_on_an_8k_window_compacts_and_goes_on(tmp_path):
    """Covers: R9.4.20, R9.4.19

    Four reads of ~1,500 tokens on an 8,192-token window with the default [compaction] settings:
    compaction runs (it never did: keep_recent_tokens 20,000 left nothing to summarize) and every
    turn completes; no request the model got was over the window's ceiling by Shard's own count."""
    steps = []
    for i in range(4):
        steps += [tool_step("read", {"path": f"f{i}.txt"}), text_step(f"f{i} read")]
    runtime, events = _runtime(tmp_path, steps, 8192)
    for i in range(4):
        await _prompt(runtime, f"read f{i}.txt")
    compactions = events.of("compaction")
    assert compactions, "compaction ran"
    for c in compactions:
        assert c["tokens_after"] < c["tokens_before"] - 1000
    assert runtime.failed_turns == 0
    finals = [e["message"] for e in events.of("message_complete") if e["message"]["role"] == "assistant"]
    assert finals[-1]["content"][0]["text"] == "f3 read", "the conversation went on to the end"
    assert all(u["context_tokens"] < 8192 for u in events.of("usage"))
    assert {u["context_window"] for u in events.of("usage")} == {8192}
    assert {u["context_window_source"] for u in events.of("usage")} == {"config"}


@pytest.mark.parametrize("window", [3000])
async def test_a_window_too_small_is_said_once_with_the_figures(tmp_path, window):
    """The fixed part does not fit: one non-fatal PROVIDER_ERROR at the start of the first turn,
    with the figures; none at the second; the turns still run and nothing compacts."""
    runtime, events = _runtime(tmp_path, [text_step("one"), text_step("two")], window)
    await _prompt(runtime, "hi")
    await _prompt(runtime, "again")
    errors = events.of("error")
    assert len(errors) == 1, errors
    error = errors[0]
    assert error["code"] == "PROVIDER_ERROR"
    assert error["fatal"] is False
    assert "the context window of test/m (3,000 tokens, from config.toml) is too small" in error["message"]
    assert "tool schemas take" in error["message"]
    first_turn = events.seen.index(events.of("turn_start")[0])
    assert first_turn < events.seen.index(error) < events.seen.index(events.of("turn_end")[0])
    assert not events.of("compaction")
    assert runtime.failed_turns == 0
