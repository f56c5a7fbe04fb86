"""Helpers for the security tests: real ``shard`` commands under a chosen umask, and the modes of
everything under a SHARD_HOME."""

from __future__ import annotations

import json
import os
import stat
import subprocess
from pathlib import Path

from shard.testing import shard_command
from shard.testing.agent_process import under_umask

LOOSE_UMASK = 0o022  # the common default: what a file gets when nobody asks for better


def run_shard(*args: str, home: Path, cwd: Path, stdin: bytes = b"") -> subprocess.CompletedProcess[bytes]:
    """One ``shard`` command to completion, under umask 022."""
    return subprocess.run(
        under_umask(shard_command(*args), LOOSE_UMASK),
        input=stdin,
        capture_output=True,
        cwd=cwd,
        env={**os.environ, "SHARD_HOME": str(home)},
        timeout=60,
        check=False,
    )


def too_open(home: Path, *, users: tuple[str, ...] = ()) -> dict[str, str]:
    """Every entry under ``home`` (and ``home`` itself) that is not private — directories other than
    0700, files and sockets other than 0600 — as ``{relative path: mode}``. ``users`` names the
    user's own files (config.toml, a script) that Shard reads but never writes."""
    found: dict[str, str] = {}
    for path in [home, *sorted(home.rglob("*"))]:
        rel = str(path.relative_to(home)) or "."
        if rel in users:
            continue
        st = path.lstat()
        mode = stat.S_IMODE(st.st_mode)
        want = 0o700 if stat.S_ISDIR(st.st_mode) else 0o600
        if mode != want:
            found[rel] = oct(mode)
    return found


def names(home: Path) -> set[str]:
    """The file names under ``home`` (not directories), to show which kinds of files a test covered."""
    return {p.name for p in home.rglob("*") if not p.is_dir()}


def other_uid() -> int:
    """A uid that is not ours (root's, or nobody's when we are root)."""
    return 65534 if os.geteuid() == 0 else 0


def bash_call_sse(command: str) -> str:
    """An OpenAI-compatible stream in which the model calls ``bash`` with ``command``."""
    args = json.dumps({"command": command})
    chunks = [
        {"choices": [{"index": 0, "delta": {"role": "assistant", "content": None}, "finish_reason": None}]},
        {
            "choices": [
                {
                    "index": 0,
                    "delta": {
                        "tool_calls": [
                            {
                                "index": 0,
                                "id": "call_walk",
                                "type": "function",
                                "function": {"name": "bash", "arguments": args},
                            }
                        ]
                    },
                    "finish_reason": None,
                }
            ]
        },
        {"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]},
    ]
    return "".join(f"data: {json.dumps({'object': 'chat.completion.chunk', **c})}\n\n" for c in chunks) + (
        "data: [DONE]\n\n"
    )
