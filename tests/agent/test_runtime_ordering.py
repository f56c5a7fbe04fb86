"""In-process checks of the runtime's ordering guarantees, with a sink that inspects the session
file at the moment each event is emitted (deterministic, no subprocess)."""

from __future__ import annotations

from pathlib import Path

import orjson

from shard.agent.boot import AgentOptions, prepare
from shard.agent.runtime import Runtime
from shard.protocol.events import EventBase
from shard.testing import text_step, tool_step, write_scripted_home


async def test_entries_are_written_before_the_events_that_report_them(tmp_path: Path):
    """message_complete and tool_result are emitted only after their entry is in the session file.

    Covers: R9.4.8, R9.4.14
    """
    home = write_scripted_home(tmp_path / "home", [tool_step("ls", {}), text_step("done")])
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    prepared = prepare(AgentOptions(home=str(home), cwd=str(cwd)))
    seen: list[str] = []

    def sink(event: EventBase) -> None:
        seen.append(event.type)
        key = None
        if event.type == "message_complete":
            key = event.message_id
        elif event.type == "tool_result":
            key = event.tool_call_id
        if key is not None:
            on_disk = prepared.store.path.read_bytes()
            assert key.encode() in on_disk, f"{event.type} sent before its entry was written"
            last = orjson.loads(on_disk.splitlines()[-1])
            assert key in (last["id"], last.get("tool_call_id")), "it is the latest entry"

    runtime = Runtime.from_prepared(prepared, sink=sink)
    await runtime.handle(b'{"type":"prompt","message":"go"}')
    await runtime.wait_idle()
    assert seen.count("message_complete") == 3
    assert seen.count("tool_result") == 1
