"""Snapshots of the main screens as text (tests/tui/snapshots/*.txt): the agent list, a conversation
with a diff, a permission dialog; and a permission dialog at 80x24 and 160x45 as text and as SVG
screenshots (*.svg: open one in a browser), from a fake daemon so nothing varies between runs. In
the real daemon's, what varies (agent ids, paths, token counts, times) is made constant first.
SHARD_UPDATE_SNAPSHOTS=1 rewrites the files after a deliberate change."""

from __future__ import annotations

import difflib
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from tui_helpers import SIZE, check_snapshot, check_svg, connect, screen_text, stable, type_in, until

from shard.testing.fake_daemon import AGENT, INFO, FakeDaemon, ok, sync
from shard.testing.home import text_step, tool_step

# Textual and shard.tui's widgets are imported by the tests that use them, not here: see tui_helpers.py
if TYPE_CHECKING:
    from shard.tui.app import ShardApp

CHANGE = {"path": "notes.txt", "edits": [{"old_text": "hello", "new_text": "bye"}]}


def turns_done(app: ShardApp) -> int:
    from shard.tui.conversation import Conversation

    return sum(line.startswith("turn done") for line in app.query_one(Conversation).plain())


@pytest.mark.slow
async def test_main_screens(daemon_factory, project: Path, client_factory):
    """Covers: R9.4.14, R11.0.6, R9.5.5, R10.2.15"""
    from shard.tui.app import ShardApp
    from shard.tui.dialogs import PermissionDialog

    steps = [text_step("Ready when you are."), tool_step("edit", CHANGE, "Editing."), text_step("Edited.")]
    daemon = await daemon_factory(steps)
    client = await client_factory(daemon.home)
    await client.create_agent_id(project, name="demo")
    app = ShardApp(client, cwd="/work/project")
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: "demo" in screen_text(app))
        check_snapshot("agent_list", stable(screen_text(app), project))

        await pilot.press("enter")  # opens the highlighted agent
        await until(pilot, lambda: any(view.syncs == 1 for view in app.views.values()))
        agent_id = next(iter(app.views))
        await type_in(pilot, "hello", "enter")
        await until(pilot, lambda: app.views[agent_id].status == "idle" and "Ready" in screen_text(app))
        await type_in(pilot, "edit notes", "enter")
        await until(pilot, lambda: isinstance(app.screen, PermissionDialog))
        await until(pilot, lambda: app.roster.rows[agent_id].activity == "waiting")  # the list's badge
        check_snapshot("permission_dialog", stable(screen_text(app), project))

        await pilot.press("1")
        await until(pilot, lambda: turns_done(app) == 2)
        check_snapshot("conversation", stable(screen_text(app), project))


def _choice(choice_id: str, label: str, key: str, intent: str) -> dict[str, str]:
    return {"id": choice_id, "label": label, "accelerator": key, "intent": intent}


_ALLOW, _DENY = _choice("allow", "Allow once", "y", "allow"), _choice("deny", "Deny", "n", "deny")
_ALWAYS = _choice("always", "Always allow this exact call", "a", "persist")
_COMMAND = (
    "git log --since='2 weeks ago' --pretty=format:'%h %an %s' --no-merges | grep -v 'chore' "
    "| sort -k2 | uniq -c | sort -rn | head -n 40 | cut -c1-120 | tr a-z A-Z"
)
_PROGRAMS = ["git log --no-merges --pretty=format:%h %an %s --since=2 weeks ago", "grep -v", "sort -k2"]
_LIKE = "; ".join(f"`{s}`" for s in [*_PROGRAMS, "uniq -c", "sort -rn", "head -n", "cut -c1-120", "tr"])
_LIKE_CHOICE = _choice("always-like", f"Always allow commands like {_LIKE}", "l", "persist")
_NEW = [f"line {n}: the new text of this line, long enough to matter" for n in range(60)]
_DIFF = "\n".join(difflib.unified_diff(["hello"], _NEW, "a/notes.txt", "b/notes.txt", lineterm=""))
# what the daemon asks for these two calls (tests/tui/test_narrow.py asks a real one)
REQUESTS: dict[str, dict[str, Any]] = {
    "bash": {
        "tool_name": "bash",
        "input": {"command": _COMMAND},
        "prompt": "Run this command?",
        "details": [
            {"label": "command", "value": _COMMAND, "format": "command"},
            {"label": "in", "value": "/work/project", "format": "path"},
        ],
        "choices": [
            _ALLOW,
            _ALWAYS,
            _choice("always-like", f"Always allow commands like {_LIKE}", "l", "persist"),
            _DENY,
        ],
    },
    "write": {
        "tool_name": "write",
        "input": {"path": "notes.txt", "content": "\n".join(_NEW) + "\n"},
        "prompt": "Replace notes.txt (60 lines)?",
        "details": [
            {"label": "path", "value": "notes.txt", "format": "path"},
            {"label": "diff", "value": _DIFF, "format": "code"},
        ],
        "choices": [_ALLOW, _ALWAYS, _DENY],
    },
}
REPLY = """Here is what I found:

- the **parser** drops `\\r` before a newline
- the tests never feed it CRLF input

```python
def lines(data: bytes) -> list[bytes]:
    return data.replace(b"\\r\\n", b"\\n").split(b"\\n")
```

Shall I change it?"""
ASKING = "waiting_for_permission"
DEMO = {**INFO, "name": "demo", "provider": "test", "model": "test/m", "status": ASKING}
WINDOW = [
    {"id": "m1", "role": "user", "content": [{"type": "text", "text": "why do CRLF files break?"}]},
    {"id": "m2", "role": "assistant", "content": [{"type": "text", "text": REPLY}]},
    {"id": "m3", "role": "user", "content": [{"type": "text", "text": "yes, and run the tests"}]},
]


@pytest.mark.parametrize("size", [pytest.param((80, 24), id="80x24"), pytest.param((160, 45), id="160x45")])
@pytest.mark.parametrize("call", ["bash", "write"])
async def test_a_permission_dialog_at_80_and_160_columns(tmp_path: Path, size: tuple[int, int], call: str):
    """The whole screen with a permission dialog open, as text and as an SVG screenshot
    (snapshots/permission_<call>_<size>.{txt,svg}): every choice on screen, Deny last, the body cut
    to what fits; behind it the list's one line per agent and a reply rendered as markdown.

    Covers: R6.3.6, R9.5.5
    """
    from shard.tui.app import ShardApp
    from shard.tui.dialogs import PermissionDialog

    def answer(command: dict[str, Any]) -> list[dict[str, Any]]:
        if command["type"] == "agent.list":
            return [ok(command, {"agents": [DEMO]})]
        if command["type"] == "agent.attach":
            window = {"messages": WINDOW}
            return [ok(command, {"status": ASKING, "info": DEMO}), sync(status=ASKING, live_window=window)]
        return [ok(command)]

    request = {"type": "permission_request", "agent_id": AGENT, "request_id": "req-1", **REQUESTS[call]}
    request["options"] = ["allow", "allow_always", "deny"]
    async with FakeDaemon(tmp_path / "fake.sock", answer) as peer:
        client = await connect(tmp_path, path=peer.path)
        app = ShardApp(client, agent_id=AGENT, cwd="/work/project")
        async with app.run_test(size=size) as pilot:
            await until(pilot, lambda: app.views[AGENT].syncs == 1)
            await peer.send(request)
            await until(pilot, lambda: isinstance(app.screen, PermissionDialog))
            await pilot.pause()
            text = screen_text(app)
            assert "[n] Deny" in text
            name = f"permission_{call}_{size[0]}x{size[1]}"
            check_snapshot(name, text)
            check_svg(name, app.export_screenshot())
        await client.close()
