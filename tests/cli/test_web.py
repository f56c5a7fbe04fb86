"""``shard web enroll|sessions|revoke`` against a real daemon, and ``shard daemon`` refusing unsafe
remote flags at startup (PROTOCOL §4.1.2) — the real commands, in subprocesses."""

from __future__ import annotations

import asyncio
import subprocess
from pathlib import Path

import pytest

from shard.testing import DaemonProcess, shard_command
from shard.testing.web import Browser, code_of, post_enroll

pytestmark = pytest.mark.no_local_runtimes  # no test here starts a runtime


async def shard(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The real command, run off the event loop (the daemon's output keeps draining meanwhile)."""
    argv = shard_command(*args, "--home", str(home))
    return await asyncio.to_thread(subprocess.run, argv, capture_output=True, text=True, timeout=30)


async def test_web_enroll_sessions_revoke(tmp_path):
    """enroll prints a fresh single-use link that enrolls a browser; sessions lists it (active, with
    its browser label); revoke ID revokes it (its cookie then gets no ticket) and a second revoke, or
    an unknown id, is one line on stderr and exit 1.

    Covers: R4.1.2.25
    """
    home = tmp_path / "home"
    daemon = await DaemonProcess.start(home)
    try:
        assert "no browser is enrolled" in (await shard(home, "web", "sessions")).stdout
        enrolled = await shard(home, "web", "enroll")
        assert enrolled.returncode == 0, enrolled.stderr
        link = enrolled.stdout.split()[-1]
        assert link.startswith(f"http://127.0.0.1:{daemon.port}/enroll#code=")
        origin = f"http://127.0.0.1:{daemon.port}"
        reply = await post_enroll(daemon.port, code_of(link), origin, extra=["User-Agent: Firefox/140"])
        assert reply.status == 200
        session_id = reply.json()["session"]
        listed = await shard(home, "web", "sessions")
        assert listed.returncode == 0
        (row,) = [line for line in listed.stdout.splitlines() if session_id in line]
        assert "active" in row
        assert "Firefox/140" in row
        browser = Browser.enrolled(daemon.port, reply, origin)
        assert (await browser.bootstrap()).status == 200
        revoked = await shard(home, "web", "revoke", session_id)
        assert (revoked.returncode, revoked.stdout.strip()) == (0, f"revoked {session_id}")
        assert (await browser.bootstrap()).status == 401
        assert "revoked" in (await shard(home, "web", "sessions")).stdout
        for target in (session_id, "bsess-nope"):
            again = await shard(home, "web", "revoke", target)
            assert again.returncode == 1
            assert again.stderr.startswith("shard web: ")
            assert len(again.stderr.splitlines()) == 1
    finally:
        await daemon.stop()
    down = await shard(home, "web", "enroll")
    assert down.returncode == 1
    assert "no daemon is running" in down.stderr
    assert "Traceback" not in down.stderr


@pytest.mark.parametrize(
    ("flags", "named"),
    [
        (("--web-host", "0.0.0.0", "--public-host", "a.example:80", "--allowed-origin", "http://a.example"),
         "--allow-insecure-remote"),
        (("--web-host", "0.0.0.0", "--allow-insecure-remote"), "--public-host"),
        (("--trust-proxy", "loopback", "--public-host", "a.example:443"), "--allowed-origin"),
        (("--trust-proxy", "loopback", "--allowed-origin", "https://a.example"), "--public-host"),
        (("--allowed-origin", "http://evil.example"), "--allowed-origin"),
        (("--trust-proxy", "10.0.0.5", "--public-host", "a.example:443", "--allowed-origin",
          "https://a.example"), "--trust-proxy 10.0.0.5"),
        (("--web-host", "0.0.0.0", "--trust-proxy", "2001:db8::1", "--public-host", "a.example:443",
          "--allowed-origin", "https://a.example", "--allow-insecure-remote"), "--trust-proxy 2001:db8::1"),
    ],
)  # fmt: skip
async def test_unsafe_remote_flags_refuse_to_start(tmp_path, flags, named):
    """Each unsafe combination stops the daemon before it listens: exit 1, one line naming the flag,
    no traceback, no daemon.json, no security store written — among them a --trust-proxy upstream
    that can never connect to the bind address (a remote one of the loopback bind, an IPv6 one of
    an IPv4 bind).

    Covers: R4.1.2.1, R4.1.2.13, R4.1.2.14, R4.1.2.19
    """
    home = tmp_path / "home"
    proc = await asyncio.create_subprocess_exec(
        *shard_command("daemon", "--home", str(home), "--port", "0", *flags),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(proc.communicate(), 30)
    assert proc.returncode == 1
    assert out == b""
    (line,) = err.decode().splitlines()
    assert line.startswith("shard daemon: refusing to start: ")
    assert named in line
    assert not (home / "daemon.json").exists()
    assert not (home / "security").exists()
