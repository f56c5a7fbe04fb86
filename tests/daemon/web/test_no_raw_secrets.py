"""After a full flow — the startup link, ``shard web enroll``, enrollment, tickets, a WebSocket
session, a revocation — no raw secret is anywhere under SHARD_HOME or in what the daemon logged: only
hashes are kept, and the one raw code the daemon ever prints is the startup link, on its one line."""

from __future__ import annotations

import asyncio
import os
import sqlite3
import subprocess
from pathlib import Path

import pytest

from shard.daemon.web.tickets import digest
from shard.testing import shard_command
from shard.testing.web import Browser, code_of, http, post_enroll

pytestmark = pytest.mark.no_local_runtimes  # no test here starts a runtime


def every_file(home: Path) -> dict[Path, bytes]:
    out = {}
    for root, _, files in os.walk(home):
        for name in files:
            path = Path(root) / name
            try:
                out[path] = path.read_bytes()
            except OSError:  # the socket
                continue
    return out


async def test_no_raw_secret_on_disk_or_in_the_log(start_daemon, tmp_path):
    """Cookies, origin proofs, tickets and codes: none on disk in clear (only hashes), none logged.

    Covers: R4.1.0.4, R4.1.0.5
    """
    daemon = await start_daemon()
    home = tmp_path / "home"
    origin = f"http://127.0.0.1:{daemon.port}"
    startup_code = code_of(daemon.enrollment_link)
    first = await post_enroll(daemon.port, startup_code, origin)
    assert first.status == 200
    cli = await asyncio.to_thread(
        subprocess.run,
        shard_command("web", "enroll", "--home", str(home)),
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert cli.returncode == 0, cli.stderr
    cli_code = code_of(cli.stdout.split()[-1])
    second = await post_enroll(daemon.port, cli_code, origin)
    assert second.status == 200
    cookies = [r.header("Set-Cookie")[0].split(";")[0].split("=", 1)[1] for r in (first, second)]
    proofs = [r.json()["proof"] for r in (first, second)]
    browser = Browser.enrolled(daemon.port, first, origin)
    tickets = [await browser.ticket() for _ in range(3)]
    ws = await daemon.ws()  # the test kit's own browser: a third enrollment, its own ticket
    await ws.close()
    await http(daemon.port, "POST", "/bootstrap", [f"Origin: {origin}", "Cookie: shard_session=" + "x" * 43])
    wrong = "W" * 43
    await post_enroll(daemon.port, wrong, origin)  # a wrong code is not logged either
    revoke = shard_command("web", "revoke", second.json()["session"], "--home", str(home))
    await asyncio.to_thread(subprocess.run, revoke, check=True, timeout=30)
    await daemon.stop()

    secrets = {"startup code": startup_code, "cli code": cli_code, "wrong code": wrong}
    secrets |= {f"cookie {i}": c for i, c in enumerate(cookies)}
    secrets |= {f"proof {i}": p for i, p in enumerate(proofs)}
    secrets |= {f"ticket {i}": t for i, t in enumerate(tickets)}
    files = every_file(home)
    assert any(p.name == "security.db" for p in files)
    for label, secret in secrets.items():
        for path, data in files.items():
            assert secret.encode() not in data, f"{label} in {path}"
    log = "\n".join(daemon.output)
    for label, secret in secrets.items():
        if label != "startup code":
            assert secret not in log, label
    # the startup code was printed once, on its link line, as the delivery to the owner
    assert [line for line in daemon.output if startup_code in line] == [
        line for line in daemon.output if "no browser is enrolled" in line
    ]
    assert len([line for line in daemon.output if startup_code in line]) == 1
    # what is kept is the hash
    db = sqlite3.connect(home / "security" / "security.db")
    stored = {row[0] for row in db.execute("SELECT token_sha256 FROM browser_sessions")}
    assert {digest(c) for c in cookies} <= stored
    kept = {row[0] for row in db.execute("SELECT proof_sha256 FROM browser_sessions")}
    assert {digest(p) for p in proofs} <= kept
