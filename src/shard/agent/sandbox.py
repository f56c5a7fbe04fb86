"""The sandbox bash runs in (issue 19): bubblewrap, when it is here and works.

Inside, the whole filesystem is read-only but the working directory (and ``[sandbox] writable``
paths); ``/tmp`` is private and empty; ``/dev`` is minimal; a new PID namespace shows no Shard
process in ``/proc`` (no runtime's memory, environment or command line to read); the network is a
namespace of its own with only loopback unless ``network = "on"``; the environment is an allow-list
(no key, no token, nothing Shard's); everything dies with the tool call (``--die-with-parent`` and
the process group bash already kills).

Modes (``[sandbox] mode``, ``agent.create``'s ``sandbox``, ``shard run --sandbox``):

The user's home and Shard's home are hidden behind empty, private folders (keys, SSH and cloud
credentials, other projects under home, Shard's sessions and grants), but for git's own settings
(``~/.gitconfig``, ``~/.config/git``, read-only) so that commits work. The rest of the system stays
readable, as it is to any local program.

* ``off`` — no sandbox; every command asks (as before).
* ``ask`` — commands run inside the sandbox, and still ask.
* ``auto`` — commands run inside the sandbox without asking; a command the model asks to run
  outside it (``sandbox: false``, with its reason) asks, the reason shown.

Where bubblewrap is missing or cannot run (no user namespaces), :func:`probe` says why, the runtime
says so once on stderr, and commands ask as with ``off``: nothing claims a sandbox it does not have.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal, cast

if TYPE_CHECKING:
    from shard.agent.config import Config

SandboxMode = Literal["off", "ask", "auto"]
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
    hidden: tuple[Path, ...] = ()  # replaced by empty folders inside (the homes)
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
        return ["sandbox", f"sandbox:{self.mode}", f"sandbox:network-{'on' if self.network else 'off'}"]

    def wrap(self, argv: list[str], cwd: Path) -> list[str]:
        """``argv`` to run inside the sandbox, with ``cwd`` (and the writable set) writable."""
        assert self.bwrap is not None
        out = [self.bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"]
        for path in self.hidden:
            out += ["--tmpfs", os.path.realpath(path)]
            for kept in (".gitconfig", ".config/git"):
                out += ["--ro-bind-try", os.path.join(path, kept), os.path.join(os.path.realpath(path), kept)]
        for path in (cwd, *self.writable):  # after the hiding: a project under home is there
            real = os.path.realpath(path)
            out += ["--bind", real, real]
        out += ["--unshare-pid", "--unshare-ipc", "--unshare-uts", "--die-with-parent", "--new-session"]
        if not self.network:
            out.append("--unshare-net")
        out += ["--chdir", str(cwd), "--", *argv]
        return out


def environment(env: dict[str, str] | None) -> dict[str, str]:
    """The allow-listed part of ``env`` (the runtime's own when None), for a command inside."""
    source = os.environ if env is None else env
    kept = {k: v for k, v in source.items() if k in ENV_ALLOWED or k.startswith("LC_")}
    kept["TMPDIR"] = "/tmp"
    return kept


def configured(
    mode: SandboxMode, *, shard_home: Path, network: bool = False, writable: tuple[Path, ...] = ()
) -> Sandbox:
    """The sandbox for ``mode``, probed on this machine."""
    if mode == "off":
        return Sandbox("off")
    bwrap, why = probe()
    hidden = [Path(p) for p in (os.environ.get("HOME"), str(shard_home)) if p and os.path.isdir(p)]
    distinct = tuple(p for p in hidden if os.path.realpath(p) != "/" and not _under_any(p, hidden))
    return Sandbox(mode, network=network, writable=writable, hidden=distinct, bwrap=bwrap, why=why)


def for_config(config: Config) -> Sandbox:
    """The sandbox ``[sandbox]`` asks for (with a per-agent ``--sandbox`` already applied to it)."""
    s = config.sandbox
    mode = cast(SandboxMode, s.mode if s.mode in MODES else "off")
    return configured(
        mode, shard_home=config.home, network=s.network, writable=tuple(Path(p) for p in s.writable)
    )


def _under_any(path: Path, others: list[Path]) -> bool:
    """``path`` lies inside another of ``others`` (hiding that one hides it too)."""
    real = os.path.realpath(path)
    return any(real != os.path.realpath(o) and real.startswith(os.path.realpath(o) + os.sep) for o in others)


@functools.cache
def probe() -> tuple[str | None, str | None]:
    """bubblewrap's path, or None and why it cannot confine commands here (checked once)."""
    path = shutil.which("bwrap")
    if path is None:
        return None, "bubblewrap (bwrap) is not installed"
    trial = Sandbox("auto", bwrap=path).wrap(["/bin/true"], Path("/"))
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
