"""A real OpenSSH server on 127.0.0.1 that plays a remote host (Debian's ``openssh-server``).

:class:`Sshd` starts ``sshd -D`` with its own host key, on a free port, accepting one client key for
the user running the tests; it writes the client side too: an ``ssh_config`` naming the host
(``Host <alias>``), the client key and a known-hosts file that holds (or, for the unknown-host-key
case, does not hold) the server's key. Its login sessions run as this user; a host's own
``SHARD_HOME`` and folders are directories under ``root``, so "the remote" has a home of its own.

``session_pids()`` lists the per-connection ``sshd`` processes (what dies when a connection drops):
killing one is the honest way to cut a connection mid-turn.
"""

from __future__ import annotations

import contextlib
import getpass
import os
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

SSHD = shutil.which("sshd") or "/usr/sbin/sshd"


def available() -> bool:
    return os.path.exists(SSHD) and shutil.which("ssh") is not None and shutil.which("ssh-keygen") is not None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _keygen(path: Path) -> None:
    subprocess.run(
        ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(path)],
        check=True,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
    )


class Sshd:
    def __init__(self, root: Path, *, alias: str = "box", max_sessions: int = 64) -> None:
        self.root = root
        self.alias = alias
        self.port = _free_port()
        self.user = getpass.getuser()
        self.max_sessions = max_sessions
        self.proc: subprocess.Popen[bytes] | None = None
        self.etc = root / "sshd"
        self.client = root / "client"
        self.ssh_config = self.client / "ssh_config"
        self.known_hosts = self.client / "known_hosts"
        self.identity = self.client / "id_ed25519"
        self.log = self.etc / "sshd.log"

    def start(self) -> Sshd:
        for d in (self.etc, self.client):
            d.mkdir(parents=True, exist_ok=True)
            d.chmod(0o700)
        host_key = self.etc / "host_ed25519"
        _keygen(host_key)
        _keygen(self.identity)
        (self.etc / "authorized_keys").write_bytes(self.identity.with_suffix(".pub").read_bytes())
        public = host_key.with_suffix(".pub").read_text().split()
        self.known_hosts.write_text(f"[127.0.0.1]:{self.port} {public[0]} {public[1]}\n")
        config = self.etc / "sshd_config"
        config.write_text(
            "\n".join(
                [
                    f"Port {self.port}",
                    "ListenAddress 127.0.0.1",
                    f"HostKey {host_key}",
                    f"AuthorizedKeysFile {self.etc / 'authorized_keys'}",
                    f"PidFile {self.etc / 'sshd.pid'}",
                    "PasswordAuthentication no",
                    "KbdInteractiveAuthentication no",
                    "PubkeyAuthentication yes",
                    "PermitRootLogin prohibit-password",
                    "UsePAM no",
                    "StrictModes no",
                    "AllowStreamLocalForwarding yes",
                    "StreamLocalBindUnlink yes",
                    f"MaxSessions {self.max_sessions}",
                    "MaxStartups 100",
                    # The sessions' shell runs this machine's ~/.bashrc; where that runs pyenv, a
                    # session killed inside its rehash leaves a lock that made every later session
                    # wait a minute for it (60 s by default): one second is enough to give up.
                    "SetEnv PYENV_REHASH_TIMEOUT=1",
                    "LogLevel ERROR",
                    "",
                ]
            )
        )
        self.write_client_config()
        if os.geteuid() == 0:
            Path("/run/sshd").mkdir(mode=0o755, exist_ok=True)  # privilege separation's empty dir
        with open(self.log, "ab") as log:  # the child keeps its own descriptor
            self.proc = subprocess.Popen(
                [SSHD, "-D", "-e", "-f", str(config)],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=log,
                start_new_session=True,
            )
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"sshd exited: {self.log.read_text(errors='replace')}")
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", self.port), 0.2):
                return self
            time.sleep(0.02)
        raise RuntimeError("sshd did not listen")

    def write_client_config(self, *, known_hosts: Path | None = None, alias: str | None = None) -> Path:
        """The client's ``ssh_config`` for ``alias`` (this server); another known-hosts file makes the
        server's key unknown to it."""
        path = self.ssh_config if alias is None else self.client / f"ssh_config_{alias}"
        path.write_text(
            "\n".join(
                [
                    f"Host {alias or self.alias}",
                    "  HostName 127.0.0.1",
                    f"  Port {self.port}",
                    f"  User {self.user}",
                    f"  IdentityFile {self.identity}",
                    "  IdentitiesOnly yes",
                    f"  UserKnownHostsFile {known_hosts or self.known_hosts}",
                    "  GlobalKnownHostsFile /dev/null",
                    "  LogLevel ERROR",
                    "",
                ]
            )
        )
        return path

    def hosts_entry(self, remote_home: Path, *, name: str = "box", ssh_config: Path | None = None) -> str:
        """A ``[[hosts]]`` entry of config.toml for this server, its SHARD_HOME ``remote_home``
        (no ``shard =``: the host runs what ``shard hosts setup`` installs there)."""
        return (
            f'\n[[hosts]]\nname = "{name}"\nssh = "{self.alias}"\n'
            f'ssh_config = "{ssh_config or self.ssh_config}"\nhome = "{remote_home}"\n'
        )

    def session_pids(self) -> list[int]:
        """The per-connection sshd processes (children of the listener)."""
        if self.proc is None:
            return []
        found = []
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            with contextlib.suppress(OSError, ValueError, IndexError):
                stat = (entry / "stat").read_text()
                ppid = int(stat[stat.rindex(")") + 2 :].split()[1])
                if ppid == self.proc.pid:
                    found.append(int(entry.name))
        return found

    def stop(self) -> None:
        if self.proc is None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, signal.SIGTERM)
        try:
            self.proc.wait(5)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
        for pid in self.session_pids():
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        self.proc = None
