"""Where a confined command's mounts go, worked out afresh for each call (issue 25).

bubblewrap applies its mounts in order, each over what came before, so the order is the policy:
every mount is applied after every mount of a path that contains it — shallowest path first and,
at one path, the writable bind, then the read-only protection, then the hide. A hidden place inside
the working directory is therefore hidden whatever the working directory is, and a working directory
inside a hidden place (a daemon worktree under ``$SHARD_HOME/worktrees``) comes back above the hide.

Inside each writable root (the working directory, ``[sandbox] writable``):

* **protected places** — what decides what runs later outside the sandbox (:data:`ROOT_PLACES` in
  every root; :data:`HOME_PLACES` — shell start-up files, git's own settings — where the home lies
  in a root, and wherever they exist in one; the same names found up to :data:`NESTED_DEPTH`
  levels down; the git directory a ``.git`` file points to, and its common directory) are bound
  read-only over themselves. A mount point cannot be renamed or removed, and every folder between
  the root and a deeper protected place is bound over itself too ("pinned"), so none can be moved
  aside and made anew.
* **missing places** — what must not be created either: :data:`CREATED_NEVER` in every root
  (a repository, the project's agent definitions, Shard's instructions), and where the home lies in
  a root its :data:`HOME_PLACES` and the secret places that do not exist yet (a new
  ``~/.aws/config`` names a ``credential_process``). Each gets a placeholder at its first missing
  component: an empty entry with mode 000 made on the host and bound read-only over itself. It is
  a file (no block to allocate) unless a folder must stand there for others meanwhile (see
  :func:`_as_file`). Placeholders live for the call: each call holds a shared ``flock`` on the
  folders holding its placeholders, and the last call out (an exclusive lock it can take at once)
  removes those still empty with mode 000 — so a call that ends never unguards one still running.
  One left by a runtime that died is taken over, and removed, by the next call in that folder.
  While a call runs, others on the host see the placeholder (git outside, in a folder with no
  repository of its own, reads the empty ``.git`` file as a broken one).

Refusals (:class:`Unconfinable`): a working directory inside a hidden place (but a worktree under
``$SHARD_HOME/worktrees``) or inside a protected folder cannot be confined: the command then runs
only if the user allows it, as any unconfined one. A ``[sandbox] writable`` path in such a place is
left out.

Known limits: a protected or hidden name that is a symbolic link has its target protected, but the
link itself can be replaced (a mount cannot sit on a link); a place missing deeper than a root's top
(or its home) can be created — a new repository in a subfolder, say; other tools' settings
(``.vscode``, ``.claude``, …) are protected only where they exist; and a path swapped by another
process between this plan and bubblewrap's mounts is mounted where it then leads.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import stat
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

# In every writable root: what decides what runs later outside (read-only where it exists).
ROOT_PLACES = (
    ".git",  # the repository: config, hooks, commondir, modules, a worktree's pointer file…
    ".shard",  # the project's agent definitions and settings
    "AGENTS.md",  # instructions (shard.agent.prompting.instructions)
    "CLAUDE.md",
    ".mcp.json",  # other agents' MCP servers
    ".gitmodules",
    ".vscode",  # editors' tasks and settings
    ".idea",
    ".claude",  # other agents' settings, hooks and commands
    ".codex",
)
# Of those, what cannot be created either (a placeholder costs a file and a mount per call): git's,
# and what Shard itself reads — the others are other tools' settings, which ask before they trust a
# new one.
CREATED_NEVER = frozenset({".git", ".shard", "AGENTS.md", "CLAUDE.md"})
# In the home (and, where they exist, in any root): shell start-up files and git's settings.
HOME_PLACES = (
    ".gitconfig",
    ".config/git",
    ".bashrc",
    ".bash_profile",
    ".bash_login",
    ".bash_logout",
    ".profile",
    ".zshrc",
    ".zshenv",
    ".zprofile",
    ".zlogin",
    ".zlogout",
    ".ripgreprc",
)
NESTED_DEPTH = 3  # protected names are looked for this many levels down each root (the top included)
_NESTED = frozenset(ROOT_PLACES) | {p for p in HOME_PLACES if "/" not in p}
_FOLDERS = frozenset({".git", ".shard", ".vscode", ".idea", ".claude", ".codex"})  # no cwd inside one
_PRUNE = frozenset(
    {"node_modules", ".venv", "venv", "__pycache__", ".tox", ".nox", ".mypy_cache", ".ruff_cache"}
    | {".pytest_cache", ".cache", "site-packages"}
)
BIND, PROTECT, HIDE = 0, 1, 2  # at one path, in this order
_LOCK_WAIT = 1.0  # a sweep holds its lock for microseconds; anything longer is not one


class Unconfinable(Exception):
    """The working directory cannot be confined; the message says why (the model and user read it)."""


@dataclass(frozen=True, slots=True, order=True)
class Mount:
    depth: int
    kind: int
    path: str
    source: str = ""  # a hidden file: the empty file laid over it

    def args(self) -> list[str]:
        if self.kind == BIND:
            return ["--bind", self.path, self.path]
        if self.kind == PROTECT:
            return ["--ro-bind", self.path, self.path]
        if self.source:
            return ["--ro-bind", self.source, self.path]
        return ["--tmpfs", self.path]


@dataclass(frozen=True, slots=True)
class Placeholder:
    path: str
    is_file: bool

    @property
    def parent(self) -> str:
        return os.path.dirname(self.path)


@dataclass(slots=True)
class Layout:
    """One call's mounts (in order) and the placeholders they need on the host."""

    mounts: list[Mount] = field(default_factory=list)
    placeholders: list[Placeholder] = field(default_factory=list)

    def args(self) -> list[str]:
        return [arg for mount in self.mounts for arg in mount.args()]


@dataclass(frozen=True, slots=True)
class Settings:
    """What a layout is computed from (the Sandbox's configuration, the call's working directory)."""

    cwd: str
    writable: tuple[str, ...]
    hidden: tuple[str, ...]  # candidates, present or not: Shard's home, the home's secrets, [sandbox] hidden
    shard_home: str | None
    home: str | None
    empty_file: str  # laid over a hidden file


def inside(path: str, other: str) -> bool:
    return path == other or path.startswith(other.rstrip("/") + "/")


def _depth(path: str) -> int:
    return 0 if path == "/" else path.count("/")


def hidden_now(candidates: Iterable[str]) -> list[str]:
    """The hidden places that exist now, resolved, none inside another."""
    present = {os.path.realpath(p) for p in candidates if os.path.lexists(p)} - {"/"}
    return sorted(p for p in present if not any(p != o and inside(p, o) for o in present))


def refusal(path: str, hides: list[str], shard_home: str | None) -> str | None:
    """Why ``path`` (resolved) cannot be a writable root, or None."""
    worktrees = os.path.join(shard_home, "worktrees") if shard_home else None
    in_worktrees = worktrees is not None and inside(path, worktrees)
    for hide in hides:
        if inside(path, hide) and not (hide == shard_home and in_worktrees):
            return f"{path} lies inside {hide}, which the sandbox hides"
    tail = path[len(worktrees) :] if in_worktrees and worktrees else path
    folder = next((part for part in tail.split("/") if part in _FOLDERS), None)
    if folder is not None:
        return f"{path} lies inside a {folder} folder, which confined commands may not change"
    return None


def roots(settings: Settings, hides: list[str]) -> list[str]:
    """The writable roots, resolved: the working directory first (Unconfinable when it cannot be)
    and the ``writable`` paths that can be."""
    cwd = os.path.realpath(settings.cwd)
    why = refusal(cwd, hides, settings.shard_home)
    if why is not None:
        raise Unconfinable(f"the working directory cannot be confined: {why}")
    out = [cwd]
    for path in settings.writable:
        real = os.path.realpath(path)
        if real not in out and os.path.isdir(real) and refusal(real, hides, settings.shard_home) is None:
            out.append(real)
    return out


def layout(settings: Settings) -> Layout:
    """The mounts of one call, from what exists on the host now."""
    hides = hidden_now(settings.hidden)
    writable = roots(settings, hides)
    guarded: dict[str, bool] = {}  # path → may be created by a command (so it gets a placeholder)
    for root in writable:
        for name in ROOT_PLACES:
            guarded.setdefault(os.path.join(root, name), name in CREATED_NEVER)
        for name in HOME_PLACES:
            guarded.setdefault(os.path.join(root, name), False)
    home = os.path.realpath(settings.home) if settings.home else None
    home_writable = home is not None and home != "/" and any(inside(home, r) for r in writable)
    if home is not None and home_writable:
        for name in HOME_PLACES:
            guarded[os.path.join(home, name)] = True
    for path in settings.hidden:  # a secret place a command could create: made impossible too
        if (home_writable or any(inside(path, r) for r in writable)) and not os.path.lexists(path):
            guarded.setdefault(_parent_resolved(path), True)
    protect: set[str] = set()
    out = Layout()
    for path, missing_too in guarded.items():
        _guard(path, missing_too, writable, protect, out)
    skip = set(hides)
    for root in writable:
        _nested(root, 1, skip, protect)
    for path in list(protect):
        _follow_git(path, protect)
    _assemble(out, writable, hides, protect, settings.empty_file)
    return out


def _guard(path: str, missing_too: bool, writable: list[str], protect: set[str], out: Layout) -> None:
    """Protect ``path`` if it exists; if it does not and ``missing_too``, its first missing
    component, with a placeholder."""
    try:
        st = os.lstat(path)
    except OSError:
        st = None
    if st is not None and not _is_placeholder(st):
        protect.add(os.path.realpath(path))
        return
    if not missing_too or not any(inside(path, r) and path != r for r in writable):
        return
    first = path
    while not os.path.lexists(os.path.dirname(first)):
        first = os.path.dirname(first)
    parent = os.path.dirname(first)
    if os.path.islink(parent) or not os.path.isdir(parent):
        return  # under a link or a file: nothing to create there
    out.placeholders.append(Placeholder(first, _as_file(first, path)))
    protect.add(first)


def _as_file(first: str, path: str) -> bool:
    """A placeholder is an empty file (cheap to make and remove: no block to allocate) unless a
    folder must be there for others while it is: a missing folder on the way, a ``.git`` in a
    repository (git looks past an empty folder to the enclosing one, not past a file), an
    ``AGENTS.md`` beside a ``CLAUDE.md`` (the instructions reader skips a folder)."""
    if first != path:
        return False
    parent, name = os.path.split(path)
    if name == ".git":
        return not any(os.path.lexists(os.path.join(a, ".git")) for a in _ancestors(os.path.dirname(parent)))
    if name == "AGENTS.md":
        return not os.path.lexists(os.path.join(parent, "CLAUDE.md"))
    return True


def _ancestors(path: str) -> Iterator[str]:
    while True:
        yield path
        if path == "/":
            return
        path = os.path.dirname(path)


def _is_placeholder(st: os.stat_result) -> bool:
    empty = stat.S_ISDIR(st.st_mode) or (stat.S_ISREG(st.st_mode) and st.st_size == 0)
    return empty and stat.S_IMODE(st.st_mode) == 0


def _nested(folder: str, level: int, skip: set[str], protect: set[str]) -> None:
    """Protected names among the entries ``level`` levels below a root (the top's are guarded
    already), down to NESTED_DEPTH; links are not followed, hidden places not entered."""
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return
    for entry in entries:
        if entry.name in _NESTED:
            if level > 1 and not _is_placeholder(entry.stat(follow_symlinks=False)):
                protect.add(os.path.realpath(entry.path))
        elif (
            level < NESTED_DEPTH
            and entry.name not in _PRUNE
            and entry.path not in skip
            and entry.is_dir(follow_symlinks=False)
        ):
            _nested(entry.path, level + 1, skip, protect)


def _parent_resolved(path: str) -> str:
    return os.path.join(os.path.realpath(os.path.dirname(path)), os.path.basename(path))


def _follow_git(path: str, protect: set[str]) -> None:
    """For a ``.git``: the git directory its pointer file names, and the common directory either
    names (``commondir``) — what git reads its config and hooks from."""
    if os.path.basename(path) != ".git":
        return
    gitdir = path
    if os.path.isfile(path):
        try:
            with open(path, encoding="utf-8", errors="replace") as pointer:
                text = pointer.read(4096).strip()
        except OSError:
            return
        if not text.startswith("gitdir:"):
            return
        gitdir = os.path.realpath(os.path.join(os.path.dirname(path), text.removeprefix("gitdir:").strip()))
        protect.add(gitdir)
    try:
        with open(os.path.join(gitdir, "commondir"), encoding="utf-8", errors="replace") as common:
            protect.add(os.path.realpath(os.path.join(gitdir, common.read(4096).strip())))
    except OSError:
        pass


def _assemble(out: Layout, writable: list[str], hides: list[str], protect: set[str], empty: str) -> None:
    """The mounts, shallowest path first (at one path: bind, protect, hide): the roots, the pins
    and protections a root shows (not under a hide), every hide."""

    def shown(path: str) -> bool:
        root = max((_depth(r) for r in writable if inside(path, r)), default=None)
        hide = max((_depth(h) for h in hides if inside(path, h)), default=None)
        return root is not None and (hide is None or root > hide)

    made = {p.path for p in out.placeholders}  # not there yet: made once the layout is held
    kept = {p for p in protect if shown(p) and (p in made or os.path.lexists(p))}
    kept = {p for p in kept if not any(p != q and inside(p, q) for q in kept)}
    pins: set[str] = set()  # the folders between a root and what it guards: not to be moved aside
    for path in kept | {h for h in hides if any(inside(h, r) and h != r for r in writable)}:
        root = max((r for r in writable if inside(path, r)), key=_depth)
        at = os.path.dirname(path)
        while at != root and inside(at, root):
            if shown(at) and not any(inside(at, q) for q in kept):
                pins.add(at)
            at = os.path.dirname(at)
    mounts = [Mount(_depth(r), BIND, r) for r in writable]
    mounts += [Mount(_depth(p), BIND, p) for p in pins - set(writable)]
    mounts += [Mount(_depth(p), PROTECT, p) for p in kept]
    for hide in hides:
        mounts.append(Mount(_depth(hide), HIDE, hide, "" if os.path.isdir(hide) else empty))
    out.mounts = sorted(mounts)
    out.placeholders = [p for p in out.placeholders if p.path in kept]


@contextlib.contextmanager
def held(settings: Settings) -> Iterator[Layout]:
    """The layout of one call, its placeholders made and held until the block ends, then removed
    by the last call using them."""
    plan = layout(settings)
    locks = [_lock(parent) for parent in sorted({p.parent for p in plan.placeholders})]
    try:
        for placeholder in plan.placeholders:
            _make(placeholder)
        yield plan
    finally:
        for fd in locks:
            if fd is not None:
                os.close(fd)
        _sweep(plan.placeholders)


def _lock(folder: str) -> int | None:
    """A shared lock on ``folder`` (a sweep there waits for it), or None when it cannot be opened."""
    try:
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError:
        return None
    deadline = time.monotonic() + _LOCK_WAIT
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
            return fd
        except BlockingIOError:
            if time.monotonic() > deadline:
                return fd  # held for long: not a sweep of ours
            time.sleep(0.002)


def _make(placeholder: Placeholder) -> None:
    try:
        if placeholder.is_file:
            os.close(os.open(placeholder.path, os.O_CREAT | os.O_EXCL | os.O_WRONLY | os.O_CLOEXEC, 0))
        else:
            os.mkdir(placeholder.path, 0)
    except FileExistsError:
        pass  # another call's placeholder, or the place itself, just made: bound read-only all the same
    except OSError as exc:
        raise Unconfinable(f"cannot guard {placeholder.path} ({exc.strerror})") from None


def _sweep(placeholders: list[Placeholder]) -> None:
    """Remove the placeholders no other call holds (an exclusive lock on their folder, taken at once)."""
    by_parent: dict[str, list[str]] = {}
    for placeholder in placeholders:
        by_parent.setdefault(placeholder.parent, []).append(placeholder.path)
    for parent, paths in by_parent.items():
        try:
            fd = os.open(parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        except OSError:
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            continue  # another call uses them: the last one out removes them
        try:
            for path in paths:
                with contextlib.suppress(OSError):
                    st = os.lstat(path)
                    if _is_placeholder(st):
                        (os.rmdir if stat.S_ISDIR(st.st_mode) else os.unlink)(path)
        finally:
            os.close(fd)
