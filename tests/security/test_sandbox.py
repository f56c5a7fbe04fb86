"""Boundary: a command the model runs in the sandbox stays in it (issue 19; ``shard.agent.sandbox.bwrap``).

Every test runs the real ``shard`` (``shard run --sandbox`` or ``shard agent --stdio --sandbox``)
with a scripted model whose bash calls try to get out: write outside the project, see or read a
Shard process, read a key or the user's home, reach the network (directly, past an allow-list's
proxy too), outlive an abort. Inside, work still works: files in the project, a venv and an
editable install — with no permission request at all in ``auto``. Without bubblewrap, Shard says so
once and asks instead. (Hidden places whatever the working directory: ``test_sandbox_hides.py``;
what decides later code: ``test_sandbox_protected.py``; grants: ``test_sandbox_grants.py``.)
"""

from __future__ import annotations

import asyncio
import fcntl
import os
import shutil
import socket
import stat
import struct
import tempfile
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import orjson
import pytest

from shard.agent.tools.bash import NO_NETWORK_NOTE
from shard.testing import (
    AgentProcess,
    DaemonProcess,
    shard_command,
    text_step,
    tool_step,
    write_scripted_home,
)

KEY = "sk-test-SANDBOXED-0123456789"


def _bash(command: str) -> dict[str, Any]:
    return tool_step("bash", {"command": command})


async def _run(
    home: Path,
    cwd: Path,
    steps: list[dict[str, Any]],
    *flags: str,
    env: dict[str, str] | None = None,
    extra_toml: str = "",
):
    """``shard run --json`` to completion: (exit code, events, stderr)."""
    write_scripted_home(home, [*steps, text_step("done")], extra_toml=extra_toml)
    proc = await asyncio.create_subprocess_exec(
        *shard_command("run", "--json", *flags, "go"),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        cwd=cwd,
        env={**os.environ, "SHARD_HOME": str(home), "OPENAI_API_KEY": KEY, **(env or {})},
    )
    out, err = await asyncio.wait_for(proc.communicate(), 120)
    events = [orjson.loads(line) for line in out.splitlines() if line.strip()]
    return proc.returncode, events, err.decode()


def _results(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [e for e in events if e["type"] == "tool_result"]


def _text(result: dict[str, Any]) -> str:
    content = result["content"]
    return content.get("text") or content.get("message") or ""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    path = tmp_path / "project"
    path.mkdir()
    return path


async def test_writes_land_in_the_project_and_nowhere_else(tmp_path: Path, project: Path):
    """The project is writable; a file beside it, /etc and the private /tmp's outside twin are not;
    the calls ran with no permission request and each tool_call says sandboxed."""
    outside = tmp_path / "outside"
    outside.mkdir()
    code, events, _ = await _run(
        tmp_path / "home",
        project,
        [
            _bash("echo kept > inside.txt && cat inside.txt"),
            _bash(
                f"echo x > {outside}/e.txt; echo x > /etc/escaped.txt; echo x > /tmp/private.txt && ls /tmp"
            ),
            _bash("ls /tmp"),
        ],
        "--sandbox",
    )
    assert code == 0
    assert not [e for e in events if e["type"] == "permission_request"]
    assert [e.get("sandboxed") for e in events if e["type"] == "tool_call"] == [True, True, True]
    _, escapes, listing = _results(events)
    assert (project / "inside.txt").read_text() == "kept\n"
    assert "/etc/escaped.txt: Read-only file system" in _text(escapes)
    assert "e.txt: No such file or directory" in _text(escapes)  # /tmp inside is its own
    assert not (outside / "e.txt").exists()
    assert not Path("/etc/escaped.txt").exists()
    assert not Path("/tmp/private.txt").exists()  # its /tmp was its own
    assert "private.txt" in _text(escapes)
    assert "private.txt" not in _text(listing)  # and each call gets a fresh one


async def test_no_shard_process_key_or_secret_is_visible(tmp_path: Path, project: Path):
    """/proc shows the sandbox's own processes only; no environment holds the key; SHARD_HOME, the
    home's SSH folder and its .netrc are empty inside — while a toolchain under the home stays
    there, and a path named in ``[sandbox] hidden`` is hidden too."""
    # outside /tmp: the sandbox's /tmp is its own, so a home there would be out of sight anyway
    outside_tmp = Path(tempfile.mkdtemp(dir="/var/tmp"))
    home, user = tmp_path / "home", outside_tmp / "user"
    (user / ".ssh").mkdir(parents=True)
    (user / ".ssh" / "id_ed25519").write_text("PRIVATE KEY\n")
    (user / ".netrc").write_text("machine example.org password hunter2\n")
    (user / ".local" / "bin").mkdir(parents=True)
    (user / ".local" / "bin" / "tool").write_text("a toolchain\n")
    other = outside_tmp / "other-project"
    other.mkdir()
    (other / "notes.txt").write_text("another project's notes\n")
    steps = [
        _bash("for p in /proc/[0-9]*; do tr '\\0' ' ' < $p/cmdline; echo; done"),
        _bash("env"),
        _bash(f"ls -A {home}; ls -A ~/.ssh; cat ~/.netrc; ls -A {other}; echo end"),
        _bash("cat ~/.local/bin/tool"),
    ]
    try:
        code, events, _ = await _run(
            home,
            project,
            steps,
            "--sandbox",
            env={"HOME": str(user)},
            extra_toml=f'\n[sandbox]\nhidden = ["{other}"]\n',
        )
    finally:
        shutil.rmtree(outside_tmp)
    assert code == 0
    procs, env, secrets, toolchain = (_text(r) for r in _results(events))
    assert "-m shard" not in procs  # neither the runtime nor any other Shard process
    assert "agent --stdio" not in procs
    assert len([line for line in procs.splitlines() if line.strip()]) <= 4  # bwrap's init, bash, tr
    assert KEY not in env
    assert "SHARD_HOME" not in env
    assert secrets.split() == ["end"]  # config.toml, sessions, the key, the password, the other project
    assert toolchain == "a toolchain\n"


async def test_the_network_is_off(tmp_path: Path, project: Path):
    """A server listening on the host's loopback cannot be reached from inside."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    port = server.getsockname()[1]
    try:
        connect = f"import socket; socket.create_connection(('127.0.0.1', {port}), 3)"
        command = f'python3 -c "{connect}" 2>&1 | tail -1'
        code, events, _ = await _run(tmp_path / "home", project, [_bash(command)], "--sandbox")
    finally:
        server.close()
    assert code == 0
    text = _text(_results(events)[0])
    assert "ConnectionRefusedError" in text
    assert NO_NETWORK_NOTE in text  # the model is told why, and how to ask for the network


# A PEP 517 backend of the package's own (no build dependency to fetch: the sandbox has no network).
BACKEND = """
import base64, hashlib, os, zipfile

def _wheel(directory, files):
    dist = "mini-0.1.dist-info"
    files = dict(files)
    files[dist + "/METADATA"] = "Metadata-Version: 2.1\\nName: mini\\nVersion: 0.1\\n"
    files[dist + "/WHEEL"] = "Wheel-Version: 1.0\\nRoot-Is-Purelib: true\\nTag: py3-none-any\\n"
    record = []
    for path, text in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=").decode()
        record.append(f"{path},sha256={digest},{len(text.encode())}")
    files[dist + "/RECORD"] = "\\n".join([*record, dist + "/RECORD,,"]) + "\\n"
    name = "mini-0.1-py3-none-any.whl"
    with zipfile.ZipFile(os.path.join(directory, name), "w") as wheel:
        for path, text in files.items():
            wheel.writestr(path, text)
    return name

def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    return _wheel(wheel_directory, {"mini.pth": os.path.abspath("src") + "\\n"})

def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    return _wheel(wheel_directory, {"mini/__init__.py": open("src/mini/__init__.py").read()})
"""


async def test_a_build_works_inside(tmp_path: Path, project: Path):
    """A venv and an editable install of a small local package, all in the project, with no
    permission request. (A commit does not: ``.git`` is read-only inside — see
    ``test_sandbox_protected.py``.)"""
    package = project / "pkg"
    (package / "src" / "mini").mkdir(parents=True)
    (package / "src" / "mini" / "__init__.py").write_text("ANSWER = 42\n")
    (package / "pyproject.toml").write_text(
        '[build-system]\nrequires = []\nbuild-backend = "backend"\nbackend-path = ["."]\n'
    )
    (package / "backend.py").write_text(BACKEND)  # no build dependency: nothing to download
    steps = [
        _bash("python3 -m venv .venv && .venv/bin/pip install -q --no-index -e ./pkg && echo installed"),
        _bash(".venv/bin/python -c 'import mini; print(mini.ANSWER)'"),
    ]
    code, events, _ = await _run(tmp_path / "home", project, steps, "--sandbox")
    assert code == 0
    installed, imported = (_text(r).strip() for r in _results(events))
    assert installed.endswith("installed"), installed
    assert imported == "42"
    assert not [e for e in events if e["type"] == "permission_request"]


async def test_an_abort_leaves_nothing_running(tmp_path: Path, project: Path):
    """A command that starts a background sleeper and sleeps itself: abort, and no process of it is
    left on the host."""
    home = tmp_path / "home"
    write_scripted_home(home, [_bash("sleep 317 & sleep 318"), text_step("done")])
    agent = await AgentProcess.start(home, project, "--sandbox", "auto")
    try:
        await agent.handshake()
        await agent.send({"type": "prompt", "id": "p", "message": "go"})
        await agent.until(lambda m: m["type"] == "tool_call")
        for _ in range(100):
            if _sleepers():
                break
            await asyncio.sleep(0.05)
        assert _sleepers(), "the command did not start"
        await agent.request({"type": "abort", "id": "a"})
        for _ in range(100):
            if not _sleepers():
                break
            await asyncio.sleep(0.05)
        assert _sleepers() == []
    finally:
        await agent.kill()


def _sleepers() -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                argv = (entry / "cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if argv[:2] in ([b"sleep", b"317"], [b"sleep", b"318"]):
                found.append(int(entry.name))
    return found


async def test_without_bubblewrap_it_says_so_once_and_asks(tmp_path: Path, project: Path):
    """A bwrap that cannot make namespaces: one stderr line, no sandbox capability, and the command
    asks (here nobody can answer: denied, not run)."""
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "bwrap").write_text(
        "#!/bin/sh\necho 'bwrap: No permissions to create new namespace' >&2\nexit 1\n"
    )
    (fake / "bwrap").chmod(stat.S_IRWXU)
    env = {"PATH": f"{fake}:{os.environ['PATH']}"}
    _, events, err = await _run(tmp_path / "home", project, [_bash("touch made.txt")], "--sandbox", env=env)
    assert err.count("no sandbox:") == 1
    assert "No permissions to create new namespace" in err
    assert not (project / "made.txt").exists()
    (result,) = _results(events)
    assert result["is_error"] is True
    assert not [e for e in events if e["type"] == "tool_call" and "sandboxed" in e]
    assert "sandbox" not in events[0]["capabilities"]  # hello claims no sandbox
    assert "denied" in _text(result).lower()


async def test_an_agent_created_with_sandbox_auto_runs_confined_through_the_daemon(
    tmp_path: Path, project: Path
):
    """agent.create's additive ``sandbox`` reaches the runtime the daemon starts: its sync advertises
    the sandbox, its bash runs confined with no permission request, tool_call says sandboxed."""
    home = tmp_path / "home"
    write_scripted_home(
        home, [_bash("echo ok > made.txt; touch /etc/nope 2>&1; cat made.txt"), text_step("done")]
    )
    daemon = await DaemonProcess.start(home)
    try:
        client = await daemon.unix()
        created, _ = await client.request(
            {"type": "agent.create", "id": "c", "cwd": str(project), "sandbox": "auto"}
        )
        agent = created["data"]["agent_id"]
        await client.request({"type": "agent.attach", "id": "a", "agent_id": agent})
        sync = (await client.until(lambda m: m["type"] == "sync"))[-1]
        await client.send({"type": "prompt", "id": "p", "agent_id": agent, "message": "go"})
        seen = await client.idle(agent_id=agent)
    finally:
        await daemon.stop()
    assert "sandbox:auto" in sync["capabilities"]
    assert not [m for m in seen if m["type"] == "permission_request"]
    (call,) = [m for m in seen if m["type"] == "tool_call"]
    assert call["sandboxed"] is True
    (result,) = [m for m in seen if m["type"] == "tool_result"]
    assert "Read-only file system" in _text(result)
    assert (project / "made.txt").read_text() == "ok\n"


CONNECT = """
import socket, sys
s = socket.create_connection(("127.0.0.1", 3128))
s.sendall(b"CONNECT 127.0.0.1:%s HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n" % sys.argv[1].encode())
print(s.recv(100).split(b"\\r\\n")[0].decode())
s.sendall(b"GET /tunnel HTTP/1.0\\r\\n\\r\\n")
reply = b""
while chunk := s.recv(1000):  # HTTP/1.0: the server closes after the body
    reply += chunk
print(reply.decode().split("\\r\\n\\r\\n", 1)[-1])
"""


async def test_an_allow_list_lets_through_only_its_hosts(tmp_path: Path, project: Path):
    """``network = ["127.0.0.1"]``: plain HTTP and a CONNECT tunnel to that host pass (through the
    runtime's proxy, over the bridge inside); the same server named ``localhost`` is refused with
    403, and the tool result says which host was blocked."""

    class Hello(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = f"hello from the host {self.path}".encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Hello)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    port = server.server_address[1]
    (project / "connect.py").write_text(CONNECT)
    fetch = "import sys, urllib.request as u; print(u.urlopen(sys.argv[1], timeout=10).read().decode())"
    steps = [
        _bash(f"python3 -c '{fetch}' http://127.0.0.1:{port}/plain"),
        _bash(f"python3 connect.py {port}"),
        _bash(f"python3 -c '{fetch}' http://localhost:{port}/refused 2>&1 | tail -1"),
    ]
    try:
        code, events, _ = await _run(
            tmp_path / "home",
            project,
            steps,
            "--sandbox",
            extra_toml='\n[sandbox]\nnetwork = ["127.0.0.1"]\n',
        )
    finally:
        server.shutdown()
        server.server_close()
    assert code == 0
    assert "sandbox:network-allowlist" in events[0]["capabilities"]
    plain, tunnel, refused = (_text(r) for r in _results(events))
    assert "hello from the host /plain" in plain
    assert "200 Connection established" in tunnel
    assert "hello from the host /tunnel" in tunnel
    assert "403" in refused
    assert "blocked connections to localhost: only 127.0.0.1 may be reached" in refused


DIRECT = """
import socket, sys
port = int(sys.argv[1])
for host in sys.argv[2:]:
    try:
        socket.create_connection((host, port), 3).close()
        print(host, "CONNECTED")
    except OSError as exc:
        print(host, "failed:", type(exc).__name__)
"""


def _host_addresses() -> list[str]:
    """The host's IPv4 addresses other than loopback (SIOCGIFADDR on each interface)."""
    found = []
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        for _, name in socket.if_nameindex():
            try:
                packed = fcntl.ioctl(probe.fileno(), 0x8915, struct.pack("256s", name.encode()[:15]))
            except OSError:
                continue  # no IPv4 address on it
            address = socket.inet_ntoa(packed[20:24])
            if not address.startswith("127."):
                found.append(address)
    return found


async def test_an_allow_list_gives_a_command_that_ignores_the_proxy_no_network(tmp_path: Path, project: Path):
    """``network = ["127.0.0.1"]``: the allowed host answers through the proxy, but a command that
    ignores the proxy variables and connects directly — to the host's loopback, to the host's own
    non-loopback address — reaches nothing: the server, listening on every address, saw only the
    proxied request. (Issue 25 item 9: a sandbox keeping the network with an allow-list failed no
    test before.)"""
    seen: list[str] = []

    class Hello(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            seen.append(self.path)
            body = b"hello through the proxy"
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    addresses = _host_addresses()
    assert addresses, "this test needs a non-loopback address on the host"
    server = ThreadingHTTPServer(("0.0.0.0", 0), Hello)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    port = server.server_address[1]
    (project / "direct.py").write_text(DIRECT)
    fetch = "import sys, urllib.request as u; print(u.urlopen(sys.argv[1], timeout=10).read().decode())"
    steps = [
        _bash(f"python3 -c '{fetch}' http://127.0.0.1:{port}/via-proxy"),
        _bash(f"python3 direct.py {port} 127.0.0.1 {' '.join(addresses)}"),
    ]
    try:
        code, events, _ = await _run(
            tmp_path / "home",
            project,
            steps,
            "--sandbox",
            extra_toml='\n[sandbox]\nnetwork = ["127.0.0.1"]\n',
        )
    finally:
        server.shutdown()
        server.server_close()
    assert code == 0
    proxied, direct = (_text(r) for r in _results(events))
    assert "hello through the proxy" in proxied
    assert "CONNECTED" not in direct
    assert direct.count("failed:") == 1 + len(addresses), direct
    assert seen == ["/via-proxy"]


def _left_in(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith(("shard-empty-", "shard-proxy-")))


async def test_a_sandboxed_run_and_a_forked_runtime_leave_nothing_in_the_temp_dir(
    tmp_path: Path, project: Path
):
    """The empty file laid over hidden files and the network proxy's folder are removed when the
    process leaves, though every Shard process leaves with ``os._exit`` (no ``atexit``): a spawned
    ``shard run`` and a runtime forked by the template alike. Each run left both in /tmp before."""
    # its own temp dir, short: the proxy's socket lives in it (a unix socket's path has 108 bytes)
    temp = Path(tempfile.mkdtemp(prefix="lv-", dir="/tmp"))
    try:
        await _leaves_nothing(tmp_path, project, temp)
    finally:
        shutil.rmtree(temp, ignore_errors=True)


async def _leaves_nothing(tmp_path: Path, project: Path, temp: Path) -> None:
    steps = [_bash("ls"), _bash("curl -s -o /dev/null http://127.0.0.1:9/ || true")]
    network = '\n[sandbox]\nnetwork = ["127.0.0.1"]\n'
    code, events, err = await _run(
        tmp_path / "home", project, steps, "--sandbox", env={"TMPDIR": str(temp)}, extra_toml=network
    )
    assert code == 0, (err, [e for e in events if e["type"] in ("tool_result", "error")])
    assert [e.get("sandboxed") for e in events if e["type"] == "tool_call"] == [True, True]
    assert _left_in(temp) == []
    home = tmp_path / "forked-home"
    write_scripted_home(home, [*steps, text_step("done")], extra_toml=network)
    agent = await AgentProcess.start(home, project, "--sandbox", "auto", env={"TMPDIR": str(temp)})
    await agent.handshake()
    await agent.send({"type": "prompt", "id": "p", "message": "go"})
    events = await agent.until(lambda m: m.get("type") == "turn_end")
    assert [e.get("sandboxed") for e in events if e["type"] == "tool_call"] == [True, True]
    assert _left_in(temp) != []  # made while it runs: the check below can fail
    assert await agent.finish() == 0
    assert _left_in(temp) == []


async def test_a_deep_temp_dir_still_gives_the_network_proxy_its_socket(tmp_path: Path, project: Path):
    """A unix socket's path holds 108 bytes: under a TMPDIR deeper than that leaves room for, the
    proxy's folder is made in /tmp instead, and a sandboxed command still reaches an allowed host
    (it failed with "AF_UNIX path too long")."""
    deep = tmp_path / ("d" * 80)
    deep.mkdir()
    steps = [_bash("curl -s -o /dev/null -w '%{http_code}' http://127.0.0.1:9/ ; echo ran")]
    code, events, err = await _run(
        tmp_path / "home",
        project,
        steps,
        "--sandbox",
        env={"TMPDIR": str(deep)},
        extra_toml='\n[sandbox]\nnetwork = ["127.0.0.1"]\n',
    )
    assert code == 0, err
    (result,) = _results(events)
    assert result["is_error"] is False, _text(result)
    assert "ran" in _text(result)
    assert _left_in(deep) == []
