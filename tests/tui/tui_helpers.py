"""Helpers for the terminal client's tests: run the app with Textual's pilot on a real client, wait
for what the screen shows (on the app's ``updated`` event, never a sleep), and export the screen as
stable text for the snapshots.

Textual and the app are imported where they are used, not at the top: every test module of this
folder imports these helpers, every xdist worker imports every test module to collect the suite,
and Textual with shard.tui.app is ~0.3 CPU-s that only the worker running the app's tests needs."""

from __future__ import annotations

import asyncio
import contextlib
import difflib
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from shard.client import Backoff, ShardClient
from shard.protocol.agents import AgentInfo

if TYPE_CHECKING:
    from shard.tui.app import ShardApp

SIZE = (110, 32)
SNAPSHOTS = Path(__file__).parent / "snapshots"


async def until(pilot: Any, check: Callable[[], bool], limit: float = 60.0) -> None:
    """Wait until ``check()`` holds on the app; re-checked on each change the app shows (a short
    cap covers a screen popped without a model change)."""
    app = pilot.app
    async with asyncio.timeout(limit):
        while True:
            app.updated.clear()
            await pilot.pause()
            if check():
                return
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(app.updated.wait(), 0.25)


async def type_in(pilot: Any, text: str, *then: str) -> None:
    """Type ``text`` as the terminal would, one key event a character, then press ``then``. The
    characters are posted back to back: ``pilot.press`` waits for the process to go idle after each
    key (0.1 s a key here, more on a loaded machine), which only the keys in ``then`` need — the app
    handles its events in order either way."""
    from textual import events
    from textual.keys import _character_to_key

    app = pilot.app
    for char in text:
        key = events.Key(_character_to_key(char), char)
        key.set_sender(app)
        app.post_message(key)
    await pilot.press(*then)


def screen_text(app: ShardApp) -> str:
    """The active screen as plain text lines (trailing blanks trimmed)."""
    strips = app.screen._compositor.render_strips()
    return "\n".join(strip.text.rstrip() for strip in strips).rstrip() + "\n"


def stable(text: str, project: Path) -> str:
    """What varies between runs made constant: agent ids, the project path, token counts, times."""
    text = re.sub(r"agent-[0-9a-f]{16}", "agent-XXXXXXXXXXXXXXXX", text)
    text = text.replace(str(project), "<project>")
    text = re.sub(r"[\d.]+[kMB]? in / [\d.]+[kMB]? out", "N in / N out", text)
    return re.sub(r"\d+\.\d s\b", "T s", text)


def check_snapshot(name: str, text: str) -> None:
    """Compare with ``snapshots/NAME.txt``; SHARD_UPDATE_SNAPSHOTS=1 rewrites it instead."""
    path = SNAPSHOTS / f"{name}.txt"
    updating = os.environ.get("SHARD_UPDATE_SNAPSHOTS") == "1"
    if updating or not path.exists():
        path.parent.mkdir(exist_ok=True)
        path.write_text(text)
        assert updating, f"wrote a new snapshot {path}: check it in"
    expected = path.read_text()
    diff = difflib.unified_diff(expected.splitlines(), text.splitlines(), str(path), "this run", lineterm="")
    assert text == expected, "\n".join(diff)


def check_svg(name: str, svg: str) -> None:
    """Compare a screenshot with ``snapshots/NAME.svg`` (colours and layout; check the text first
    with :func:`check_snapshot`, whose diff is readable); SHARD_UPDATE_SNAPSHOTS=1 rewrites it."""
    path = SNAPSHOTS / f"{name}.svg"
    updating = os.environ.get("SHARD_UPDATE_SNAPSHOTS") == "1"
    if updating or not path.exists():
        path.write_text(svg)
        assert updating, f"wrote a new snapshot {path}: look at it, then check it in"
    assert svg == path.read_text(), f"{path} differs in its styles: open it beside this run's screenshot"


async def connect(home: Path, first: float = 0.05, path: Path | None = None) -> ShardClient:
    """A client that reconnects fast (the schedule itself is the SDK's, tested there)."""
    return await ShardClient.connect_unix(path, home=home, backoff=Backoff(first=first, cap=0.5))


def info(agent_id: str, **extra: object) -> AgentInfo:
    """An agent as ``agent.list`` describes it (``extra``: its other fields)."""
    fields = {"agent_id": agent_id, "cwd": "/p", "status": "idle", "runtime_state": "running"}
    return AgentInfo.model_validate({**fields, "created_at": 0, **extra})
