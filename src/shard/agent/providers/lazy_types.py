"""``openai.types`` and ``anthropic.types`` packages that load what is used, not everything they
name (stdlib only).

Importing ``openai`` ran every ``openai/types/**/__init__.py``, and each imports all of its
package: the Responses, Evals and graders models (some 400 modules, 100 ms and more here) that a
Chat Completions client never touches; anthropic's beta types likewise (about 600 of its 2,800).
Those ``__init__`` files hold nothing but relative imports (``from .chat_completion import
ChatCompletion as ChatCompletion``). :func:`install` puts a finder in front of the import system
that, for those packages only, runs such a file as a table instead: a name is imported from its
submodule the first time it is looked up (module ``__getattr__``, PEP 562) and then kept; the
submodules eager code would have bound are bound the same way. ``from openai.types.chat import
ChatCompletionChunk`` and ``openai.types.Batch`` work as before. A package whose ``__init__`` holds
anything but relative imports is run as it is.
"""

from __future__ import annotations

import importlib
import importlib.machinery
import sys
from collections.abc import Sequence
from types import ModuleType
from typing import Any

PACKAGES = ("openai.types", "anthropic.types")


def lazy_names(source: str, package: str) -> dict[str, tuple[str, str | None]] | None:
    """Name → (module, attribute or None for the module itself) for an ``__init__`` made only of
    relative imports; None when it holds anything else (pure)."""
    import ast  # here, not at the top: phase A installs the finder and must stay light
    import importlib.util

    names: dict[str, tuple[str, str | None]] = {}
    imported: set[str] = set()
    for node in ast.parse(source).body:
        if isinstance(node, ast.ImportFrom) and node.module == "__future__":
            names.update((a.name, ("__future__", a.name)) for a in node.names)  # bound, as eager
            continue
        if not isinstance(node, ast.ImportFrom) or node.level == 0:
            return None
        base = importlib.util.resolve_name("." * node.level + (node.module or ""), package)
        if node.level == 1 and node.module:
            # importing a submodule binds it in the package the first time, as eager code would
            first = node.module.split(".")[0]
            if first not in imported:
                imported.add(first)
                names[first] = (f"{package}.{first}", None)
        for alias in node.names:
            if alias.name == "*":
                return None
            if node.module is None:  # from . import submodule
                names[alias.asname or alias.name] = (f"{base}.{alias.name}", None)
            else:
                names[alias.asname or alias.name] = (base, alias.name)
    return names


class _LazyInit:
    """The loader of a lazy package (duck-typed: ``importlib.abc`` costs 18 ms to import)."""

    def __init__(self, real: Any, origin: str) -> None:
        self.real = real
        self.origin = origin

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return None

    def exec_module(self, module: ModuleType) -> None:
        try:
            with open(self.origin, encoding="utf-8") as f:
                names = lazy_names(f.read(), module.__name__)
        except (OSError, SyntaxError, ValueError):
            names = None  # unreadable here: the package's own loader runs it as it is
        if names is None:
            self.real.exec_module(module)
            return

        def __getattr__(attr: str) -> Any:
            target = names.get(attr)
            if target is None and not attr.startswith("__") and _has_submodule(module, attr):
                target = (f"{module.__name__}.{attr}", None)  # what an import elsewhere would have bound
            if target is None:
                raise AttributeError(f"module {module.__name__!r} has no attribute {attr!r}")
            source = importlib.import_module(target[0])
            value = source if target[1] is None else getattr(source, target[1])
            setattr(module, attr, value)
            return value

        module.__getattr__ = __getattr__  # type: ignore[method-assign]


def _has_submodule(package: ModuleType, name: str) -> bool:
    return any(
        importlib.machinery.PathFinder.find_spec(f"{package.__name__}.{name}", [path]) is not None
        for path in getattr(package, "__path__", ())
    )


class _Finder:
    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if not any(fullname == p or fullname.startswith(p + ".") for p in PACKAGES):
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if (
            spec is None
            or spec.submodule_search_locations is None
            or spec.loader is None
            or not (spec.origin or "").endswith(".py")
        ):
            return None  # a plain module (or one without source): the usual finders load it
        spec.loader = _LazyInit(spec.loader, spec.origin)  # type: ignore[assignment]
        return spec


def install() -> None:
    """Before ``openai`` is imported in this process (idempotent; no effect once it is)."""
    if not any(isinstance(f, _Finder) for f in sys.meta_path):
        sys.meta_path.insert(0, _Finder())
