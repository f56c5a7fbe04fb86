"""The layers of DESIGN §3: imports point down only, and L0 never imports asyncio."""

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
    "web": {"protocol"},
    "client": {"protocol"},
    "testing": {"protocol", "agent", "daemon"},
    "cli": {"protocol", "agent", "daemon", "web", "client"},
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
        "heavy = sorted(m for m in ('pydantic', 'asyncio', 'anthropic', 'openai') if m in sys.modules)\n"
        "print(','.join(heavy))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_the_daemon_runs_without_aiohttp():
    """aiohttp is a dev-only dependency (a test client, provider test servers): the daemon's own
    HTTP and WebSocket code must not load it."""
    code = "import sys, shard.daemon.server\nprint('aiohttp' in sys.modules)\n"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
