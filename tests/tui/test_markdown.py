"""Replies render as markdown (issue 26 item 9): bold, lists, headings, inline code and highlighted
code blocks without their markers, block by block so a streaming reply re-renders only its last
block; and a streamed reply from a real daemon shows rendered on screen."""

from __future__ import annotations

import io
from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import Console
from rich.style import Style
from rich.text import Text
from tui_helpers import SIZE, type_in, until

from shard.testing.home import text_step
from shard.tui import markdown, render
from shard.tui.view import Entry

# Textual and shard.tui's widgets are imported by the tests that use them, not here: see tui_helpers.py
if TYPE_CHECKING:
    from shard.tui.app import ShardApp

REPLY = """## The fix

The **parser** keeps a `\\r` before each newline:

1. strip it in `lines()`
2. add a CRLF case to the tests

```python
def lines(data: bytes) -> list[bytes]:

    return data.replace(b"\\r\\n", b"\\n").split(b"\\n")
```

- done"""


def shown(text: str, width: int = 80, live: bool = False) -> str:
    return render.plain(render.entry(Entry("m1:0", "assistant", text, live=live)), width).plain


def test_a_reply_shows_without_its_markers():
    """Bold, a heading, lists, inline code and a fenced block keep their words and lose their
    markers; the reply is introduced as the agent's, its lines under a hanging indent.

    Covers: R9.4.1
    """
    text = shown(REPLY)
    assert text.startswith("agent The fix\n")
    for marker in ("**", "```", "## ", "`"):
        assert marker not in text
    for words in ("The parser keeps a \\r before each newline:", "1 strip it in lines()", "• done"):
        assert words in " ".join(text.split())  # wrapped or not, the words are there in order
    assert "def lines(data: bytes) -> list[bytes]:" in text
    assert all(line.startswith("      ") for line in text.splitlines()[1:] if line)


def test_code_is_highlighted_and_bold_is_bold():
    """The code block's keywords are coloured (the code theme), the bold word is bold."""
    console = Console(width=80, file=io.StringIO(), color_system="truecolor", force_terminal=True)
    segments = [s for line in console.render_lines(markdown.Reply(Text(""), REPLY)) for s in line]
    styles = {s.text.strip(): s.style or Style() for s in segments if s.text.strip() in ("def", "parser")}
    assert styles["parser"].bold
    assert styles["def"].color is not None


def test_blocks_split_at_blank_lines_outside_code_fences():
    """A blank line inside a fence stays in its block; ~~~ and longer fences close only on their
    own kind."""
    assert markdown.blocks("a\nb\n\n\nc") == ["a\nb", "c"]
    assert markdown.blocks("x\n\n```py\none\n\ntwo\n```\n\ny") == ["x", "```py\none\n\ntwo\n```", "y"]
    assert markdown.blocks("~~~~\n```\n\n~~~\n\n~~~~\nz") == ["~~~~\n```\n\n~~~\n\n~~~~\nz"]
    assert markdown.blocks("```\nopen\n\nstill code") == ["```\nopen\n\nstill code"]


def test_a_streaming_reply_renders_only_its_last_block_again():
    """Each delta re-renders the block being written; the finished blocks above come from the
    cache (a long reply would otherwise cost a full markdown render per frame)."""
    console = Console(width=70, file=io.StringIO(), color_system="truecolor", force_terminal=True)
    head = "\n\n".join(f"Paragraph {n} with **bold** words." for n in range(30))
    console.render_lines(markdown.Reply(Text("agent "), head + "\n\nThe last one"))
    before = markdown.block_cache_info()
    console.render_lines(markdown.Reply(Text("agent "), head + "\n\nThe last one grows"))
    after = markdown.block_cache_info()
    assert after.misses - before.misses == 1
    assert after.hits - before.hits == 30


def test_a_live_reply_keeps_its_cursor_and_an_open_fence_shows_as_code():
    """Mid-stream, an unclosed fence already renders as code (no backticks), the cursor at its end."""
    text = shown("Here:\n\n```python\nx = 1", live=True)
    assert "```" not in text
    assert "x = 1▌" in text


async def test_a_streamed_reply_shows_as_markdown(daemon_factory, project: Path, client_factory):
    """A real daemon streams the reply by deltas; the conversation shows it rendered.

    Covers: R9.4.1, R6.4.4
    """
    from shard.tui.app import ShardApp

    daemon = await daemon_factory([text_step(REPLY, chunk=6)])
    client = await client_factory(daemon.home)
    agent_id = await client.create_agent_id(project)
    app = ShardApp(client, agent_id=agent_id)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.views[agent_id].syncs == 1)
        await type_in(pilot, "fix it", "enter")
        await until(pilot, lambda: app.views[agent_id].status == "idle" and "• done" in _conversation(app))
        text = _conversation(app)
        assert "agent The fix" in text
        assert "**" not in text
        assert "```" not in text


def _conversation(app: ShardApp) -> str:
    from shard.tui.conversation import Conversation

    return "\n".join(app.query_one(Conversation).plain())
