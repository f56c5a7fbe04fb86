"""The repository stands on its own: no tracked file links outside it.

A link that leaves the checkout (to the steering folder that lay beside the project's first
working copies) is broken in every clone. No tracked file may name that folder, and every relative
link of a Markdown file must lead to a tracked file inside the repository — and to a heading that
exists, when it names one. Web addresses are fine: they do not depend on where the checkout lies.
"""

from __future__ import annotations

import re
import subprocess
from collections import Counter
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
_LINK = re.compile(r"\]\(([^)\s]+)\)")
_OUTSIDE = "../" + "shared/"  # spelled in two parts so that this file does not name it
_EXTERNAL = ("http://", "https://", "mailto:")


def tracked() -> list[Path]:
    try:
        out = subprocess.run(
            ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True
        ).stdout.decode()
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout")
    return [ROOT / name for name in out.split("\0") if name]


def text_of(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except (UnicodeDecodeError, OSError):
        return None


def anchors(path: Path) -> set[str]:
    """The anchors GitHub gives the headings of a Markdown file (repeats get ``-1``, ``-2``…)."""
    seen: Counter[str] = Counter()
    found = set()
    in_code = False
    for line in (text_of(path) or "").splitlines():
        if line.startswith("```"):
            in_code = not in_code
        if in_code or not line.startswith("#"):
            continue
        heading = line.lstrip("#").strip().lower().replace("`", "")
        base = re.sub(r"[^\w\- ]", "", heading).replace(" ", "-")
        found.add(base if not seen[base] else f"{base}-{seen[base]}")
        seen[base] += 1
    return found


def test_no_tracked_file_links_outside_the_repository():
    """No tracked file names the steering folder beside the project, and every relative link of a
    tracked Markdown file resolves to a tracked file inside the repository (and to an existing
    heading when it has an anchor)."""
    files = tracked()
    names = set(files)
    broken = []
    for path in files:
        text = text_of(path)
        if text is None:
            continue
        where = path.relative_to(ROOT)
        if _OUTSIDE in text:
            broken.append(f"{where}: names {_OUTSIDE}…, which is not in the repository")
        for target in _LINK.findall(text) if path.suffix == ".md" else []:
            if target.startswith(_EXTERNAL):
                continue
            file_part, _, anchor = target.partition("#")
            dest = (path.parent / file_part).resolve() if file_part else path
            if not dest.is_relative_to(ROOT) or (dest not in names and not dest.is_dir()):
                broken.append(f"{where}: ({target}) leads outside the repository or to nothing")
            elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
                broken.append(f"{where}: ({target}) names a heading that {dest.name} does not have")
    assert broken == []


def test_the_readme_and_docs_link_the_wire_reference():
    """The wire reference the README and ARCHITECTURE point to is in the repository."""
    assert "(docs/protocol.md)" in (ROOT / "README.md").read_text()
    assert "(protocol.md)" in (ROOT / "docs" / "ARCHITECTURE.md").read_text()
