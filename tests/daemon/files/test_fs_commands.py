"""``fs.list``, ``fs.read``, ``fs.complete`` against a real daemon, over both transports: what a
client sees of an agent's folder, every way out refused with the protocol's code, and folder
completion that never shows ``$SHARD_HOME``."""

from __future__ import annotations

from typing import Any

import orjson
import pytest
from daemon_helpers import connect, create_agent

from shard.daemon import wire


async def ask(client: Any, n: int, **message: Any) -> dict[str, Any]:
    resp, _ = await client.request({"id": f"fs-{n}", **message})
    return resp


async def test_a_client_browses_the_folder_and_nothing_outside(daemon_factory, transport, tmp_path, project):
    (tmp_path / "secret.txt").write_text("TOP SECRET\n")
    (project / ".gitignore").write_text(".env\n")
    (project / ".env").write_text("API_KEY=sk-123\n")
    (project / "src").mkdir()
    (project / "src" / "app.py").write_text("print('hi')\n")
    (project / "out").symlink_to(tmp_path / "secret.txt")
    daemon = await daemon_factory([])
    client = await connect(daemon, transport)
    agent = await create_agent(client, project)

    listed = await ask(client, 1, type="fs.list", agent_id=agent)
    assert listed["success"] is True, listed
    kinds = {e["name"]: e["kind"] for e in listed["data"]["entries"]}
    assert kinds == {"src": "dir", ".gitignore": "file", "notes.txt": "file", "out": "link"}
    assert listed["data"]["hidden"] == 1

    read = await ask(client, 2, type="fs.read", agent_id=agent, path="src/app.py")
    assert read["data"]["text"] == "print('hi')\n"

    for n, path, code in [
        (3, "../secret.txt", "INVALID_REQUEST"),
        (4, str(tmp_path / "secret.txt"), "INVALID_REQUEST"),
        (5, "out", "PERMISSION_DENIED"),
        (6, ".env", "PERMISSION_DENIED"),
        (7, ".git/config", "PERMISSION_DENIED"),
        (8, "missing.txt", "NOT_FOUND"),
    ]:
        refused = await ask(client, n, type="fs.read", agent_id=agent, path=path)
        assert refused["success"] is False, path
        assert refused["error"]["code"] == code, (path, refused)
        assert "SECRET" not in str(refused)
        assert "sk-123" not in str(refused)

    unknown = await ask(client, 9, type="fs.list", agent_id="agent-nope")
    assert unknown["error"]["code"] == "NOT_FOUND"


@pytest.mark.no_local_runtimes
async def test_completion_offers_folders_but_never_shard_home(daemon_factory, transport, home, tmp_path):
    (tmp_path / "alpha-project").mkdir()
    (tmp_path / "alpha-file").write_text("")
    daemon = await daemon_factory([])
    client = await connect(daemon, transport)
    done = await ask(client, 1, type="fs.complete", prefix=str(tmp_path / "alpha"))
    assert done["data"] == {"directories": [str(tmp_path / "alpha-project")], "truncated": False}
    inside = await ask(client, 2, type="fs.complete", prefix=str(home) + "/")
    assert inside["data"]["directories"] == []
    beside = await ask(client, 3, type="fs.complete", prefix=str(home.parent) + "/" + home.name[:2])
    assert str(home) not in beside["data"]["directories"]
    relative = await ask(client, 4, type="fs.complete", prefix="relative/pa")
    assert relative["error"]["code"] == "INVALID_REQUEST"


def test_hello_offers_the_commands() -> None:
    capabilities = orjson.loads(wire.hello("unix", "c-1"))["capabilities"]
    assert {"fs-read", "fs-complete", "agent-rename"} <= set(capabilities)
