"""The layers of DESIGN §3: imports point down only, and L0 never imports asyncio; and the shape
of src/ within the layers: no import cycles, counting every import a reader sees, and no module so
long it cannot be read in one sitting."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "shard"

# package -> the shard packages it may import (besides itself)
ALLOWED: dict[str, set[str]] = {
    "protocol": set(),
    "agent": {"protocol"},
    "daemon": {"protocol"},
    "client": {"protocol"},
    "testing": {"protocol", "agent", "daemon"},
    "acp": {"protocol", "client"},
    "tui": {"protocol", "client"},
    "cli": {"protocol", "agent", "daemon", "client", "acp", "tui"},
}
L0_THIRD_PARTY = {"pydantic", "pydantic_core", "orjson"}


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


def _package(path: Path) -> str | None:
    rel = path.relative_to(SRC).parts
    return rel[0] if len(rel) > 1 else None


def test_imports_point_down_only():
    """Every shard module imports only its own package and the layers below it."""
    violations = []
    for path in SRC.rglob("*.py"):
        pkg = _package(path)
        if pkg is None:
            continue
        assert pkg in ALLOWED, f"new package {pkg} needs a layer in this test"
        for name in _imports(path):
            parts = name.split(".")
            if parts[0] != "shard" or len(parts) < 2 or parts[1].startswith("_"):
                continue
            if parts[1] != pkg and parts[1] not in ALLOWED[pkg]:
                violations.append(f"{path.relative_to(SRC)} imports {name}")
    assert violations == []


def test_protocol_layer_uses_only_stdlib_pydantic_orjson_and_no_asyncio():
    """shard.protocol is sans-I/O: no asyncio, and no third-party package beyond its three."""
    stdlib = set(sys.stdlib_module_names)
    for path in (SRC / "protocol").rglob("*.py"):
        for name in _imports(path):
            top = name.split(".")[0]
            assert top != "asyncio", f"{path.name} imports asyncio"
            assert top in stdlib or top in L0_THIRD_PARTY or top == "shard", f"{path.name} imports {name}"


def test_start_up_path_imports_neither_pydantic_nor_asyncio():
    """What runs before hello (CLI parsing, config, session, catalog) stays light: the heavy modules
    load after hello is written."""
    code = (
        "import sys\n"
        "import shard.cli.main, shard.cli.agent, shard.agent.boot\n"
        "heavy = ('pydantic', 'asyncio', 'anthropic', 'openai', 'mcp', 'textual', 'rich')\n"
        "heavy = sorted(m for m in heavy if m in sys.modules)\n"
        "print(','.join(heavy))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_only_shard_attach_loads_textual():
    """Textual (and rich) load only for ``shard attach``: not for the daemon, the runtime or the SDK."""
    code = (
        "import sys\n"
        "import shard.cli.main, shard.daemon.server, shard.agent.runtime, shard.client, shard.cli.attach\n"
        "print(sorted(m for m in ('textual', 'rich') if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_the_runtime_loads_the_mcp_sdk_only_for_a_turn_that_needs_it():
    """The ``mcp`` SDK (and anyio, httpx2, starlette with it) is imported by
    ``shard.agent.mcp.connection`` alone, when a config with ``[[mcp_servers]]`` starts its servers:
    the runtime and its transports do not load it."""
    code = (
        "import sys, shard.agent.stdio, shard.agent.runtime, shard.cli.run, shard.agent.mcp.host\n"
        "print(sorted(m for m in ('mcp', 'anyio', 'httpx2') if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_the_daemon_runs_without_aiohttp():
    """aiohttp is a dev-only dependency (a test client, provider test servers): the daemon's own
    HTTP and WebSocket code must not load it."""
    code = "import sys, shard.daemon.server\nprint('aiohttp' in sys.modules)\n"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


# --- import cycles ---------------------------------------------------------------------------------
#
# The module graph of src/shard: an edge for every import of a shard module a reader sees — at module
# level, inside a function (a deferred import hides a cycle from the interpreter, not from the
# reader: the two modules still need each other) and under ``if TYPE_CHECKING:`` (a type-only import
# is a dependency too: the module cannot be understood, or type-checked, without the other). ``from
# pkg import name`` is an edge to ``pkg`` — its ``__init__`` runs and is read — and to ``pkg.name``
# when that is a module; ``import pkg.mod`` is an edge to ``pkg.mod`` alone.


def _module_name(path: Path) -> str:
    parts = path.relative_to(SRC.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imported_modules(source: str, module: str, is_package: bool, known: set[str]) -> set[str]:
    """The shard modules ``module`` imports (``known``: every module there is)."""
    package = module if is_package else module.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                name = alias.name
                while name and name not in known:
                    name = name.rpartition(".")[0]
                found.add(name)
            continue
        if not isinstance(node, ast.ImportFrom):
            continue
        base = node.module or ""
        if node.level:
            up = package.split(".")[: len(package.split(".")) - (node.level - 1)]
            base = ".".join([*up, *([node.module] if node.module else [])])
        found.add(base)
        for alias in node.names:
            found.add(f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base)
    return {name for name in found if name in known and name != module}


def _import_graph() -> dict[str, set[str]]:
    paths = {_module_name(p): p for p in SRC.rglob("*.py")}
    known = set(paths)
    graph = {
        name: _imported_modules(path.read_text(), name, path.name == "__init__.py", known)
        for name, path in paths.items()
    }
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[set[str]]:
    """The strongly connected components with more than one module (Tarjan, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[set[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, edges = work[-1]
            for nxt in edges:
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(graph[nxt]))))
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = set()
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.add(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(component)
    return found


def test_the_cycle_finder_counts_every_import_a_reader_sees():
    """The finder itself: imports inside functions, under TYPE_CHECKING and relative ones count;
    ``from pkg import mod`` is an edge to the package's ``__init__`` too; a cycle through three
    modules is one component."""
    known = {"shard.a", "shard.b", "shard.c", "shard.d", "shard.pkg", "shard.pkg.mod"}
    source = (
        "from typing import TYPE_CHECKING\n"
        "from . import b\n"
        "from shard.pkg import mod\n"
        "if TYPE_CHECKING:\n    from shard import d\n"
        "def later():\n    import shard.c\n"
    )
    found = _imported_modules(source, "shard.a", False, known)
    assert found == {"shard.b", "shard.pkg", "shard.pkg.mod", "shard.c", "shard.d"}
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": set(), "e": {"e"}}
    assert _cycles(graph) == [{"a", "b", "c"}]


def test_a_module_importing_its_own_package_init_is_a_cycle():
    """``from shard.pkg import mod`` inside ``shard.pkg.other`` runs ``shard/pkg/__init__.py``; when
    that imports ``other`` back, the two need each other."""
    known = {"shard.pkg", "shard.pkg.mod", "shard.pkg.other"}
    graph = {
        "shard.pkg": _imported_modules("from shard.pkg.other import X\n", "shard.pkg", True, known),
        "shard.pkg.other": _imported_modules("from shard.pkg import mod\n", "shard.pkg.other", False, known),
        "shard.pkg.mod": set(),
    }
    assert _cycles(graph) == [{"shard.pkg", "shard.pkg.other"}]


def test_no_import_cycles():
    """Modules that import each other cannot be read, tested or changed one at a time."""
    assert [sorted(c) for c in _cycles(_import_graph())] == []


# --- module size -----------------------------------------------------------------------------------

MAX_LINES = 450
# Over the limit, each with the work that brings it under. A module that comes under must leave the
# list (the test says so), so the list only shrinks.
OVER_FOR_NOW: dict[str, str] = {}


def test_no_module_is_longer_than_450_lines():
    """A module is small enough to read in one sitting (STYLE.md: small modules named for what
    they hold)."""
    lengths = {str(p.relative_to(SRC)): len(p.read_text().splitlines()) for p in SRC.rglob("*.py")}
    over = {name: n for name, n in lengths.items() if n > MAX_LINES}
    assert sorted(set(over) - set(OVER_FOR_NOW)) == [], over
    assert sorted(set(OVER_FOR_NOW) - set(over)) == [], "under the limit now: remove from OVER_FOR_NOW"
