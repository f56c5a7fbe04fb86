"""``shard.cli.main``: a process that kept its parser (the warm template, once for every runtime it
forks: issue 31) parses with it and builds none; any other builds the parser of the command its line
names, alone (``shard.cli.parser``)."""

from __future__ import annotations

import argparse
import json

import pytest

from shard.cli import main as main_module


def test_main_parses_with_the_kept_parser_and_builds_none(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(main_module, "_kept", [])
    main_module.keep_parser()
    assert len(main_module._kept) == 1

    def no_build() -> None:
        raise AssertionError("main built a parser")

    monkeypatch.setattr(main_module, "build_parser", no_build)
    assert main_module.main(["schema"]) == 0
    assert "properties" in json.dumps(json.loads(capsys.readouterr().out))
    with pytest.raises(SystemExit) as exited:
        main_module.main(["agent"])  # the kept parser's own usage error: --stdio is required
    assert exited.value.code == 2
    assert "--stdio" in capsys.readouterr().err


def test_without_a_kept_parser_main_builds_the_named_commands_own(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(main_module, "_kept", [])
    built: list[str | None] = []
    real = main_module.build_parser

    def counted(only: str | None = None) -> argparse.ArgumentParser:
        built.append(only)
        return real(only)

    monkeypatch.setattr(main_module, "build_parser", counted)
    assert main_module.main(["schema"]) == 0
    capsys.readouterr()
    assert built == ["schema"], "the parser of the command the line names, alone"
    assert main_module._kept == []
