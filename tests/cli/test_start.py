"""``shard.cli.start``: ``shard daemon`` starts its warm template before the command line's parser
(issue 31), and ``main_daemon`` takes it only when the parser agrees."""

from __future__ import annotations

import os
import socket
from pathlib import Path

import pytest

from shard.cli.start import daemon_home
from shard.daemon import early_template, template_spawn


@pytest.mark.parametrize(
    ("argv", "found"),
    [
        (["daemon"], (None,)),
        (["daemon", "--port", "0", "--home", "/h", "--max-runtimes", "5"], ("/h",)),
        (["daemon", "--home=/h"], ("/h",)),
        (["daemon", "--cold-start"], None),
        (["daemon", "--home", "/h", "--cold-start"], None),
        (["daemon", "--help"], None),
        (["daemon", "-h"], None),
        (["daemon", "--ho", "/h"], None),  # argparse would take it for --home
        (["daemon", "--cold"], None),  # and this for --cold-start
        (["daemon", "--home"], None),
        (["run", "daemon"], None),
        (["--home", "/h", "daemon"], None),
        ([], None),
    ],
)
def test_only_a_plain_warm_daemon_command_line_starts_a_template_early(argv, found) -> None:
    assert daemon_home(argv) == found


def test_the_daemon_takes_the_early_template_only_for_its_home_and_a_warm_start(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Another home (the parser read the line differently) or ``--cold-start``: it is let go (its
    socket closed: it exits), never served from; taken, it is handed over once."""
    for home, cold, taken in [
        (tmp_path, False, True),
        (tmp_path / "other", False, False),
        (tmp_path, True, False),
    ]:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        theirs.settimeout(5)
        # a pid that is no child of this process: its reaper thread ends at once
        monkeypatch.setattr(template_spawn, "_started", (str(tmp_path), (os.getpid(), ours.detach())))
        got = early_template.take_started(home, cold_start=cold)
        if taken:
            assert got is not None
            (early,) = got
            assert early is not None
            early.sock.send(b"served")
            assert theirs.recv(16) == b"served"
            early.close()
        else:
            assert got is None
            assert theirs.recv(16) == b"", "let go: the end of its socket"
        theirs.close()
        assert early_template.take_started(tmp_path, cold_start=False) is None
    monkeypatch.setattr(template_spawn, "_started", (str(tmp_path), None))  # it could not start
    assert early_template.take_started(tmp_path, cold_start=False) == (None,)
