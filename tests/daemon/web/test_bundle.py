"""The web client's bundle (src/shard/daemon/web/static/) is built from web/ and committed, so a
daemon never needs Node: this fails when the committed bundle is older than its sources or was
edited by hand. It recomputes the hash web/build.mjs writes into bundle.json, the same way."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from shard.daemon.web.static_files import STATIC

WEB = Path(__file__).resolve().parents[3] / "web"
INPUTS = ("build.mjs", "index.html", "package-lock.json", "tsconfig.json")  # as in web/build.mjs
TREES = ("src", "public")
REBUILD = "the committed web bundle is stale: run  cd web && npm ci && npm run build  and commit it"


def sources_hash(web: Path) -> str:
    files = sorted(
        p.relative_to(web).as_posix()
        for t in TREES
        if (web / t).is_dir()
        for p in (web / t).rglob("*")
        if p.is_file()
    )
    digest = hashlib.sha256()
    for name in [*files, *INPUTS]:
        digest.update(name.encode() + b"\0")
        digest.update((web / name).read_bytes())
        digest.update(b"\0")
    return digest.hexdigest()


def manifest() -> dict[str, object]:
    loaded: dict[str, object] = json.loads((STATIC / "bundle.json").read_text())
    return loaded


def test_the_committed_bundle_is_built_from_the_current_sources() -> None:
    assert manifest()["sources"] == sources_hash(WEB), REBUILD


def test_the_committed_bundle_is_the_build_output_unedited() -> None:
    """Every file under static/ is one the build wrote, with the content it wrote."""
    files = manifest()["files"]
    assert isinstance(files, dict)
    on_disk = {p.relative_to(STATIC).as_posix() for p in STATIC.rglob("*") if p.is_file()} - {"bundle.json"}
    assert on_disk == set(files), REBUILD
    for name, sha in files.items():
        assert hashlib.sha256((STATIC / name).read_bytes()).hexdigest() == sha, f"{name}: {REBUILD}"


def test_the_source_hash_moves_with_any_source(tmp_path: Path) -> None:
    """A changed, added or removed source changes the hash (so the staleness test can fail)."""
    for name in INPUTS:
        (tmp_path / name).write_text(name)
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "a.ts").write_text("1")
    first = sources_hash(tmp_path)
    (tmp_path / "src" / "a.ts").write_text("2")
    edited = sources_hash(tmp_path)
    (tmp_path / "src" / "b.ts").write_text("")
    added = sources_hash(tmp_path)
    assert len({first, edited, added}) == 3
