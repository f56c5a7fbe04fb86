"""The terminal client never waits silently: a provider retry shows on the status line as it
happens — the delay and the cause, whole at 80 columns — and goes once the wait is over. Textual's
pilot against a real ``shard daemon`` whose provider is a local server answering 503 with a long
Retry-After."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from tui_helpers import screen_text, type_in, until

from agent.providers._server import Fail, ProviderServer
from agent.providers._support import provider_toml, write_home
from shard.testing import DaemonProcess

# Textual and shard.tui's widgets are imported by the tests that use them, not here: see tui_helpers.py
if TYPE_CHECKING:
    from shard.tui.app import ShardApp

DETAIL = "retrying in 20.0 s: HTTP 503 (attempt 2 of 3)"
RETRY = "[retry]\nmax_attempts = 3\nbase_delay = 0.01\nmax_delay = 60\n"
BUSY = {"error": {"message": "The server is busy.", "type": "server_error"}}


def _unwrapped(app: ShardApp) -> str:
    """The right-hand pane's lines joined (a line that does not fit wraps onto the next)."""
    return " ".join(line.split("│", 1)[-1].strip() for line in screen_text(app).splitlines())


async def test_a_provider_retry_shows_on_the_status_line_until_it_is_over(
    tmp_path: Path, project: Path, client_factory
):
    """Covers: R9.1.19"""
    from shard.tui.app import ShardApp

    server = await ProviderServer.start()
    server.replies.append(Fail(503, BUSY, {"retry-after": "20"}))
    body = provider_toml("local", "openai", server.openai_url, '[{ id = "m" }]', key_env=None)
    home = write_home(tmp_path / "home", body, default_model="local/m", retry=RETRY)
    daemon = await DaemonProcess.start(home)
    try:
        client = await client_factory(home)
        agent_id = await client.create_agent_id(project)
        app = ShardApp(client, agent_id=agent_id)
        async with app.run_test(size=(80, 24)) as pilot:
            await until(pilot, lambda: app.views[agent_id].syncs == 1)
            await type_in(pilot, "hello", "enter")
            await until(pilot, lambda: DETAIL in _unwrapped(app))
            await pilot.press("escape")  # the abort ends the wait
            await until(pilot, lambda: app.views[agent_id].status == "idle")
            assert "retrying" not in _unwrapped(app)
        assert len(server.requests) == 1
    finally:
        await daemon.kill()
        await server.close()
