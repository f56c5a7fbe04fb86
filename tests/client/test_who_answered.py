"""Who answered a request, as a person reads it (issue 26 item 10; additive ``source_label`` on
``permission_resolved``, ``client_id`` on ``hello``, ``client.identify``): a real daemon, a browser
enrolled through the real flow and an SDK client with a name, each seeing the other's answer by a
name they recognise and their own as "you" — never a connection id."""

from __future__ import annotations

from pathlib import Path

from shard.client import ShardClient, resolution_text
from shard.protocol.events import PermissionRequest, PermissionResolved
from shard.testing import tool_step
from shard.testing.daemon import WsClient
from shard.testing.home import text_step
from shard.testing.web import Browser, ws_protocols

CHROME_ON_LINUX = (
    "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36"
)


async def test_each_side_sees_the_other_by_name_and_itself_as_you(daemon_factory, project: Path):
    """A browser enrolled as Chrome on Linux allows the first request: the SDK client sees "Allowed
    by Chrome on Linux". The SDK client, named "my-bot", denies the second: the browser's resolution
    says ``source_label: "my-bot"`` and the SDK's own view says "Denied by you". Neither sees a
    connection id as a name.

    Covers: R6.3.6, R9.5.13, R9.5.14
    """
    daemon = await daemon_factory(
        [tool_step("touch", {"path": "one.txt"}), tool_step("touch", {"path": "two.txt"}), text_step("ok")]
    )
    browser = await Browser.enroll(daemon.port, daemon.socket, extra=[f"User-Agent: {CHROME_ON_LINUX}"])
    web = await WsClient.connect(daemon.port, protocols=ws_protocols(await browser.ticket()))
    daemon.clients.append(web)
    async with await ShardClient.connect_unix(home=daemon.home, name="my-bot") as sdk:
        assert sdk.client_id is not None
        assert sdk.client_id.startswith("unix-client-")
        agent = await sdk.create_agent(project)
        resp, _ = await web.request({"type": "agent.attach", "id": "a", "agent_id": agent.agent_id})
        assert resp["success"] is True, resp
        stream = agent.subscribe()
        await agent.prompt("touch two files")

        first = await _next(stream, PermissionRequest)
        await web.send(
            {
                "type": "permission_response",
                "agent_id": agent.agent_id,
                "request_id": first.request_id,
                "decision": "allow",
            }
        )
        resolved = await _next(stream, PermissionResolved)
        assert resolved.source_label == "Chrome on Linux"
        assert not sdk.answered_here(resolved)
        assert (
            resolution_text(resolved, first, mine=sdk.answered_here(resolved)) == "Allowed by Chrome on Linux"
        )

        second = await _next(stream, PermissionRequest)
        await agent.answer_permission(second.request_id, decision="deny")
        mine = await _next(stream, PermissionResolved)
        assert sdk.answered_here(mine)
        assert resolution_text(mine, second, mine=True) == "Denied by you"
        seen = await web.until(
            lambda m: m.get("type") == "permission_resolved" and m["request_id"] == second.request_id
        )
        assert seen[-1]["source_label"] == "my-bot"
        assert resolution_text(PermissionResolved.model_validate(seen[-1])) == "Denied by my-bot"
        await web.close()


async def _next(stream, kind):
    while True:
        event = await stream.next(15)
        if isinstance(event, kind):
            return event
