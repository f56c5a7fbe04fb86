"""Client-side rules a real daemon never provokes (it always advertises capabilities and supersedes
a runtime only on a crash): the app against a fake daemon on a unix socket."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from tui_helpers import SIZE, connect, type_in, until

from shard.testing.fake_daemon import AGENT, INFO, ok, sync
from shard.testing.fake_daemon import FakeDaemon as Peer

# Textual and shard.tui's widgets are imported by the tests that use them, not here: see tui_helpers.py
if TYPE_CHECKING:
    from shard.tui.app import ShardApp

MODES = {
    "modes": [{"name": "build", "description": "b"}, {"name": "plan", "description": "p"}],
    "active": "build",
}


def footer_keys(app: ShardApp) -> set[str]:
    return {b.action for (_, b, enabled, _) in app.active_bindings.values() if enabled}


async def test_pickers_are_hidden_without_capabilities(tmp_path: Path):
    """A sync without capabilities: no mode or model key in the footer, F2/F3 send nothing; a sync
    that advertises mode-catalog and mode-switch brings the mode picker (only), filled from the
    server's catalog.

    Covers: R9.1.10, R7.10, R7.8
    """
    from shard.tui.app import ShardApp
    from shard.tui.pickers import Picker

    def answer(command: dict[str, Any]) -> list[dict[str, Any]]:
        if command["type"] == "agent.list":
            return [ok(command, {"agents": [INFO]})]
        if command["type"] == "agent.attach":
            return [ok(command, {"status": "idle", "info": INFO}), sync()]
        if command["type"] == "list_modes":
            return [{**ok(command, MODES), "agent_id": AGENT}]
        return [ok(command)]

    async with Peer(tmp_path / "fake.sock", answer) as peer:
        client = await connect(tmp_path, path=peer.path)
        app = ShardApp(client, agent_id=AGENT)
        async with app.run_test(size=SIZE) as pilot:
            await until(pilot, lambda: app.views[AGENT].syncs == 1)
            assert {"pick_mode", "pick_model"}.isdisjoint(footer_keys(app))
            await pilot.press("f2", "f3")
            await pilot.pause()
            assert not isinstance(app.screen, Picker)
            assert [c["type"] for c in peer.received] == ["agent.list", "agent.attach"]
            await peer.send(sync(capabilities=["mode-catalog", "mode-switch"]))
            await until(pilot, lambda: app.views[AGENT].syncs == 2)
            assert "pick_mode" in footer_keys(app)
            assert "pick_model" not in footer_keys(app)
            await pilot.press("f2")
            await until(pilot, lambda: isinstance(app.screen, Picker))
            assert app.screen.entries == [("build", "b"), ("plan", "p")]
        await client.close()


async def test_a_catalog_from_a_superseded_runtime_is_discarded(tmp_path: Path):
    """F2 asks for the mode catalog; before its answer a sync with a new runtime_epoch arrives: the
    late answer is dropped (no picker opens), the app shows the new runtime's state, and the next
    F2 opens the picker.

    Covers: R9.1.17, R9.1.15
    """
    from shard.tui.app import ShardApp
    from shard.tui.pickers import Picker

    caps = ["mode-catalog", "mode-switch"]
    asked: list[int] = []

    def answer(command: dict[str, Any]) -> list[dict[str, Any]]:
        if command["type"] == "agent.list":
            return [ok(command, {"agents": [INFO]})]
        if command["type"] == "agent.attach":
            return [ok(command, {"status": "idle", "info": INFO}), sync(capabilities=caps, runtime_epoch=0)]
        if command["type"] == "list_modes":
            asked.append(1)
            late = {**ok(command, MODES), "agent_id": AGENT}
            if len(asked) == 1:
                return [sync(capabilities=caps, runtime_epoch=1, mode="plan"), late]
            return [late]
        return [ok(command)]

    async with Peer(tmp_path / "fake.sock", answer) as peer:
        client = await connect(tmp_path, path=peer.path)
        app = ShardApp(client, agent_id=AGENT)
        async with app.run_test(size=SIZE) as pilot:
            await until(pilot, lambda: app.views[AGENT].syncs == 1)
            await pilot.press("f2")
            await until(pilot, lambda: app.views[AGENT].runtime_epoch == 1)
            await pilot.pause()
            assert not isinstance(app.screen, Picker)
            assert app.views[AGENT].mode == "plan"
            await pilot.press("f2")
            await until(pilot, lambda: isinstance(app.screen, Picker))
            assert len(asked) == 2
            assert [c["type"] for c in peer.received].count("list_modes") == 2
        await client.close()


async def test_the_prompt_box_sends_prompt_follow_up_steer_and_abort(tmp_path: Path):
    """Idle, Enter sends a plain prompt; mid-turn Enter is a follow-up, ctrl+s a steer and Esc an
    abort — exactly those commands reach the server, in that order.

    Covers: R9.2.1, R9.2.2, R9.2.3, R9.2.6, R9.2.7
    """
    from shard.tui.app import ShardApp

    def answer(command: dict[str, Any]) -> list[dict[str, Any]]:
        if command["type"] == "agent.list":
            return [ok(command, {"agents": [INFO]})]
        if command["type"] == "agent.attach":
            return [ok(command, {"status": "idle", "info": INFO}), sync()]
        replies = [{**ok(command), "agent_id": AGENT}]
        if command["type"] == "prompt" and "streaming_behavior" not in command:
            replies.append({"type": "status", "agent_id": AGENT, "status": "streaming"})
        return replies

    async with Peer(tmp_path / "fake.sock", answer) as peer:
        client = await connect(tmp_path, path=peer.path)
        app = ShardApp(client, agent_id=AGENT)
        async with app.run_test(size=SIZE) as pilot:
            await until(pilot, lambda: app.views[AGENT].syncs == 1)
            await type_in(pilot, "one", "enter")
            await until(pilot, lambda: app.views[AGENT].status == "streaming")
            assert "Esc: abort" in str(app.query_one("#hint").render())
            await type_in(pilot, "two", "enter")
            await type_in(pilot, "three", "ctrl+s")
            await pilot.press("escape")
            await until(pilot, lambda: [c["type"] for c in peer.received][-1] == "abort")
        sent = [c for c in peer.received if c["type"] in ("prompt", "steer", "abort")]
        assert [(c["type"], c.get("message"), c.get("streaming_behavior")) for c in sent] == [
            ("prompt", "one", None),
            ("prompt", "two", "follow_up"),
            ("steer", "three", None),
            ("abort", None, None),
        ]
        await client.close()


async def test_the_reasoning_picker_uses_the_servers_levels(tmp_path: Path):
    """With reasoning-catalog and reasoning-switch, F4 lists the server's levels (names never
    hard-coded) and picking one sends set_reasoning_level with the catalog's model as precondition.

    Covers: R7.10, R9.1.10
    """
    from shard.tui.app import ShardApp
    from shard.tui.pickers import Picker

    caps = ["reasoning-catalog", "reasoning-switch"]
    model = {"id": "t/m", "provider": "t", "model": "m"}
    levels = {"model": model, "active": "low", "levels": [{"id": "low", "label": "Low"}, {"id": "deep",
              "label": "Deep", "description": "think longer"}]}  # fmt: skip

    def answer(command: dict[str, Any]) -> list[dict[str, Any]]:
        if command["type"] == "agent.list":
            return [ok(command, {"agents": [INFO]})]
        if command["type"] == "agent.attach":
            return [ok(command, {"status": "idle", "info": INFO}), sync(capabilities=caps)]
        if command["type"] == "list_reasoning_levels":
            return [{**ok(command, levels), "agent_id": AGENT}]
        data = {"model": model, "previous": "low", "active": "deep"}
        return [{**ok(command, data), "agent_id": AGENT}]

    async with Peer(tmp_path / "fake.sock", answer) as peer:
        client = await connect(tmp_path, path=peer.path)
        app = ShardApp(client, agent_id=AGENT)
        async with app.run_test(size=SIZE) as pilot:
            await until(pilot, lambda: app.views[AGENT].syncs == 1)
            assert {"pick_reasoning"} <= footer_keys(app)
            assert "pick_mode" not in footer_keys(app)
            await pilot.press("f4")
            await until(pilot, lambda: isinstance(app.screen, Picker))
            assert app.screen.entries == [("low", "Low"), ("deep", "think longer")]
            await pilot.press("down", "enter")
            await until(pilot, lambda: peer.received[-1]["type"] == "set_reasoning_level")
        assert {k: peer.received[-1][k] for k in ("model", "effort")} == {"model": "t/m", "effort": "deep"}
        await client.close()
