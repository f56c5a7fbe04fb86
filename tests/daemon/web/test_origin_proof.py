"""The origin proof beside the session cookie at ``/bootstrap`` (issue 25 item 3), against a real
daemon over raw HTTP: enrollment answers it once, only its hash is kept, ``/bootstrap`` wants the one
of the session the cookie names, it survives a restart, and sessions enrolled before proofs existed
are ended by the store's migration with a line saying to enroll again."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from shard.daemon.web.auth import ENROLLED_BEFORE_PROOFS, NO_PROOF
from shard.daemon.web.store import MIGRATIONS
from shard.daemon.web.tickets import digest, new_secret
from shard.testing import DaemonProcess
from shard.testing.web import Browser, admin, code_of, http, post_enroll

pytestmark = pytest.mark.no_local_runtimes  # no test here starts a runtime


async def test_bootstrap_wants_the_proof_of_the_cookies_own_session(start_daemon):
    """The cookie alone, an empty or wrong proof, another browser's proof, or two proof headers:
    401 with a line saying to enroll again, and no ticket. The right pair: a ticket, and the answer
    does not carry the proof back.

    Covers: R4.1.0.7
    """
    daemon = await start_daemon()
    one = await Browser.enroll(daemon.port, daemon.socket)
    two = await Browser.enroll(daemon.port, daemon.socket)
    assert one.proof
    assert one.proof != two.proof
    assert one.proof not in one.cookie
    for proof in (None, "", "A" * 43, two.proof, one.proof[:-1], one.proof + "x"):
        reply = await one.bootstrap(proof=proof)
        assert reply.status == 401, proof
        assert reply.body.decode().strip() == NO_PROOF
    twice = await http(
        daemon.port,
        "POST",
        "/bootstrap",
        [f"Origin: {one.origin}", f"Cookie: {one.cookie}"] + [f"Shard-Browser-Proof: {one.proof}"] * 2,
    )
    assert twice.status == 401
    good = await one.bootstrap()
    assert good.status == 200
    assert one.proof.encode() not in good.body
    assert set(good.json()) == {"ticket", "expires_in", "protocol"}
    listed = await admin(daemon.socket, {"type": "web.sessions"})
    assert one.proof not in str(listed)
    assert digest(one.proof) not in str(listed)


async def test_the_proof_survives_a_restart_and_is_kept_only_as_its_hash(start_daemon, tmp_path):
    """A restarted daemon (same home, same port) still gives the enrolled browser a ticket for its
    cookie and proof, prints no enrollment link, and its store holds the proof's SHA-256 only.

    Covers: R4.1.0.1, R4.1.0.4
    """
    daemon = await start_daemon()
    browser = await Browser.enroll(daemon.port, daemon.socket)
    await daemon.stop()
    again = await DaemonProcess.start(daemon.home, "--port", str(daemon.port))  # the same home
    try:
        assert again.enrollment_link is None
        assert (await browser.bootstrap()).status == 200
        assert (await browser.bootstrap(proof=None)).status == 401
    finally:
        await again.kill()
    db = sqlite3.connect(tmp_path / "home" / "security" / "security.db")
    (row,) = db.execute("SELECT proof_sha256 FROM browser_sessions").fetchall()
    assert row == (digest(browser.proof),)
    raw = (tmp_path / "home" / "security" / "security.db").read_bytes()
    assert browser.proof.encode() not in raw


def write_v1_store(home: Path, token: str) -> None:
    """A security store as the Shard before proofs left it: schema 1, one live session."""
    folder = home / "security"
    folder.mkdir(parents=True, mode=0o700)
    db = sqlite3.connect(folder / "security.db")
    db.executescript(MIGRATIONS[0])
    db.execute("PRAGMA user_version = 1")
    db.execute("INSERT INTO principals VALUES ('prn-old', 1.0)")
    db.execute(
        "INSERT INTO browser_sessions VALUES ('bsess-old', 'prn-old', ?, 0, 'Old browser', 1.0, 1.0, NULL)",
        (digest(token),),
    )
    db.commit()
    db.close()
    (folder / "security.db").chmod(0o600)


async def test_a_session_enrolled_before_proofs_must_enroll_again(start_daemon, tmp_path):
    """Opening a schema-1 store revokes its sessions (they have no proof, so none could ever get a
    ticket again): the daemon prints a fresh enrollment link, ``web.sessions`` shows the session
    revoked, and its cookie at /bootstrap is 401 with the line that says why and what to do. The
    printed link then enrolls the browser again.

    Covers: R4.1.0.3
    """
    home = tmp_path / "home"
    token = new_secret()
    write_v1_store(home, token)
    daemon = await start_daemon()
    assert daemon.enrollment_link is not None  # no session left that can get a ticket
    (row,) = (await admin(daemon.socket, {"type": "web.sessions"}))["sessions"]
    assert (row["id"], row["revoked"] is not None) == ("bsess-old", True)
    old = Browser(daemon.port, f"shard_session={token}", f"http://127.0.0.1:{daemon.port}")
    for proof in (None, "A" * 43):
        reply = await old.bootstrap(proof=proof)
        assert reply.status == 401
        assert reply.body.decode().strip() == ENROLLED_BEFORE_PROOFS
    assert "shard web enroll" in ENROLLED_BEFORE_PROOFS
    db = sqlite3.connect(home / "security" / "security.db")
    assert db.execute("PRAGMA user_version").fetchone()[0] == 2
    reply = await post_enroll(daemon.port, code_of(daemon.enrollment_link), old.origin)
    assert (await Browser.enrolled(daemon.port, reply, old.origin).bootstrap()).status == 200
