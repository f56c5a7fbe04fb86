"""docs/protocol.md: its generated tables are exactly what ``scripts/protocol_doc.py`` writes from
the code today, and they cover the whole catalog."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from shard.protocol.errors import ErrorCode
from shard.protocol.schema import protocol_schema

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "protocol_doc.py"
DOC = ROOT / "docs" / "protocol.md"


def test_the_committed_doc_is_what_the_script_generates():
    """A model, a field, a result or an error code changed without regenerating the doc fails here
    (the fix: run scripts/protocol_doc.py and commit docs/protocol.md)."""
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--check"], capture_output=True, text=True, cwd=ROOT, timeout=120
    )
    assert done.returncode == 0, done.stderr


def test_every_message_type_and_error_code_has_its_place():
    """Each command and event of ``shard schema`` has a heading with a field table, and each error
    code a row."""
    text = DOC.read_text()
    schema = protocol_schema()
    for union in schema["anyOf"]:
        for tag in union["discriminator"]["mapping"]:
            assert re.search(
                rf"^#### `{re.escape(tag)}`\n\n(.+\n\n)?\| field \| type \| required \|", text, re.M
            ), tag
    for code in ErrorCode:
        assert f"| `{code.value}` |" in text


def test_a_stale_block_is_found(tmp_path: Path):
    """The check compares against the code, not against itself: a doc whose generated block was
    edited by hand is reported out of date."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("protocol_doc", SCRIPT)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    current = DOC.read_text()
    assert module.render(current) == current
    edited = current.replace("| `message` | string | yes |", "| `message` | number | yes |", 1)
    assert edited != current
    assert module.render(edited) == current
