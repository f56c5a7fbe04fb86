"""How the daemon runs git: nothing a repository's files name ever runs (issue 25).

A confined command can write the project's ``.git/config``, a file it includes, a worktree's own
config; the daemon's git runs unconfined. So every call is pinned, through the command-line scope of
git's configuration (``GIT_CONFIG_COUNT``: it beats every file) and through environment variables that
beat any configuration:

* fixed keys that name a program — ``core.fsmonitor`` off, ``core.hooksPath=/dev/null``,
  ``core.sshCommand``, ``core.alternateRefsCommand``, ``diff.external``, the ``gpg`` programs emptied,
  the credential helpers reset (an empty ``credential.helper`` clears the list);
* drivers whose names the repository chooses — every ``filter.<x>`` (clean, smudge, process emptied,
  not required), ``diff.<x>`` (textconv, command), ``merge.<x>`` (driver), ``protocol.<x>.allow``
  and ``hook.<x>`` (git 2.54's configured hooks: no event, not enabled) named in *any* file git could
  read for the repository: its ``config``, every ``config.worktree``, and every file they include,
  whatever the include's condition (one that matches only a linked worktree's git dir would not
  show from the main checkout). Each file is read with ``git config --file``, which runs nothing;
* no transport at all (``GIT_ALLOW_PROTOCOL`` empty, ``protocol.allow=never``): a partial clone's
  checkout fetches a missing object on its own, through the remote's ``uploadpack``, ``ssh``,
  ``ext::`` or an HTTP credential helper — here it fails instead;
* no pager (``--no-pager``, ``GIT_PAGER=cat``), no editor (``GIT_EDITOR=:``), no prompt, no askpass,
  no system or global config (the user's ``~/.gitconfig`` is not the daemon's to follow), no
  inherited ``GIT_*`` variable (a daemon started from a hook must not act on that repository), and
  no optional lock (``status`` does not write the index).

``uploadpack.packObjectsHook`` is honoured from system, global or command-line config only, all three
the daemon's. What stays: a process that rewrites the config *between* the reading of its names and
git's own reading could name a driver the pins miss: a confined command must not be able to write
the configuration at all (the sandbox's part).
A failure is a :class:`GitError` whose message has private paths cut out: it may reach a client.
"""

from __future__ import annotations

import glob
import os
import subprocess
import threading
from collections.abc import Sequence

TIMEOUT = 120.0  # seconds: a checkout of a large repository takes a while
_MAX_CONFIG_FILES = 64  # git's own include depth is 10; a repository needs a handful

_FIXED = (
    ("core.hooksPath", "/dev/null"),
    ("core.fsmonitor", "false"),
    ("core.sshCommand", ""),
    ("core.alternateRefsCommand", ""),
    ("credential.helper", ""),
    ("diff.external", ""),
    ("gpg.program", ""),
    ("gpg.openpgp.program", ""),
    ("gpg.x509.program", ""),
    ("gpg.ssh.program", ""),
    ("gpg.ssh.defaultKeyCommand", ""),
    ("protocol.allow", "never"),
    ("submodule.recurse", "false"),
)
# per driver name the repository chooses: the keys that name its programs
_DRIVERS = {
    "filter": (("clean", ""), ("smudge", ""), ("process", ""), ("required", "false")),
    "diff": (("textconv", ""), ("command", "")),
    "merge": (("driver", ""),),
    "hook": (("event", ""), ("enabled", "false")),  # an empty event resets the hook's list of events
    "protocol": (("allow", "never"),),
}
_ENV = {
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_ATTR_NOSYSTEM": "1",
    "GIT_ALLOW_PROTOCOL": "",  # an allow-list naming no protocol
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_ASKPASS": "",
    "GIT_EDITOR": ":",
    "GIT_SEQUENCE_EDITOR": ":",
    "GIT_PAGER": "cat",
    "GIT_OPTIONAL_LOCKS": "0",
    "LC_ALL": "C",
}


class GitError(Exception):
    def __init__(self, message: str, *, conflict: bool = False) -> None:
        super().__init__(message)
        self.message = message
        self.conflict = conflict  # the request collides with the repository's state (not a bad request)


def run(
    args: Sequence[str],
    *,
    repository: str | None,
    config: Sequence[tuple[str, str]] = (),
    index_file: str | None = None,
    read: Sequence[tuple[str, str]] | None = None,
) -> subprocess.CompletedProcess[str]:
    """``git args`` pinned as above. ``repository`` is the common dir whose configuration names the
    drivers to pin off; None only before it is known (``rev-parse`` finding it, ``check-ref-format``),
    for commands that read no index and run no driver. ``config``: more pins of the caller's (they
    beat the repository's files too); ``index_file``: the index git reads and writes instead of the
    repository's own; ``read``: the repository's driver pins as :func:`drivers` read them for a few
    calls in a row (else they are read again for this one). Output is text, undecodable bytes kept
    as surrogates (``os.fsencode`` gives the path back)."""
    found = read if read is not None else (_drivers(repository) if repository is not None else ())
    pins = [*_FIXED, *found, *config]
    return _spawn(["git", "--no-pager", *args], pins, index_file)


def bounded(
    args: Sequence[str],
    *,
    repository: str,
    limit: int,
    config: Sequence[tuple[str, str]] = (),
    index_file: str | None = None,
    read: Sequence[tuple[str, str]] | None = None,
) -> tuple[int, str, bool]:
    """``run``, its standard output read up to ``limit`` bytes: (exit status, output, cut). Past the
    limit git is stopped — a worktree may hold a file of any size — and the status is 0, the output
    what was read. Standard error is not kept (git's message is not needed where this is used)."""
    pins = [*_FIXED, *(read if read is not None else _drivers(repository)), *config]
    env = _environment(pins, index_file)
    try:
        proc = subprocess.Popen(
            ["git", "--no-pager", *args],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
        )
    except FileNotFoundError:
        raise GitError("git is not installed") from None
    assert proc.stdout is not None
    timer = threading.Timer(TIMEOUT, proc.kill)
    timer.start()
    try:
        data = proc.stdout.read(limit + 1)
        cut = len(data) > limit
        if cut:
            proc.kill()
        proc.stdout.close()
        status = proc.wait()
    finally:
        timer.cancel()
    if not cut and status < 0:
        raise GitError(f"git took longer than {TIMEOUT:g} s")
    return (0 if cut else status), data[:limit].decode("utf-8", "surrogateescape"), cut


def output(args: Sequence[str], *, repository: str | None, private: tuple[str, ...] = ()) -> str:
    """``run``'s standard output; a GitError (git's first line, ``private`` paths cut) if it failed."""
    result = run(args, repository=repository)
    if result.returncode != 0:
        raise GitError(first_line(result.stderr, private) or f"git {args[-1]} failed")
    return result.stdout


def first_line(stderr: str, private: tuple[str, ...]) -> str:
    """git's message, one line, private paths cut out."""
    line = next((ln.strip() for ln in stderr.splitlines() if ln.strip()), "")
    for path in private:
        if path:
            line = line.replace(path, "<repository>")
    return line[:300]


def drivers(common_dir: str) -> list[tuple[str, str]]:
    """The pins for the drivers the repository's configuration names, read now: for a few calls in a
    row (``run``'s ``read``), which then see the configuration as it was here."""
    return _drivers(common_dir)


def _drivers(common_dir: str) -> list[tuple[str, str]]:
    """The pins for every driver named in a configuration file of the repository at ``common_dir``."""
    names: set[tuple[str, str]] = set()
    for key in _config_keys(common_dir):
        section, _, rest = key.partition(".")
        name, dot, _variable = rest.rpartition(".")
        if dot and section in _DRIVERS:
            names.add((section, name))
    return [(f"{s}.{n}.{var}", value) for s, n in sorted(names) for var, value in _DRIVERS[s]]


def _config_keys(common_dir: str) -> list[str]:
    """Every key of every file git may read as the repository's configuration, includes followed
    whatever their condition."""
    pending = [
        os.path.join(common_dir, "config"),
        os.path.join(common_dir, "config.worktree"),
        *sorted(glob.glob(os.path.join(glob.escape(common_dir), "worktrees", "*", "config.worktree"))),
    ]
    seen: set[str] = set()
    keys: list[str] = []
    while pending:
        path = pending.pop()
        if path in seen or not os.path.isfile(path):
            continue  # a missing file is no configuration (git skips it too); a FIFO could hang
        seen.add(path)
        if len(seen) > _MAX_CONFIG_FILES:
            raise GitError("the repository's configuration includes too many files")
        for key, value in _entries(path):
            keys.append(key)
            if value and (key == "include.path" or (key.startswith("includeif.") and key.endswith(".path"))):
                pending.append(_included(path, value))
    return keys


def _entries(path: str) -> list[tuple[str, str | None]]:
    result = _spawn(["git", "config", "--file", path, "--list", "-z"], list(_FIXED))
    if result.returncode != 0:  # git would refuse this configuration too: run nothing on it
        raise GitError("the repository's configuration could not be read: " + first_line(result.stderr, ()))
    entries: list[tuple[str, str | None]] = []
    for item in result.stdout.split("\0"):
        if item:
            key, newline, value = item.partition("\n")
            entries.append((key, value if newline else None))
    return entries


def _included(including: str, value: str) -> str:
    """Where git looks for an included file: ``~`` is the home, a relative path is taken from the
    including file's folder."""
    path = os.path.expanduser(value) if value.startswith("~") else value
    return path if os.path.isabs(path) else os.path.join(os.path.dirname(including), path)


def _environment(pins: Sequence[tuple[str, str]], index_file: str | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(_ENV, GIT_CONFIG_COUNT=str(len(pins)))
    for i, (key, value) in enumerate(pins):
        env[f"GIT_CONFIG_KEY_{i}"] = key
        env[f"GIT_CONFIG_VALUE_{i}"] = value
    if index_file is not None:
        env["GIT_INDEX_FILE"] = index_file
    return env


def _spawn(
    argv: list[str], pins: Sequence[tuple[str, str]], index_file: str | None = None
) -> subprocess.CompletedProcess[str]:
    env = _environment(pins, index_file)
    try:
        return subprocess.run(
            argv,
            capture_output=True,
            text=True,
            errors="surrogateescape",
            timeout=TIMEOUT,
            env=env,
            stdin=subprocess.DEVNULL,
            check=False,
        )
    except FileNotFoundError:
        raise GitError("git is not installed") from None
    except subprocess.TimeoutExpired:
        raise GitError(f"git took longer than {TIMEOUT:g} s") from None
