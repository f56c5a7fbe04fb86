"""Boundary: no socket lets a confined command have something run outside the sandbox.

The root filesystem is read-only inside, but a unix socket on it can still be connected to, and some
sockets start programs on request: the session bus (``systemd-run --user``) and the ssh and gpg
agents in the user's runtime directory, a container engine, systemd's own socket, screen's sessions.
Real bubblewrap: a real listening socket in a runtime directory is out of reach inside, and every
such place is among what the sandbox hides.
"""

from __future__ import annotations

import shutil
import socket
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from shard.agent.sandbox.bwrap import configured
from shard.agent.tools.base import ToolContext
from shard.agent.tools.bash import BashParams, BashTool

# Independent of ``sandbox.ESCAPES`` on purpose: dropping a place there turns this red.
ESCAPES = {
    "/run/docker.sock",
    "/var/run/docker.sock",
    "/run/podman",
    "/run/containerd",
    "/run/dbus/system_bus_socket",
    "/var/run/dbus/system_bus_socket",
    "/run/systemd/private",
    "/run/screen",
}
CONNECT = (
    "python3 -c 'import socket,sys; s=socket.socket(socket.AF_UNIX); "
    's.connect(sys.argv[1]); print("CONNECTED")\' {path} 2>&1; true'
)


@pytest.fixture
def runtime(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A runtime directory outside /tmp (the sandbox's /tmp is its own anyway) holding a live bus."""
    path = Path(tempfile.mkdtemp(dir="/var/tmp", prefix="shard-run-user-"))
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(path))
    yield path
    shutil.rmtree(path, ignore_errors=True)


async def test_the_users_runtime_directory_and_its_session_bus_are_out_of_reach(
    runtime: Path, tmp_path: Path
) -> None:
    """A socket that answers in ``$XDG_RUNTIME_DIR/bus`` is connectable outside and not inside,
    where the folder is empty."""
    bus = runtime / "bus"
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(bus))
    server.listen(4)
    server.setblocking(False)
    project = tmp_path / "project"
    project.mkdir()
    sandbox = configured("auto", shard_home=tmp_path / "shard-home")
    assert sandbox.active, sandbox.why
    tool = BashTool()
    try:
        inside = await tool.execute(
            BashParams(command=CONNECT.format(path=bus) + f"; ls -A {runtime}"),
            ToolContext(cwd=project, sandbox=sandbox),
        )
        outside = socket.socket(socket.AF_UNIX)
        outside.connect(str(bus))  # the control: it is a live socket on the host
        outside.close()
    finally:
        server.close()
    text = inside.content.text  # type: ignore[union-attr]
    assert "CONNECTED" not in text, text
    assert "bus" not in text.split("\n", 1)[-1], text  # the folder is empty inside


def test_every_socket_that_runs_things_is_among_the_hidden_places(runtime: Path, tmp_path: Path) -> None:
    """Container engines, the system bus, systemd's private socket, screen's sessions and the
    user's runtime directory: each is hidden (where it exists at a call)."""
    sandbox = configured("auto", shard_home=tmp_path / "shard-home")
    hidden = {str(p) for p in sandbox.hidden}
    assert hidden >= ESCAPES, sorted(ESCAPES - hidden)
    assert str(runtime) in hidden
