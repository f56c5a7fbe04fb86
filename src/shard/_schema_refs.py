"""A model's core schema pickled so that another process can take it (``_schema_code``, issue 31).

Pydantic names each model, enum or dataclass in a schema by a reference of the class's module,
name and ``id()``: ``shard.protocol.render.TreeNode:140…``, an address of the process that made the
schema. :func:`dumps` keeps each reference as ``(module, name)`` and :func:`loads` gives it this
process's id back, so a schema read from the file names its parts exactly as one generated here. A
schema with a reference that cannot be carried so (a generic's, a class no module holds) is not
kept. Imported only when a schema is read or kept. The C pickler is used directly: ``pickle.py``
itself (its Python pickler, ~1 ms to import) is on no start path.
"""

from __future__ import annotations

import io
import re
import sys
from typing import Any

try:
    import _pickle as pickle
except ImportError:  # a Python without the C pickler
    import pickle  # type: ignore[no-redef]

# An id as pydantic writes one into a reference: any string holding so long a number must be a
# reference this module can carry to another process, or the schema is not kept.
_LONG_NUMBER = re.compile(r"\d{8,}")
_REFERENCE = re.compile(r"([\w.]+):(\d+)")


class _Keeping(pickle.Pickler):
    """Pickles a schema with each reference ``module.Name:<id>`` as ``(module, Name)``; a module
    outside ``within`` (whose changes the file's header does not see) is refused."""

    def __init__(self, out: io.BytesIO, within: str) -> None:
        super().__init__(out, protocol=-1)  # the highest
        self.within = within

    def persistent_id(self, obj: Any) -> Any:
        if type(obj) is not str or not _LONG_NUMBER.search(obj):
            return None
        found = _REFERENCE.fullmatch(obj)
        if found is None:
            raise ValueError(f"a reference this file cannot carry: {obj!r}")  # generics and the like
        name, ident = found.group(1), int(found.group(2))
        parts = name.split(".")
        for cut in range(len(parts) - 1, 0, -1):
            module, qualname = ".".join(parts[:cut]), ".".join(parts[cut:])
            if module in sys.modules and id(_named(module, qualname)) == ident:
                if not module.startswith(self.within):
                    raise ValueError(f"a reference outside {self.within}: {obj!r}")
                return (module, qualname)
        raise ValueError(f"a reference to no class of a module: {obj!r}")


class _Reading(pickle.Unpickler):
    """Unpickles what :class:`_Keeping` wrote, each reference with this process's id."""

    def persistent_load(self, pid: Any) -> str:
        module, qualname = pid
        found = _named(module, qualname)
        if found is None:
            raise LookupError(f"{module} holds no {qualname}")  # the model is generated instead
        return f"{module}.{qualname}:{id(found)}"


def _named(module: str, qualname: str) -> Any:
    """``module``'s ``qualname`` (None when there is none)."""
    found: Any = sys.modules.get(module)
    if found is None:
        import importlib

        found = importlib.import_module(module)
    for part in qualname.split("."):
        found = getattr(found, part, None)
    return found


def dumps(schema: Any, within: str) -> bytes:
    """``schema`` pickled, its references without this process's ids; ValueError for a reference
    that cannot be carried, or to a class of a module whose name does not start with ``within``."""
    out = io.BytesIO()
    _Keeping(out, within).dump(schema)
    return out.getvalue()


def loads(data: bytes) -> Any:
    """What :func:`dumps` made, each reference with this process's id."""
    return _Reading(io.BytesIO(data)).load()
