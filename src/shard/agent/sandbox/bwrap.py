"""The sandbox bash runs in (issue 19): bubblewrap, when it is here and works.

Inside, the whole filesystem is read-only but the working directory (and ``[sandbox] writable``
paths); ``/tmp`` is private and empty; ``/dev`` is minimal; a new PID namespace shows no Shard
process in ``/proc`` (no runtime's memory, environment or command line to read); the network is a
namespace of its own with only loopback unless ``network = "on"``; the environment is an allow-list
(no key, no token, nothing Shard's); everything dies with the tool call (``--die-with-parent`` and
the process group bash already kills).

Modes (``[sandbox] mode``, ``agent.create``'s ``sandbox``, ``shard run --sandbox``):

* ``off`` — no sandbox; every command asks (as before).
* ``ask`` — commands run inside the sandbox, and still ask.
* ``auto`` — commands run inside the sandbox without asking; a command the model asks to run
  outside it (``sandbox: false``, with its reason) asks, the reason shown — as does one whose
  working directory cannot be confined (:meth:`Sandbox.refusal`). No stored grant allows a command
  outside an active sandbox (``shard.agent.permissions.gate``).

What holds secrets is hidden: Shard's home (sessions, grants, config, the daemon's socket), and in
the user's home the usual places of keys and credentials (:data:`SECRETS`: SSH, GnuPG, cloud and
container credentials, ``.netrc``, token files, shell histories, browser profiles) plus ``[sandbox]
hidden`` — a folder becomes an empty one, a file an empty file. Which of them exist is looked at for
each call. What decides what runs later outside (``.git``, ``.shard``, ``AGENTS.md``, shell start-up
files, …) is read-only even inside a writable root, and cannot be created there either. Where each
mount goes, and in which order, is :mod:`shard.agent.sandbox.places`'s. The rest of the system,
toolchains under the home included, stays readable, as it is to any local program.

Where bubblewrap is missing or cannot run (no user namespaces), :func:`probe` says why, the runtime
says so once on stderr, and commands ask as with ``off``: nothing claims a sandbox it does not have.
"""

from __future__ import annotations

import contextlib
import functools
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal, cast

from shard._leaving import on_leaving
from shard._secret_places import HOME_SECRETS
from shard.agent.sandbox import places

if TYPE_CHECKING:
    from shard.agent.config.settings import Config, SandboxConfig

SandboxMode = Literal["off", "ask", "auto"]
# Where keys and credentials live in a home: hidden inside the sandbox (relative to $HOME).
SECRETS = HOME_SECRETS
# Sockets through which a confined command could have something run outside the sandbox, hidden like
# the secrets: a container engine's (a container mounts the host), the system bus and systemd's own
# socket (a daemon run as root could start a unit), GNU screen's sessions (keys typed into a shell).
# The user's runtime directory is added per user (:func:`runtime_dir`): its session bus starts units
# (`systemd-run --user`), and ssh and gpg agents sign with the user's keys. tmux's sockets live under
# /tmp, which is private inside; abstract sockets are per network namespace, so only `network = "on"`
# shares the host's.
ESCAPES = (
    "/run/docker.sock",
    "/var/run/docker.sock",
    "/run/podman",
    "/run/containerd",
    "/run/dbus/system_bus_socket",
    "/var/run/dbus/system_bus_socket",
    "/run/systemd/private",
    "/run/screen",
)
BRIDGE = Path(__file__).with_name("bridge.py")
PROXY_INSIDE = "/tmp/.shard-proxy.sock"  # on the sandbox's own /tmp
BRIDGE_INSIDE = "/tmp/.shard-bridge.py"
PROXY_PORT = 3128
MODES: tuple[SandboxMode, ...] = ("off", "ask", "auto")
# What a command inside sees of the runtime's environment: enough for shells, compilers and git.
ENV_ALLOWED = (
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "SHELL",
    "TERM",
    "LANG",
    "LANGUAGE",
    "TZ",
    "PAGER",
    "GIT_PAGER",
    "GIT_TERMINAL_PROMPT",
    "VIRTUAL_ENV",
    "PYTHONPATH",
    "NO_COLOR",
)


@dataclass(frozen=True, slots=True)
class Sandbox:
    """The sandbox a runtime's commands run in; ``bwrap`` None: not available (``why`` says why)."""

    mode: SandboxMode
    network: bool = False
    writable: tuple[Path, ...] = ()
    allow_hosts: tuple[str, ...] = ()  # with network off: hosts reachable through the runtime's proxy
    hidden: tuple[Path, ...] = ()  # inside: a folder empty, a file empty — those that exist at each call
    shard_home: Path | None = None  # hidden always; a worktree under its worktrees/ can be confined
    home: Path | None = None  # the user's: its start-up files are protected when it is writable
    bwrap: str | None = None
    why: str | None = None

    @property
    def active(self) -> bool:
        """Commands really run confined."""
        return self.mode != "off" and self.bwrap is not None

    @property
    def auto(self) -> bool:
        return self.active and self.mode == "auto"

    def capabilities(self) -> list[str]:
        """What ``sync``/``hello`` advertise: only a sandbox that is really there."""
        if not self.active:
            return []
        network = "on" if self.network else "allowlist" if self.allow_hosts else "off"
        return ["sandbox", f"sandbox:{self.mode}", f"sandbox:network-{network}"]

    def refusal(self, cwd: Path) -> str | None:
        """Why a command in ``cwd`` cannot be confined (it then asks, as one run outside), or None."""
        hides = places.hidden_now(str(p) for p in self.hidden)
        return places.refusal(os.path.realpath(cwd), hides, self._shard_home())

    @contextlib.contextmanager
    def call(self, argv: list[str], cwd: Path, proxy: Path | None = None) -> Iterator[list[str]]:
        """``argv`` to run inside the sandbox, with ``cwd`` (and the writable set) writable, for as
        long as the block lasts: the placeholders of places that must not be created are held on
        the host until then (:func:`~shard.agent.sandbox.places.held`). With ``proxy`` (the
        allow-list proxy's socket), the bridge to it runs first, inside. Unconfinable when ``cwd``
        lies in a hidden place or a protected folder."""
        assert self.bwrap is not None
        with places.held(self._settings(cwd)) as layout:
            yield self._command(argv, cwd, layout.args(), proxy)

    def _command(self, argv: list[str], cwd: Path, mounts: list[str], proxy: Path | None) -> list[str]:
        """The bwrap command line around ``argv``, with the call's ``mounts`` (already in order)."""
        assert self.bwrap is not None
        out = [self.bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"]
        out += mounts  # roots, then what is protected inside them, then what is hidden: in path order
        out += ["--unshare-pid", "--unshare-ipc", "--unshare-uts", "--die-with-parent", "--new-session"]
        if not self.network:
            out.append("--unshare-net")
        if proxy is not None:
            # The bridge and its interpreter as the sandbox sees them: a checkout (or venv) under
            # /tmp is out of sight behind the private /tmp, so the script is bound in beside the socket.
            out += ["--bind", str(proxy), PROXY_INSIDE, "--ro-bind", str(BRIDGE), BRIDGE_INSIDE]
            argv = [_interpreter(), BRIDGE_INSIDE, PROXY_INSIDE, str(PROXY_PORT), "--", *argv]
        out += ["--chdir", os.path.realpath(cwd), "--", *argv]  # a link to it may be out of sight
        return out

    def _shard_home(self) -> str | None:
        return os.path.realpath(self.shard_home) if self.shard_home else None

    def _settings(self, cwd: Path) -> places.Settings:
        return places.Settings(
            cwd=str(cwd),
            writable=tuple(str(p) for p in self.writable),
            hidden=tuple(str(p) for p in self.hidden),
            shard_home=self._shard_home(),
            home=str(self.home) if self.home else None,
            empty_file=str(_empty_file()),
        )

    def environment(self, env: dict[str, str] | None) -> dict[str, str]:
        """What a command inside sees: the allow-list of :data:`ENV_ALLOWED`, and the proxy when
        there is an allow-list of hosts."""
        kept = environment(env)
        if self.allow_hosts and not self.network:
            url = f"http://127.0.0.1:{PROXY_PORT}"
            for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"):
                kept[name] = url
        return kept


def environment(env: dict[str, str] | None) -> dict[str, str]:
    """The allow-listed part of ``env`` (the runtime's own when None), for a command inside."""
    source = os.environ if env is None else env
    kept = {k: v for k, v in source.items() if k in ENV_ALLOWED or k.startswith("LC_")}
    kept["TMPDIR"] = "/tmp"
    return kept


def configured(
    mode: SandboxMode,
    *,
    shard_home: Path,
    network: bool = False,
    writable: tuple[Path, ...] = (),
    allow_hosts: tuple[str, ...] = (),
    hidden: tuple[Path, ...] = (),
) -> Sandbox:
    """The sandbox for ``mode``, probed on this machine."""
    if mode == "off":
        return Sandbox("off")
    bwrap, why = probe()
    home = os.environ.get("HOME")
    user = Path(home) if home and os.path.realpath(home) != "/" else None
    secrets = [user / name for name in SECRETS] if user else []
    escapes = [runtime_dir(), *(Path(p) for p in ESCAPES)]
    return Sandbox(
        mode,
        network=network,
        writable=writable,
        allow_hosts=allow_hosts,
        hidden=tuple(dict.fromkeys([shard_home, *secrets, *escapes, *hidden])),  # which exist: at each call
        shard_home=shard_home,
        home=user,
        bwrap=bwrap,
        why=why,
    )


def runtime_dir() -> Path:
    """The user's runtime directory (``XDG_RUNTIME_DIR``, else systemd's ``/run/user/<uid>``)."""
    return Path(os.environ.get("XDG_RUNTIME_DIR") or f"/run/user/{os.getuid()}")


def for_config(config: Config) -> Sandbox:
    """The sandbox ``[sandbox]`` asks for (with a per-agent ``--sandbox`` already applied to it).
    Asked at every tool call and every ``sync``: its settings are worked out once per setting; what
    exists on the host, each call (:meth:`Sandbox.call`)."""
    return _for_settings(config.sandbox, config.home)


@functools.cache
def _for_settings(s: SandboxConfig, home: Path) -> Sandbox:
    mode = cast(SandboxMode, s.mode if s.mode in MODES else "off")
    return configured(
        mode,
        shard_home=home,
        network=s.network,
        writable=tuple(Path(p) for p in s.writable),
        allow_hosts=s.allow_hosts,
        hidden=tuple(Path(p) for p in s.hidden),
    )


def _interpreter() -> str:
    """A Python the sandbox can see: this one's real binary (a venv's python is a link to it), unless
    it lives under /tmp, which is private inside; then the system's."""
    real = os.path.realpath(sys.executable)
    if not real.startswith("/tmp/"):
        return real
    return shutil.which("python3", path="/usr/local/bin:/usr/bin:/bin") or real


@functools.cache
def _empty_file() -> Path:
    """An empty, read-only file laid over each hidden file (a device like /dev/null cannot be read
    from the sandbox's nodev mounts)."""
    fd, name = tempfile.mkstemp(prefix="shard-empty-")
    os.close(fd)
    os.chmod(name, 0o444)
    on_leaving(lambda: os.path.exists(name) and os.unlink(name))
    return Path(name)


@functools.cache
def probe() -> tuple[str | None, str | None]:
    """bubblewrap's path, or None and why it cannot confine commands here (checked once)."""
    path = shutil.which("bwrap")
    if path is None:
        return None, "bubblewrap (bwrap) is not installed"
    trial = Sandbox("auto", bwrap=path)._command(["/bin/true"], Path("/"), [], None)
    try:
        result = subprocess.run(trial, capture_output=True, text=True, timeout=10, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return None, f"bubblewrap does not run here ({exc})"
    if result.returncode != 0:
        reason = (
            result.stderr.strip().splitlines()[-1] if result.stderr.strip() else f"exit {result.returncode}"
        )
        return None, f"bubblewrap cannot make a sandbox here ({reason})"
    return path, None
