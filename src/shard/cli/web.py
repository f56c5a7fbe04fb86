"""``shard web enroll|sessions|revoke``: browser access, administered over the running daemon's unix
socket (the owner's trusted local channel, PROTOCOL §4.2) with the daemon-local ``web.*`` commands.

* ``shard web enroll`` — a new single-use enrollment link (10 minutes), printed on stdout only.
* ``shard web sessions`` — the enrolled browser sessions: id, state, last use, the browser.
* ``shard web revoke ID`` — revoke one; the daemon closes that session's open WebSockets.

Every mistake (no daemon running, an unknown session) is one line on stderr and exit status 1.
"""

from __future__ import annotations

import argparse
import contextlib
import socket
import sys
import time
from pathlib import Path
from typing import Any

import orjson

from shard.agent.config.settings import shard_home
from shard.protocol.correlator import Correlator, Refused

_TIMEOUT = 10.0


class _Failed(Exception):
    pass


def main_web(args: argparse.Namespace) -> int:
    home = shard_home(args.home)
    try:
        if args.action == "enroll":
            data = request(home, {"type": "web.enroll"})
            print(f"Open this link in the browser to enroll, within {data['expires_in'] / 60:g} minutes:")
            print(data["link"])
            return 0
        if args.action == "sessions":
            _print_sessions(request(home, {"type": "web.sessions"})["sessions"])
            return 0
        request(home, {"type": "web.revoke", "session_id": args.session_id})
        print(f"revoked {args.session_id}")
        return 0
    except _Failed as exc:
        print(f"shard web: {exc}", file=sys.stderr)
        return 1


def request(home: Path, command: dict[str, Any]) -> dict[str, Any]:
    """Send one ``web.*`` command to the daemon serving ``home``; its response's data."""
    path = home / "daemon.sock"
    calls = Correlator(prefix="web-")
    message, answer = calls.request(command)
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.settimeout(_TIMEOUT)
            sock.connect(str(path))
            reader = sock.makefile("rb")
            reader.readline()  # the daemon's hello
            sock.sendall(orjson.dumps(message) + b"\n")
            while not answer.done():
                line = reader.readline()
                if not line:
                    raise _Failed("the daemon closed the connection without answering")
                incoming = orjson.loads(line)
                if isinstance(incoming, dict):
                    calls.feed(incoming)
        return answer.result()
    except (FileNotFoundError, ConnectionRefusedError):
        raise _Failed(f"no daemon is running for {home} (start one with: shard daemon)") from None
    except (OSError, orjson.JSONDecodeError) as exc:
        raise _Failed(f"cannot talk to the daemon at {path}: {exc}") from None
    except Refused as refused:
        raise _Failed(refused.message or "the daemon refused") from None


def _print_sessions(rows: list[dict[str, Any]]) -> None:
    if not rows:
        print("no browser is enrolled (shard web enroll prints a link)")
        return
    for row in rows:
        state = "revoked" if row.get("revoked") else "active"
        with contextlib.suppress(TypeError, ValueError, OverflowError):
            seen = time.strftime("%Y-%m-%d %H:%M", time.localtime(float(row["last_seen"])))
        print(f"{row['id']}  {state:7}  last used {seen}  {row.get('label', '')}")
