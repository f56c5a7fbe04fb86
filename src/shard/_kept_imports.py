"""The start paths' modules, found and read from one file (issue 31).

A ``shard`` start imports ~320 modules from source files (Shard's, the standard library's,
pydantic's). For each, Python's path finder looks through the directories of ``sys.path`` (a
``stat`` per suffix tried), then opens and reads its ``.pyc``: ~12 ms of finding and ~10 ms of
reading per one-shot, besides the ~30 ms of unmarshalling the code, which stays. This file holds
the answer to both for the modules ``python -m shard.cli.warm_cache`` imports: where each module is
(its source, package folder and the search path it was found on) and its code as its ``.pyc``
holds it. :func:`install` puts a finder first on ``sys.meta_path`` that answers for those modules
from the file: a ``stat`` of the source, and the file opened, checked and read for the code.

It answers only where Python's own search would find the very same file:

- ``sys.path`` past its first entry is the one recorded, and the first entry (the script's folder,
  or the current one; ``python -P``, how Shard starts its own processes, has none) holds nothing
  named as one of the file's top-level modules — else the file is not used at all;
- no folder the module was searched for in has changed since: every folder of ``sys.path`` for a
  top-level module, its package's folders for a submodule (their ``st_mtime_ns``: a file added,
  removed or renamed in a folder changes it — the test Python's own finder makes to refresh its
  listing of one). An edit that replaced files in ``shard/agent`` sets aside that package's modules
  only, until the next ``warm_cache``;
- the module is asked for on the search path it was found on (a package whose ``__path__`` was
  changed gets Python's search);
- its source has the size and time recorded, else its own ``.pyc`` or source is read as always.

Anything else and it answers nothing for that module, and Python's finders do as they always do.
The file gives code to run, so it is read under ``_kept_file``'s trust rules (this user's or
root's, nobody else may write it, no symlink), the trust a ``.pyc`` beside it already has. Only
``warm_cache`` writes it. Stdlib only, and nothing but what Python has loaded before any script
runs: it is the first thing a ``shard`` command does (``cli/start.py``).
"""

from __future__ import annotations

import _frozen_importlib_external as _bx
import marshal
import os
import sys

from shard import _kept_file

TYPE_CHECKING = False  # typing itself is not loaded yet at the first import of this module
if TYPE_CHECKING:
    from typing import Any

_VERSION = 1
_SUFFIXES = (".py", ".pyc", ".so")

# name: (source, package folders | None, search path | None (top level), size, mtime_ns, offset, length)
Entry = tuple[str, "tuple[str, ...] | None", "tuple[str, ...] | None", int, int, int, int]


def cache_path() -> str:
    return _kept_file.cache_path("kept-imports")


def _search_path() -> list[str]:
    """``sys.path`` but its first entry: the script's or the current folder, which ``python -P``
    (how Shard starts its own processes: ``_python``) leaves off."""
    return sys.path if sys.flags.safe_path else sys.path[1:]


def _head() -> tuple[Any, ...]:
    # -O and -OO read other bytecode (``.opt-1.pyc``: no asserts, no docstrings)
    return (_VERSION, _bx.MAGIC_NUMBER, sys.flags.optimize, tuple(_search_path()))


def _first_entry() -> str | None:
    if sys.flags.safe_path or not sys.path:
        return None
    return sys.path[0] or os.getcwd()


def _shadows(folder: str, tops: frozenset[str]) -> bool:
    """Whether ``folder`` (the first entry of ``sys.path``) holds what Python's finder would take for
    one of ``tops``: a folder of that name (a package, or part of a namespace one), or a source,
    bytecode or extension file (``name.py``, ``name.pyc``, ``name.<tag>.so``). A file with no such
    suffix is no module: the ``shard`` console script beside ``python`` is not."""
    try:
        with os.scandir(folder or ".") as found:
            for item in found:
                stem, dot, _ = item.name.partition(".")
                if stem not in tops:
                    continue
                if item.name.endswith(_SUFFIXES) if dot else item.is_dir():
                    return True
    except OSError:
        # a folder that cannot be listed: Python's finder finds nothing there either; but a file
        # (a script's zip archive) may hold any module
        return os.path.isfile(folder)
    return False


def _stamp(path: str) -> int | None:
    try:
        return os.stat(path).st_mtime_ns
    except OSError:
        return None


class KeptImports:
    """The finder: answers for the file's modules, as long as their sources are the ones recorded."""

    def __init__(
        self, path: str, identity: tuple[int, ...], base: int, entries: dict[str, Entry], changed: set[str]
    ) -> None:
        self.path = path
        self.identity = identity  # the file read at install: device, inode, size, time
        self.base = base  # where the code starts: entries' offsets count from there
        self.entries = entries
        self.changed = changed  # folders changed since the file was written
        self.top_changed = any(folder in changed for folder in _search_path())
        self.hits = 0

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> Any:
        entry = self.entries.get(name)
        if entry is None:
            return None
        source, package, searched, size, mtime, offset, length = entry
        if (None if path is None else tuple(path)) != searched:
            return None
        if self.top_changed if searched is None else not self.changed.isdisjoint(searched):
            return None
        try:
            st = os.stat(source)
        except OSError:
            return None
        if st.st_size != size or st.st_mtime_ns != mtime:
            return None
        loader = _Loader(name, source, self, offset, length)
        locations = None if package is None else list(package)
        return _bx.spec_from_file_location(name, source, loader=loader, submodule_search_locations=locations)

    def invalidate_caches(self) -> None:
        pass

    def read(self, offset: int, length: int) -> bytes:
        """A module's code, from the very file whose index was read. It is opened for each read: no
        descriptor is held for a fork to close (the template's runtimes) or a tool to see, and one
        replaced since (``warm_cache`` again) is not read with the old one's offsets."""
        fd = os.open(self.path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
        try:
            if _identity(os.fstat(fd)) != self.identity:
                raise ValueError("the file was replaced or made writable by others")
            data = os.pread(fd, length, self.base + offset)
        finally:
            os.close(fd)
        if len(data) != length:
            raise ValueError("the file is shorter than its index says")
        return data


class _Loader(_bx.SourceFileLoader):
    """A source file's loader whose first ``get_code`` reads the code kept in the file."""

    def __init__(self, name: str, source: str, kept: KeptImports, offset: int, length: int) -> None:
        super().__init__(name, source)
        self._kept: KeptImports | None = kept
        self._at = (offset, length)

    def get_code(self, fullname: str) -> Any:
        kept, self._kept = self._kept, None  # once: a reload reads the source's own bytecode
        if kept is not None and fullname == self.name:
            offset, length = self._at
            try:
                code = marshal.loads(kept.read(offset, length))
            except (OSError, EOFError, ValueError, TypeError):
                pass
            else:
                kept.hits += 1
                return code
        return super().get_code(fullname)


_installed: KeptImports | None = None


def install(path: str | None = None) -> bool:
    """Answer for the file's modules from now on, when the file holds them for this very search
    path (the module docstring); whether it does."""
    global _installed
    if _installed is not None:
        return True
    path = path or cache_path()
    opened = _kept_file.open_trusted(path)
    if opened is None:
        return False
    fd, st = opened
    try:
        kept = _read(path, fd, st)
    except (OSError, EOFError, ValueError, TypeError):
        kept = None
    finally:
        os.close(fd)
    if kept is None:
        return False
    _installed = kept
    sys.meta_path.insert(0, kept)
    return True


def _identity(st: os.stat_result) -> tuple[int, ...]:
    """What a read checks the file against; a mode others may write changes it too."""
    writable = st.st_mode & 0o022
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_uid, writable)


def _read(path: str, fd: int, st: os.stat_result) -> KeptImports | None:
    size = int.from_bytes(os.pread(fd, 8, 0), "little")
    head, folders, tops, entries = marshal.loads(os.pread(fd, size, 8))
    if head != _head() or not isinstance(entries, dict):
        return None
    first = _first_entry()
    if first is not None and _shadows(first, frozenset(tops)):
        return None
    changed = {folder for folder, stamp in folders.items() if _stamp(folder) != stamp}
    return KeptImports(path, _identity(st), 8 + size, entries, changed)


def counts() -> int:
    """How many modules this process took from the file."""
    return 0 if _installed is None else _installed.hits


def record(path: str, names: list[str]) -> int:
    """Write the file for the modules ``names`` (imported in this process) that Python's search,
    from ``sys.path`` past its first entry, finds as source files; how many it holds."""
    entries: dict[str, Entry] = {}
    payload: list[bytes] = []
    folders: dict[str, int | None] = {folder: _stamp(folder) for folder in _search_path()}
    offset = 0
    for name in sorted(names):
        found = _entry(name)
        if found is None:
            continue
        source, package, searched, code = found
        st = os.stat(source)
        data = marshal.dumps(code)
        payload.append(data)
        entries[name] = (source, package, searched, st.st_size, st.st_mtime_ns, offset, len(data))
        offset += len(data)
        for folder in (*(package or ()), *(searched or ())):
            folders[folder] = _stamp(folder)
    tops = sorted({name.partition(".")[0] for name in entries})
    index = marshal.dumps((_head(), folders, tops, entries))
    data = len(index).to_bytes(8, "little") + index + b"".join(payload)
    return len(entries) if _kept_file.write_bytes(path, data) else 0


def _entry(name: str) -> tuple[str, tuple[str, ...] | None, tuple[str, ...] | None, Any] | None:
    """Where Python's search finds ``name`` and its code, when that is a source file and the very
    module this process imported."""
    module = sys.modules.get(name)
    spec = getattr(module, "__spec__", None)
    if spec is None or type(spec.loader) is not _bx.SourceFileLoader or not spec.has_location:
        return None
    parent = name.rpartition(".")[0]
    searched: tuple[str, ...] | None = None
    if parent:
        searched = tuple(getattr(sys.modules.get(parent), "__path__", ()))
    found = _bx.PathFinder.find_spec(name, _search_path() if searched is None else list(searched))
    if found is None or found.origin != spec.origin or type(found.loader) is not _bx.SourceFileLoader:
        return None
    code = found.loader.get_code(name)
    if found.origin is None or code is None:
        return None
    package = found.submodule_search_locations
    return found.origin, None if package is None else tuple(package), searched, code
