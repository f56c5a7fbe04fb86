"""``shard daemon`` with no model configured: new agents run the offline demo, and the daemon says so
once at start; with a model configured, nothing changes (the real daemon, spawned)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from shard.agent.catalog import DEMO_MODEL
from shard.testing import DaemonProcess, write_scripted_home
from shard.testing.home import text_step

NO_KEYS = {"ANTHROPIC_API_KEY": "", "OPENAI_API_KEY": ""}  # empty counts as unset for the built-ins


async def _prompted(daemon: DaemonProcess, cwd: Path, **fields: str) -> tuple[dict, list[dict]]:
    client = await daemon.unix()
    created, _ = await client.request({"type": "agent.create", "id": "c", "cwd": str(cwd), **fields})
    assert created["success"] is True, created
    agent = created["data"]["agent_id"]
    attached, _ = await client.request({"type": "agent.attach", "id": "a", "agent_id": agent})
    assert attached["success"] is True, attached
    await client.send({"type": "prompt", "id": "p", "agent_id": agent, "message": "hello"})
    read = await client.idle(agent_id=agent)
    status, _ = await client.request({"type": "agent.status", "id": "s", "agent_id": agent})
    await client.close()
    return status["data"]["agents"][0], read


async def test_with_nothing_configured_new_agents_run_the_demo(tmp_path: Path) -> None:
    home, project = tmp_path / "home", tmp_path / "project"
    project.mkdir()
    daemon = await DaemonProcess.start(home, env={**os.environ, **NO_KEYS})
    try:
        info, read = await _prompted(daemon, project)
        notices = [line for line in daemon.output if "no model is configured" in line]
    finally:
        await daemon.stop()
    assert len(notices) == 1
    assert DEMO_MODEL in notices[0]
    assert info["model"] == DEMO_MODEL
    answer = _assistant_texts(read)
    assert answer, [m["type"] for m in read]
    assert "to talk to a real model" in answer[-1].lower()  # the demo's own closing words
    assert not [m for m in read if m["type"] == "error"], (
        "the first prompt failed instead of running the demo"
    )


async def test_a_configured_model_is_used_and_no_notice_is_printed(tmp_path: Path) -> None:
    home, project = tmp_path / "home", tmp_path / "project"
    project.mkdir()
    write_scripted_home(home, [text_step("from the configured model")])
    daemon = await DaemonProcess.start(home, env={**os.environ, **NO_KEYS})
    try:
        info, read = await _prompted(daemon, project)
    finally:
        await daemon.stop()
    assert not [line for line in daemon.output if "no model is configured" in line]
    assert info.get("model") in (None, "mine/fixed")  # the runtime takes config's default itself
    assert _assistant_texts(read) == ["from the configured model"]


@pytest.mark.no_local_runtimes
async def test_models_without_a_default_are_named_in_the_start_line(tmp_path: Path) -> None:
    """config.toml lists models but names no ``default_model``: the start line says exactly that —
    not that no model is configured — names the models there are and the line that picks one."""
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.toml").write_text(
        '[[providers]]\nname = "local"\nkind = "openai"\nbase_url = "http://127.0.0.1:9/v1"\n'
        'models = ["m", "n"]\n'
    )
    daemon = await DaemonProcess.start(home, env={**os.environ, **NO_KEYS})
    await daemon.stop()
    [line] = [line for line in daemon.startup if DEMO_MODEL in line]
    assert line.startswith("shard daemon: no default_model in config.toml: new agents use scripted/demo")
    assert "(local/m, local/n)" in line
    assert 'default_model = "local/m"' in line
    assert "no model is configured" not in " ".join(daemon.output)


@pytest.mark.no_local_runtimes
async def test_with_no_model_at_all_the_start_line_says_none_is_configured(tmp_path: Path) -> None:
    """No config.toml and no key: the start line says no model is configured (and no default_model
    is asked for: there is nothing to pick from)."""
    daemon = await DaemonProcess.start(tmp_path / "home", env={**os.environ, **NO_KEYS})
    await daemon.stop()
    [line] = [line for line in daemon.startup if DEMO_MODEL in line]
    assert line.startswith("shard daemon: no model is configured: new agents use scripted/demo")
    assert "default_model" not in line


def _assistant_texts(read: list[dict]) -> list[str]:
    return [
        "".join(block.get("text", "") for block in m["message"]["content"])
        for m in read
        if m["type"] == "message_complete" and m["message"]["role"] == "assistant"
    ]
