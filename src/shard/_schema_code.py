"""The protocol's model schemas, kept between runs (issue 31).

A wire model is built at its first use (``defer_build``): pydantic generates its core schema in
Python, then pydantic-core makes the validator and serializer from it in microseconds. The
generation is nearly all of it: a one-shot's first turn builds 37 models in ~13 ms, a fresh daemon
a dozen after it listens. A model's core schema depends only on the protocol's sources and
pydantic, so it is kept like a ``.pyc``: in Shard's ``__pycache__`` (``_kept_file``: its trust
rules), one pickled schema per model (classes and validators in it are pickled by name), under a
header naming this Python, pydantic, pydantic-core and the size and time of every file of
``shard/protocol`` (and ``shard/_version.py``, the one module outside it they read) — any change
there and the whole file is ignored.

:func:`complete` finishes a model from its kept schema as pydantic's ``complete_model_class`` does
after it has generated one (computed fields, deprecated fields, the validator and serializer, the
lazy ``__signature__``, the completion hook); anything unexpected and the model is built as
before. :func:`keep` records a schema pydantic generated. What a process recorded is written as it
leaves (``_leaving``), never under ``-B``; ``python -m shard.cli.warm_cache`` builds the file.

A schema names each model, enum or dataclass in it by a reference pydantic makes of the class's
module, name and ``id()``: an address of the process that generated it. The file gathers entries
from many processes, so a kept schema's references are kept without their ids and given this
process's ids as they are read (``_schema_refs``): a model taken from the file names its parts
exactly as a model generated here does. With the writer's ids, a process holding both
named one class two ways, and the protocol's JSON Schema had ``TreeNode`` twice under other names
and not at all under its own (``test_schema_code``).
"""

from __future__ import annotations

import os
import sys
from typing import Any

from shard import _kept_file, _leaving

_VERSION = 2  # 2: references without the writer's ids
_PACKAGE = "shard.protocol."


class KeptSchemas:
    def __init__(self, path: str, head: tuple[Any, ...]) -> None:
        self.path = path
        self.head = head
        self.kept: dict[str, bytes] = _kept_file.load(path, head)
        self.new: dict[str, bytes] = {}
        self.hits = 0
        self.misses = 0

    def complete(self, cls: Any) -> bool:
        """Finish ``cls`` from its kept schema; False (nothing changed) when there is none."""
        data = self.kept.get(_key(cls))
        if data is None or not cls.__pydantic_fields_complete__:
            return False
        from shard import _schema_refs

        try:
            schema = _schema_refs.loads(data)  # a file as trusted as the .pyc beside it
            _finish(cls, schema)
        except Exception:  # an entry this pydantic cannot take: it is built as before
            return False
        self.hits += 1
        return True

    def keep(self, cls: Any) -> None:
        """Record the schema pydantic generated for ``cls``."""
        key = _key(cls)
        if key in self.kept or key in self.new:
            return
        from shard import _schema_refs

        try:
            data = _schema_refs.dumps(cls.__pydantic_core_schema__, _PACKAGE)
        except Exception:  # something pickle cannot name, or a reference without a class: not kept
            return
        self.misses += 1
        if not self.new and self is _installed:
            _leaving.on_leaving(save)
        self.new[key] = data

    def save(self, *, force: bool = False) -> bool:
        if sys.dont_write_bytecode and not force:
            return False
        return _kept_file.add(self.path, self.head, self.kept, self.new)


def _key(cls: Any) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


def _finish(cls: Any, schema: Any) -> None:
    """What ``pydantic._internal._model_construction.complete_model_class`` does once it has the
    schema (pydantic's version is in the header: another one never gets here)."""
    from functools import partial

    from pydantic._internal import _model_construction as done  # what complete_model_class uses

    config = done.ConfigWrapper(cls.model_config, check=False)
    core_config = config.core_config(title=cls.__name__)
    validator = done.create_schema_validator(
        schema, cls, cls.__module__, cls.__qualname__, "BaseModel", core_config, config.plugin_settings
    )
    serializer = done.SchemaSerializer(schema, core_config)
    computed = cls.__pydantic_decorators__.computed_fields
    cls.__pydantic_computed_fields__ = {k: v.info for k, v in computed.items()}
    done.set_deprecated_descriptors(cls)
    cls.__pydantic_core_schema__ = schema
    cls.__pydantic_validator__ = validator
    cls.__pydantic_serializer__ = serializer
    cls.__signature__ = done.LazyClassAttribute(
        "__signature__",
        partial(
            done.generate_pydantic_signature,
            init=cls.__init__,
            fields=cls.__pydantic_fields__,
            validate_by_alias=config.validate_by_alias,
            extra=config.extra,
        ),
    )
    cls.__pydantic_complete__ = True
    cls.__pydantic_on_complete__()


def head() -> tuple[Any, ...]:
    """This Python, pydantic, pydantic-core, and every file of ``shard/protocol`` (size, time)."""
    import pydantic
    import pydantic_core

    here = os.path.dirname(os.path.realpath(__file__))
    folder = os.path.join(here, "protocol")
    paths = [os.path.join(folder, name) for name in sorted(os.listdir(folder)) if name.endswith(".py")]
    paths.append(os.path.join(here, "_version.py"))  # the one module outside it they read (a default)
    files = []
    for path in paths:
        st = os.stat(path)
        files.append((os.path.relpath(path, here), st.st_size, st.st_mtime_ns))
    return _VERSION, sys.hexversion, pydantic.VERSION, pydantic_core.__version__, tuple(files)


_path: str | None = None
_installed: KeptSchemas | None = None


def cache_path() -> str:
    return _kept_file.cache_path("model-schemas")


def install(path: str | None = None) -> None:
    """Complete the protocol's models from kept schemas (once per process; a fork keeps it). The
    file is read at the first model's build, when pydantic is loaded: a command that builds none
    reads nothing."""
    global _path
    if _path is None:
        _path = path or cache_path()


def _kept() -> KeptSchemas | None:
    global _installed
    if _installed is None and _path is not None:
        _installed = KeptSchemas(_path, head())
    return _installed


def complete(cls: Any) -> bool:
    """:meth:`KeptSchemas.complete` for a protocol model, when installed."""
    kept = _kept() if cls.__module__.startswith(_PACKAGE) else None
    return kept is not None and kept.complete(cls)


def keep(cls: Any) -> None:
    kept = _kept() if cls.__module__.startswith(_PACKAGE) and cls.__pydantic_complete__ else None
    if kept is not None:
        kept.keep(cls)


def counts() -> tuple[int, int]:
    """(models completed from kept schemas, schemas recorded) in this process so far."""
    return (0, 0) if _installed is None else (_installed.hits, _installed.misses)


def save(*, force: bool = False) -> bool:
    return _installed is not None and _installed.save(force=force)
