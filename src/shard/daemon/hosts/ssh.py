"""The ``ssh`` command lines and the meaning of their failures (policy only: no process is run here).

Every connection is made with the user's own ssh configuration, agent and known hosts, and with
three settings forced on the command line, where they beat any configuration file:

* ``StrictHostKeyChecking=yes`` — an unknown or changed host key fails the connection; a key is
  never accepted silently (``shard hosts check`` says how to accept one);
* ``BatchMode=yes`` — the daemon has no terminal: a password or passphrase prompt fails at once;
* ``ControlMaster``/``ControlPath`` — one master connection per host carries every runtime there
  (a second runtime costs no handshake); the daemon owns the master.
"""

from __future__ import annotations

import hashlib
import os
import posixpath
import shlex
from pathlib import Path

from shard._hosts import SETUP_DIR, HostConfig
from shard._sockets import SOCKET_PATH_MAX, socket_temp_dir
from shard.protocol.errors import ErrorCode, ShardError, shown

_STRICT = ("-o", "StrictHostKeyChecking=yes", "-o", "BatchMode=yes")


# What a socket adds to its folder's path: "/", control_path's 16-hex tag (and "-N.sock"), and the
# random suffix ssh appends while it binds
_SOCKET_ROOM = 1 + 16 + 24


def control_dir(home: Path) -> Path:
    """Where the masters' sockets live: under SHARD_HOME when its path is short enough for a unix
    socket, else a private folder in the temp dir (named after SHARD_HOME, mode 0700; in /tmp when the
    temp dir is too deep for a socket too)."""
    here = home / "ssh"
    if len(str(here)) + _SOCKET_ROOM <= SOCKET_PATH_MAX:
        return here
    tag = hashlib.sha256(str(home).encode()).hexdigest()[:12]
    name = f"shard-{os.getuid()}-{tag}"
    return Path(socket_temp_dir(1 + len(name) + _SOCKET_ROOM)) / name


def control_path(folder: Path, host: HostConfig, index: int = 0) -> Path:
    """The socket of the host's ``index``-th connection (another opens when one carries ``sessions``)."""
    # Named after everything that picks the connection, so an edited entry gets a new master.
    tag = hashlib.sha256(repr((host.ssh, host.port, host.ssh_config)).encode()).hexdigest()[:16]
    return folder / (f"{tag}.sock" if index == 0 else f"{tag}-{index}.sock")


def _target(host: HostConfig) -> list[str]:
    words: list[str] = []
    if host.ssh_config is not None:
        words += ["-F", os.path.expanduser(host.ssh_config)]
    if host.port is not None:
        words += ["-p", str(host.port)]
    return words


def master_argv(host: HostConfig, socket: Path) -> list[str]:
    """The master: authenticates, then holds the connection for the runtimes (no command of its own)."""
    return [
        "ssh",
        *_STRICT,
        "-M",
        "-N",
        "-S",
        str(socket),
        "-o",
        "ControlPersist=no",
        "-o",
        "ConnectTimeout=15",
        "-o",
        "ServerAliveInterval=15",
        "-o",
        "ServerAliveCountMax=3",
        *_target(host),
        "--",
        host.ssh,
    ]


def command_argv(
    host: HostConfig, socket: Path, remote: str, forward: tuple[str, Path] | None = None
) -> list[str]:
    """One command over the master (a runtime); ``remote`` is a shell command line for the host's
    shell; ``forward``: (the host's socket path, the local one) — a runtime's link to the daemon."""
    forwarding = ["-R", f"{forward[0]}:{forward[1]}"] if forward is not None else []
    return [
        "ssh",
        *_STRICT,
        "-S",
        str(socket),
        "-o",
        "ControlMaster=no",
        "-T",
        *forwarding,
        *_target(host),
        "--",
        host.ssh,
        remote,
    ]


def direct_argv(host: HostConfig, remote: str) -> list[str]:
    """One command on its own connection (``shard hosts``: no daemon, no master to share)."""
    return ["ssh", *_STRICT, "-o", "ConnectTimeout=15", "-T", *_target(host), "--", host.ssh, remote]


def remote_word(value: str) -> str:
    """One word for the host's shell: quoted, with a leading ``~/`` left to expand to its $HOME."""
    if value == "~":
        return '"$HOME"'
    if value.startswith("~/"):
        return '"$HOME"/' + shlex.quote(value[2:])
    return shlex.quote(value)


def install_dir(host: HostConfig) -> str:
    """Where ``shard hosts setup`` installs Shard on the host (a shell word): in its SHARD_HOME."""
    return remote_word(f"{host.home.rstrip('/')}/{SETUP_DIR}")


def shard_command(host: HostConfig) -> tuple[str, str]:
    """How shard is started on the host: a shell prelude and the command's words. The entry's
    ``shard``, else what ``shard hosts setup`` installed, else ``shard`` on the host's PATH."""
    if host.shard is not None:
        return "", " ".join(remote_word(word) for word in shlex.split(host.shard))
    return f'S={install_dir(host)}/venv/bin/shard; [ -x "$S" ] || S=shard; ', '"$S"'


def runtime_command(host: HostConfig, args: list[str], link: str | None = None) -> str:
    """``shard agent --stdio --handoff …`` on the host: its keys, config and instructions come on
    stdin (never its command line, its environment or its disk). ``link``: the host's end of the
    runtime's own socket to the daemon (its subagent tools)."""
    env = f"SHARD_DAEMON_SOCKET={remote_word(link)}; export SHARD_DAEMON_SOCKET; " if link else ""
    return shard_line(host, ["agent", "--stdio", "--handoff", "--home", host.home, *args], env)


def shard_line(host: HostConfig, args: list[str], env: str = "") -> str:
    """The host's shell command that runs ``shard ARGS`` there (each word quoted), from ``/``."""
    prelude, start = shard_command(host)
    return f"cd / && {env}{prelude}exec {start} {' '.join(remote_word(a) for a in args)}"


# --- what a failure means ------------------------------------------------------------------------


def explain(host: HostConfig, stderr: str, code: int | None = None) -> str:
    """One line naming the host, what went wrong and the fix, from ssh's (or the runtime's) stderr."""
    text = stderr.strip()
    low = text.lower()
    where = f"host {host.name} ({host.ssh})"
    if "remote host identification has changed" in low:
        return (
            f"{where}: its host key has CHANGED since it was accepted — possibly an attack; "
            f"if the change is expected, remove the old key with `ssh-keygen -R` and accept the new one"
        )
    if "host key verification failed" in low or "host key is known" in low:
        return (
            f"{where}: its host key is not in your known hosts, and a key is never accepted silently: "
            f"check its fingerprint and accept it with `ssh {host.ssh}` once, then retry"
        )
    if "permission denied" in low and ("publickey" in low or "password" in low or "keyboard" in low):
        return (
            f"{where}: your key was refused: add your public key to ~/.ssh/authorized_keys there "
            f"(or load it into ssh-agent; the daemon cannot type a passphrase)"
        )
    for sign in (
        "could not resolve hostname",
        "connection refused",
        "connection timed out",
        "no route to host",
        "network is unreachable",
        "operation timed out",
        "connection closed by",
        "connection reset",
    ):
        if sign in low:
            reason = _line_with(text, sign)
            return f"{where}: cannot reach it ({reason}): check the address and that sshd runs there"
    if "no space left on device" in low:
        reason = _line_with(text, "no space left")
        return f"{where}: its disk is full ({reason}): free space on {host.name}, then retry"
    if "the runtime speaks protocol" in low:
        spoken = text[low.index("the runtime speaks protocol") + len("the runtime speaks ") :]
        return f"{where}: the shard there speaks {spoken}: run `shard hosts setup {host.name}`"
    if "unrecognized arguments" in low or "invalid choice: 'agent'" in low:
        return f"{where}: the shard there is another version: run `shard hosts setup {host.name}`"
    if code == 127 or ("not found" in low and ("shard" in low or "exec" in low)):
        return f"{where}: shard is not installed there: run `shard hosts setup {host.name}`"
    last = text.splitlines()[-1] if text else f"exit status {code}"
    return f"{where}: {last}"


def _line_with(text: str, sign: str) -> str:
    for line in text.splitlines():
        if sign in line.lower():
            return line.strip().rstrip(".")
    return sign


def remote_cwd(cwd: str) -> str:
    """A folder on another host, as far as the daemon can tell without going there: absolute
    (``~/…`` is the host's home, left for its shell), normalized; INVALID_REQUEST otherwise."""
    if "\0" in cwd:
        raise ShardError(ErrorCode.INVALID_REQUEST, "cwd holds a NUL byte")
    if not (cwd.startswith("/") or cwd == "~" or cwd.startswith("~/")):
        why = f"cwd must be an absolute path on the host, not {shown(cwd)}"
        raise ShardError(ErrorCode.INVALID_REQUEST, why)
    return posixpath.normpath(cwd) if cwd.startswith("/") else cwd
