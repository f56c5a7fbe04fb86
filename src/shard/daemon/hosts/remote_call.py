"""One ``shard hosts <action>`` on a host, over its connection: a JSON request on stdin, a JSON
answer on stdout (``{"ok": …}`` or ``{"error": …}``). What the workspaces' git and the file tree of an
agent on a host run there (``remote_git.py``, ``remote_files.py``). Blocking: a worker thread's."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from shard._hosts import HostConfig
from shard.daemon.hosts import ssh


class RemoteFailure(Exception):
    """ssh or the host's shard failed before answering: one line naming the host and the fix."""


def call(
    host: HostConfig, socket: Path, action: str, request: dict[str, Any], timeout: float
) -> dict[str, Any]:
    command = ssh.shard_line(host, ["hosts", action, "--home", host.home])
    try:
        done = subprocess.run(
            ssh.command_argv(host, socket, command),
            input=json.dumps(request).encode(),
            capture_output=True,
            timeout=timeout,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise RemoteFailure(f"host {host.name}: {exc}") from None
    try:
        answer = json.loads(done.stdout)
    except ValueError:
        raise RemoteFailure(
            ssh.explain(host, done.stderr.decode("utf-8", "replace"), done.returncode)
        ) from None
    if not isinstance(answer, dict):
        raise RemoteFailure(f"host {host.name}: its shard answered {type(answer).__name__}")
    return answer
