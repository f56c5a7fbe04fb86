"""The warm template is started before the daemon's own imports (issue 31) and is the one the pool
serves from: the first runtime is forked by it, and no second template is built."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
from daemon_helpers import attach, create_agent, reply_text, runtime_pids
from test_warm_pool import _ppid, templates_of

from shard.testing import DaemonProcess, write_scripted_home
from shard.testing.home import text_step

pytestmark = pytest.mark.slow


def _marks(lines: list[str], pid: int) -> list[str]:
    """The labels of ``pid``'s ``shard-trace`` lines, in order."""
    found = (re.match(rf"shard-trace {pid} (.+) \+[\d.]+ cpu [\d.]+$", line) for line in lines)
    return [m.group(1) for m in found if m]


async def test_the_template_starts_before_the_daemons_imports_and_serves_the_first_runtime(
    home: Path, project: Path
):
    """With SHARD_TRACE, the daemon (``python -m shard daemon``, the command) says it started the
    template before the command line's parser (``main``: ``shard.cli.start``), its own imports and
    listening; the first agent's runtime is a child of the daemon's one template, which is that
    early one (adopted: there is no other), and answers its prompt."""
    write_scripted_home(home, [text_step("hello there")])
    daemon = await DaemonProcess.start(home, env={"SHARD_TRACE": repr(time.time())})
    try:
        marks = _marks(daemon.startup, daemon.proc.pid)
        assert marks[: marks.index("daemon: listening") + 1] == [
            "daemon: template",
            "main",
            "daemon: imports",
            "daemon: listening",
        ]
        (template,) = templates_of(daemon)
        client = await daemon.unix()
        agent = await create_agent(client, project)
        await attach(client, agent)
        assert await reply_text(client, agent) == "hello there"
        (pid,) = runtime_pids(home)
        assert _ppid(pid) == template
        assert templates_of(daemon) == [template]
    finally:
        await daemon.kill()


async def test_a_cold_start_daemon_starts_no_template(home: Path, project: Path):
    """``--cold-start``: no template is started, early or late; the runtime is the daemon's child."""
    write_scripted_home(home, [text_step("hello there")])
    daemon = await DaemonProcess.start(home, "--cold-start", env={"SHARD_TRACE": repr(time.time())})
    try:
        assert "daemon: template" not in _marks(daemon.startup, daemon.proc.pid)
        client = await daemon.unix()
        agent = await create_agent(client, project)
        await attach(client, agent)
        (pid,) = runtime_pids(home)
        assert _ppid(pid) == daemon.proc.pid
        assert templates_of(daemon) == []
    finally:
        await daemon.kill()


async def test_the_template_starts_before_config_is_read_and_its_environment_holds_no_key(
    home: Path, project: Path
):
    """The template is spawned first (before ``main``: ``shard.cli.start``), before the daemon reads
    config.toml and takes its keys out of its environment; its own environment is an allowlist, so
    neither a provider key nor any other variable of the user's is in it (a runtime's environment
    comes with its fork)."""
    write_scripted_home(home, [text_step("hello there")])
    secret = "sk-ant-not-a-real-key-" + "x" * 8
    env = {"SHARD_TRACE": repr(time.time()), "ANTHROPIC_API_KEY": secret, "UNRELATED_TOKEN": "tok-123"}
    daemon = await DaemonProcess.start(home, env=env)
    try:
        marks = _marks(daemon.startup, daemon.proc.pid)
        assert marks[:2] == ["daemon: template", "main"]
        (template,) = templates_of(daemon)
        environ = Path(f"/proc/{template}/environ").read_bytes()
        names = {item.split(b"=", 1)[0].decode() for item in environ.split(b"\0") if item}
        assert secret.encode() not in environ
        assert b"tok-123" not in environ
        assert {"ANTHROPIC_API_KEY", "UNRELATED_TOKEN"}.isdisjoint(names)
        assert f"SHARD_HOME={home}".encode() in environ.split(b"\0")
        client = await daemon.unix()
        agent = await create_agent(client, project)
        await attach(client, agent)
        assert await reply_text(client, agent) == "hello there"
        (pid,) = runtime_pids(home)
        # a forked runtime's /proc environ is the template's (a runtime's own comes with its fork)
        assert secret.encode() not in Path(f"/proc/{pid}/environ").read_bytes()
    finally:
        await daemon.kill()


def test_the_template_is_started_before_config_toml_is_read(home: Path):
    """A config.toml the daemon refuses: it says so and exits 1, and its trace shows the template
    was started before — then let go (it exits once it reads the end of its socket)."""
    home.mkdir(parents=True, exist_ok=True)
    home.chmod(0o700)
    (home / "config.toml").write_text("default_model = [\n")
    env = {**os.environ, "SHARD_TRACE": repr(time.time())}
    done = subprocess.run(
        [sys.executable, "-m", "shard", "daemon", "--port", "0", "--home", str(home)],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )
    assert done.returncode == 1
    assert "config.toml" in done.stderr
    assert _marks(done.stderr.splitlines(), _daemon_pid(done.stderr)) == ["daemon: template", "main"]


def _daemon_pid(stderr: str) -> int:
    found = re.search(r"shard-trace (\d+) main ", stderr)
    assert found, stderr
    return int(found.group(1))


_START = r"""
import json, os, select, sys, threading, time
if sys.argv[1] == "imports":
    import importlib
    from shard.daemon.early_template import TEMPLATE_IMPORTS
    for name in TEMPLATE_IMPORTS:
        importlib.import_module(name)
if sys.argv[2] == "thread":
    threading.Thread(target=time.sleep, args=(30,), daemon=True).start()
from shard.daemon.early_template import start_early
spare = os.open(sys.argv[4], os.O_RDONLY | os.O_CREAT)  # the daemon's: the template must not keep it
passed = os.open(sys.argv[4] + "-inherited", os.O_RDONLY | os.O_CREAT)
os.set_inheritable(passed, True)  # as one its own parent could have given it: neither
early = start_early({"PATH": os.environ["PATH"], "SHARD_HOME": sys.argv[3], "ONLY": "this"}, [])
pid = early.proc.pid
ready = select.select([early.sock], [], [], 60)[0] and json.loads(early.sock.recv(4096))
fds = {}
for fd in os.listdir(f"/proc/{pid}/fd"):
    try:
        fds[int(fd)] = os.readlink(f"/proc/{pid}/fd/{fd}")
    except FileNotFoundError:  # a module file its warming (between requests) opened and closed since
        pass
cmdline = open(f"/proc/{pid}/cmdline", "rb").read().split(b"\0")
print(json.dumps({
    "kind": "fork" if early.proc.forked else "spawn", "ready": ready, "session": os.getsid(pid) == pid,
    "targets": sorted(fds.values()), "stdin": fds.get(0), "stdout": fds.get(1),
    "title": [part.decode() for part in cmdline[1:4]],
}), flush=True)
early.close()  # the end of its socket: it leaves
print(json.dumps({"code": early.proc.wait()}))
"""


@pytest.mark.parametrize(
    ("imports", "thread", "kind"),
    [("imports", "alone", "fork"), ("none", "alone", "spawn"), ("imports", "thread", "spawn")],
)
def test_a_daemon_that_holds_the_templates_imports_forks_its_template(tmp_path, imports, thread, kind):
    """A process that has imported every module the template imports, with no other thread (a daemon
    the test kit forked from its template), forks its template rather than spawning a new
    interpreter; ``shard daemon`` itself (none of them imported) and a process with a second thread
    spawn it. Either way the template says it is ready, runs in its own session with stdin and
    stdout on /dev/null and no descriptor of the daemon's but stderr and its socket, shows
    ``-m shard.cli.forkserver`` to ps, and leaves when its socket closes."""
    home = tmp_path / "home"
    home.mkdir()
    run = subprocess.run(
        [sys.executable, "-c", _START, imports, thread, str(home), str(tmp_path / "daemon-only")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr
    first, last = (json.loads(line) for line in run.stdout.splitlines())
    assert first["kind"] == kind
    assert first["ready"] == {"ready": True}
    assert first["session"] is True
    assert first["stdin"] == first["stdout"] == "/dev/null"
    assert str(tmp_path / "daemon-only") not in first["targets"]
    assert str(tmp_path / "daemon-only-inherited") not in first["targets"]
    assert sum(target.startswith("socket:") for target in first["targets"]) == 1, first["targets"]
    assert first["title"] == ["-P", "-m", "shard.cli.forkserver"]
    assert last == {"code": 0}
