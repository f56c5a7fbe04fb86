"""Which Chromium the browser tests drive (``shard.testing.chromium.chromium_path``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from shard.testing.chromium import chromium_path


def _programs(folder: Path, *names: str) -> Path:
    folder.mkdir()
    for name in names:
        program = folder / name
        program.write_text("#!/bin/sh\n")
        program.chmod(0o755)
    return folder


def test_the_headless_shell_is_driven_before_chromium_and_shard_chromium_before_both(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Debian's ``chromium-headless-shell`` (half the CPU of ``chromium --headless``) when it is on the
    PATH, whichever folder comes first; else ``chromium``; ``SHARD_CHROMIUM`` over both; None when
    there is none (the tests then fail with the one line saying how to install it)."""
    full = _programs(tmp_path / "full", "chromium")
    shell = _programs(tmp_path / "shell", "chromium-headless-shell")
    monkeypatch.delenv("SHARD_CHROMIUM", raising=False)
    monkeypatch.setenv("PATH", f"{full}:{shell}")
    assert chromium_path() == str(shell / "chromium-headless-shell")
    monkeypatch.setenv("PATH", str(full))
    assert chromium_path() == str(full / "chromium")
    monkeypatch.setenv("PATH", str(tmp_path / "nowhere"))
    assert chromium_path() is None
    monkeypatch.setenv("SHARD_CHROMIUM", str(full / "chromium"))
    monkeypatch.setenv("PATH", str(shell))
    assert chromium_path() == str(full / "chromium")
    monkeypatch.setenv("SHARD_CHROMIUM", str(tmp_path / "missing"))
    assert chromium_path() is None
