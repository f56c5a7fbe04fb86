"""``shard hosts fs`` — run on a host by its daemon over ssh (``shard.daemon.hosts.remote_files``):
``fs.list`` or ``fs.read`` of an agent's folder on this machine, JSON in and out, through the same
``files/tree.py`` the daemon runs at home, hiding this machine's SHARD_HOME and credential places."""

from __future__ import annotations

import json
import os
import sys
from typing import Any

from shard._secret_places import HOME_SECRETS
from shard.agent.config.settings import shard_home
from shard.daemon.files import tree
from shard.daemon.files.paths import parts_of
from shard.protocol.errors import ShardError


def main_fs(home_flag: str | None) -> int:
    try:
        request = json.loads(sys.stdin.buffer.read())
        home = os.path.expanduser("~")
        hidden = (str(shard_home(home_flag)), *(os.path.join(home, p) for p in HOME_SECRETS))
        cwd, parts = str(request["cwd"]), parts_of(str(request.get("path") or ""))
        if request["op"] == "list":
            result = tree.list_folder(cwd, parts, hidden)
        elif request["op"] == "read":
            result = tree.read_file(cwd, parts, hidden)
        else:
            raise ValueError(f"unknown operation {request['op']!r}")
        answer: dict[str, Any] = {"ok": result.model_dump(mode="json", exclude_none=True)}
    except ShardError as exc:
        answer = {"error": exc.message, "code": exc.code.value}
    except (ValueError, KeyError, TypeError) as exc:
        answer = {"error": f"a malformed request: {exc}"}
    sys.stdout.write(json.dumps(answer))
    return 0
