"""``shard._secrets``: keys leave the environment and the /proc view of it, and reach a child by pipe."""

from __future__ import annotations

import os
import subprocess
import sys

VALUE = "sk-unit-" + "7" * 24


def _python(code: str, env: dict[str, str], **kw) -> str:
    out = subprocess.run(
        [sys.executable, "-c", code],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        check=True,
        **kw,
    )
    return out.stdout.strip()


def test_capture_removes_the_key_from_the_environment_and_from_proc():
    """Checks that after capture the key is in memory only: not in os.environ, not in what
    /proc/self/environ shows, and not in a child's environment; other variables are untouched."""
    code = (
        "import os, subprocess\n"
        "from shard import _secrets\n"
        "_secrets.capture(['MY_KEY'])\n"
        "proc = open('/proc/self/environ', 'rb').read()\n"
        "child = subprocess.run(['env'], capture_output=True, text=True).stdout\n"
        f"print(proc.count(b'{VALUE}'), 'MY_KEY' in os.environ, _secrets.get('MY_KEY') == '{VALUE}',"
        f" '{VALUE}' in child, b'KEEP=me' in proc)\n"
    )
    assert _python(code, {"MY_KEY": VALUE, "KEEP": "me"}) == "0 False True False True"


def test_handoff_reaches_a_child_only_through_the_pipe():
    """Checks that a child started with the handoff pipe gets the key, and that neither its
    environment nor its /proc view of it holds the key or the pipe's variable after it read it."""
    child = (
        "import os\n"
        "from shard import _secrets\n"
        "_secrets.inherit()\n"
        "proc = open('/proc/self/environ', 'rb').read()\n"
        f"print(_secrets.get('MY_KEY') == '{VALUE}', b'{VALUE}' in proc, b'SHARD_SECRETS_FD' in proc,"
        " 'SHARD_SECRETS_FD' in os.environ)\n"
    )
    parent = (
        "import os, subprocess, sys\n"
        "from shard import _secrets\n"
        "_secrets.capture(['MY_KEY'])\n"
        "fd = _secrets.handoff()\n"
        "env = {**os.environ, _secrets.FD_VARIABLE: str(fd)}\n"
        f"out = subprocess.run([sys.executable, '-c', {child!r}], env=env, pass_fds=(fd,),"
        " capture_output=True, text=True).stdout\n"
        "print(out.strip())\n"
    )
    assert _python(parent, {"MY_KEY": VALUE}) == "True False False False"


def test_nothing_to_hand_over_is_no_pipe():
    """Checks that a process without keys opens no pipe for its children."""
    assert _python("from shard import _secrets; print(_secrets.handoff())", {}) == "None"


def test_a_process_holding_keys_is_not_dumpable_and_its_children_are():
    """Checks that capturing a key makes the process non-dumpable (its memory closed to the user's
    other processes) while a child it runs is dumpable as usual."""
    code = (
        "import ctypes, subprocess, sys\n"
        "from shard import _secrets\n"
        "libc = ctypes.CDLL(None)\n"
        "before = libc.prctl(3, 0, 0, 0, 0)\n"
        "_secrets.capture(['MY_KEY'])\n"
        "probe = 'import ctypes; print(ctypes.CDLL(None).prctl(3, 0, 0, 0, 0))'\n"
        "child = subprocess.run([sys.executable, '-c', probe], capture_output=True, text=True)\n"
        "child = child.stdout.strip()\n"
        "print(before, libc.prctl(3, 0, 0, 0, 0), child)\n"
    )
    assert _python(code, {"MY_KEY": VALUE}) == "1 0 1"


def test_a_stream_handoff_leaves_the_protocol_after_it_unread_and_seals_the_process():
    """A remote runtime's handoff on stdin: the keys land in memory (not the environment), the
    other members come back, the first protocol line after it is still on stdin, and the process
    is non-dumpable once it holds a key."""
    from shard import _secrets

    _secrets._store.clear()
    _secrets._store["FAR_KEY"] = VALUE
    try:
        handoff = _secrets.handoff_bytes({"config": "x = 1", "system_prompt": "be brief"})
    finally:
        _secrets._store.clear()
    code = (
        "import os, sys\n"
        "from shard import _secrets\n"
        "rest = _secrets.inherit_stream(0)\n"
        "print(_secrets.get('FAR_KEY') == " + repr(VALUE) + ", 'FAR_KEY' in os.environ)\n"
        "print(sorted(rest.items()))\n"
        "print(open('/proc/self/status').read().count('TracerPid'), sys.stdin.readline().strip())\n"
        "import ctypes; print(ctypes.CDLL(None).prctl(3, 0, 0, 0, 0))\n"  # PR_GET_DUMPABLE
    )
    out = _python(code, {}, input=(handoff + b'{"type":"prompt"}\n').decode()).splitlines()
    assert out[0] == "True False"
    assert out[1] == "[('config', 'x = 1'), ('system_prompt', 'be brief')]"
    assert out[2] == '1 {"type":"prompt"}'
    assert out[3] == "0"


def test_a_handoff_without_keys_carries_none():
    """A host that uses its own configuration is sent no key at all."""
    from shard import _secrets

    _secrets._store["FAR_KEY"] = VALUE
    try:
        data = _secrets.handoff_bytes({"config": None}, keys=False)
    finally:
        _secrets._store.pop("FAR_KEY", None)
    assert VALUE.encode() not in data
    assert b'"keys"' not in data
