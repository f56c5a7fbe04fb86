"""The durable security store (PROTOCOL §4.1, R4.1.0.1 to R4.1.0.4): ``$SHARD_HOME/security/security.db``.

It holds who may use the web client — principals and their browser sessions — as SHA-256 hashes of
the session tokens and of their origin proofs, plus metadata (ids, times, the browser's User-Agent
as a label, whether the cookie was issued Secure, when it was revoked). No raw token, proof,
cookie, ticket or code is ever written here; tickets and enrollment codes are not stored at all
(``tickets.py``).

Owner-only, checked rather than repaired: the folder must be 0700 and each file in it 0600, all
owned by this user. Anything looser or foreign is refused at startup with a line saying what to fix
— a store another user could read or replace is not one to trust silently. (SHARD_HOME itself is
tightened by ``prepare_home``; a credential store that was opened up was opened up on purpose or by
an attacker, and either way the owner should look.) The store sits in its own folder so that
SQLite's journal files, created beside the database, fall under the same check.

The schema is versioned with ``PRAGMA user_version``; :data:`MIGRATIONS` takes any older store to
the current version in one transaction, and a store from a newer Shard is refused, not guessed at.
"""

from __future__ import annotations

import os
import secrets
import sqlite3
import stat
from dataclasses import dataclass, field
from pathlib import Path

from shard._home import PRIVATE_DIR, PRIVATE_FILE, open_private, private_dirs

FOLDER = "security"
DATABASE = "security.db"

MIGRATIONS: tuple[str, ...] = (
    # 1: principals and their browser sessions
    """
    CREATE TABLE principals (id TEXT PRIMARY KEY, created REAL NOT NULL);
    CREATE TABLE browser_sessions (
        id TEXT PRIMARY KEY,
        principal TEXT NOT NULL REFERENCES principals(id),
        token_sha256 TEXT NOT NULL UNIQUE,
        secure INTEGER NOT NULL,
        label TEXT NOT NULL,
        created REAL NOT NULL,
        last_seen REAL NOT NULL,
        revoked REAL
    );
    """,
    # 2: the origin proof each browser keeps in its localStorage beside the cookie (issue 25). A
    # session enrolled before has none, so it can never get a ticket again: it is revoked here, and
    # a daemon that finds no live session left prints a fresh enrollment link at startup.
    """
    ALTER TABLE browser_sessions ADD COLUMN proof_sha256 TEXT;
    UPDATE browser_sessions SET revoked = (julianday('now') - 2440587.5) * 86400.0
        WHERE revoked IS NULL AND proof_sha256 IS NULL;
    """,
)
SCHEMA_VERSION = len(MIGRATIONS)


class StoreError(Exception):
    """The store cannot be used safely; ``message`` is one line for the owner."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


@dataclass(frozen=True, slots=True)
class BrowserSession:
    id: str
    principal: str
    secure: bool
    label: str
    created: float
    last_seen: float
    revoked: float | None
    proof_sha256: str | None = field(default=None, repr=False)  # None: enrolled before proofs


def check_private(folder: Path) -> None:
    """Refuse (StoreError) a store folder, or a file in it, that is not this user's alone."""
    try:
        st = os.lstat(folder)
    except FileNotFoundError:
        return
    if not stat.S_ISDIR(st.st_mode):
        raise StoreError(f"the security store {folder} is not a directory")
    _owned(folder, st, PRIVATE_DIR, "chmod 700")
    for entry in os.scandir(folder):
        est = entry.stat(follow_symlinks=False)
        if not stat.S_ISREG(est.st_mode):
            raise StoreError(f"the security store holds {entry.path}, which is not a regular file")
        _owned(Path(entry.path), est, PRIVATE_FILE, "chmod 600")


def _owned(path: Path, st: os.stat_result, mode: int, fix: str) -> None:
    if st.st_uid != os.geteuid():
        raise StoreError(
            f"the security store {path} belongs to another user (uid {st.st_uid}); refusing to use it"
        )
    if stat.S_IMODE(st.st_mode) & 0o077:
        raise StoreError(
            f"the security store {path} is open to group or others ({stat.S_IMODE(st.st_mode):04o}); "
            f"refusing to use it — check nobody else read it, then: {fix} {path}"
        )


class SecurityStore:
    def __init__(self, home: Path) -> None:
        folder = home / FOLDER
        check_private(folder)
        private_dirs(folder)
        path = folder / DATABASE
        try:
            os.close(open_private(path, os.O_RDWR))  # 0600 before SQLite opens it (and its journal)
            self._db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
            self._migrate(path)
        except sqlite3.Error as exc:
            raise StoreError(f"the security store {path} cannot be used: {exc}") from None

    def _migrate(self, path: Path) -> None:
        version = int(self._db.execute("PRAGMA user_version").fetchone()[0])
        if version > SCHEMA_VERSION:
            raise StoreError(
                f"the security store {path} has schema version {version}, newer than this Shard "
                f"knows ({SCHEMA_VERSION}); upgrade Shard"
            )
        if version == SCHEMA_VERSION:
            return
        self._db.execute("BEGIN IMMEDIATE")
        try:
            for script in MIGRATIONS[version:]:
                for statement in filter(str.strip, script.split(";")):
                    self._db.execute(statement)
            self._db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
            self._db.execute("COMMIT")
        except BaseException:
            self._db.execute("ROLLBACK")
            raise

    def enroll(
        self, token_sha256: str, proof_sha256: str, *, secure: bool, label: str, now: float
    ) -> BrowserSession:
        """A new principal and its browser session, in one transaction."""
        principal = "prn-" + secrets.token_hex(8)
        session = BrowserSession(
            "bsess-" + secrets.token_hex(8), principal, secure, label, now, now, None, proof_sha256
        )
        with self._db:
            self._db.execute("BEGIN IMMEDIATE")
            self._db.execute("INSERT INTO principals VALUES (?, ?)", (principal, now))
            self._db.execute(
                "INSERT INTO browser_sessions VALUES (?, ?, ?, ?, ?, ?, ?, NULL, ?)",
                (session.id, principal, token_sha256, int(secure), label, now, now, proof_sha256),
            )
        return session

    def by_token(self, token_sha256: str) -> BrowserSession | None:
        """The session, live or revoked, whose token hashes to ``token_sha256``."""
        return self._one("token_sha256 = ?", token_sha256)

    def get(self, session_id: str) -> BrowserSession | None:
        return self._one("id = ?", session_id)

    def sessions(self) -> list[BrowserSession]:
        rows = self._db.execute(f"SELECT {_COLUMNS} FROM browser_sessions ORDER BY created").fetchall()
        return [_session(row) for row in rows]

    def any_live(self) -> bool:
        """Whether some browser can still get a ticket (then no link is printed at startup)."""
        return self._db.execute("SELECT 1 FROM browser_sessions WHERE revoked IS NULL").fetchone() is not None

    def touch(self, session_id: str, now: float) -> None:
        with self._db:
            self._db.execute("UPDATE browser_sessions SET last_seen = ? WHERE id = ?", (now, session_id))

    def revoke(self, session_id: str, now: float) -> bool:
        """Revoke a live session; False when there is no such live session."""
        with self._db:
            cursor = self._db.execute(
                "UPDATE browser_sessions SET revoked = ? WHERE id = ? AND revoked IS NULL", (now, session_id)
            )
        return cursor.rowcount == 1

    def close(self) -> None:
        self._db.close()

    def _one(self, where: str, value: str) -> BrowserSession | None:
        row = self._db.execute(f"SELECT {_COLUMNS} FROM browser_sessions WHERE {where}", (value,)).fetchone()
        return None if row is None else _session(row)


_COLUMNS = "id, principal, secure, label, created, last_seen, revoked, proof_sha256"


def _session(row: tuple[object, ...]) -> BrowserSession:
    sid, principal, secure, label, created, last_seen, revoked, proof = row
    return BrowserSession(
        str(sid),
        str(principal),
        bool(secure),
        str(label),
        float(str(created)),
        float(str(last_seen)),
        None if revoked is None else float(str(revoked)),
        None if proof is None else str(proof),
    )
