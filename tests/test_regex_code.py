"""Regular expressions compiled from kept code (``shard._regex_code``, issue 31)."""

from __future__ import annotations

import _sre
import marshal
import re
import subprocess
import sys
import textwrap
from pathlib import Path
from re import _compiler

import pytest

import kept_build
from shard import _kept_file, _regex_code
from shard._regex_code import KeptPatterns

PATTERNS: list[tuple[str | bytes, int]] = [
    (r"(?P<word>\w+)\s+(?P=word)", 0),
    (r"^\s*(#|//)\s*(?P<tag>TODO|FIXME)\b", re.MULTILINE),
    (r"straße|ǅ", re.IGNORECASE),
    (rb"[\x00-\x1f\x7f]+", 0),
    (r"(a|b)*?c{2,5}(?=d)(?<!e)", re.ASCII | re.DOTALL),
    (r"", 0),
]
SUBJECTS: list[str | bytes] = [
    "the the cat",
    "  # TODO: x\n// FIXME",
    "STRASSE Straße ǆ",
    b"a\x01\x7fb",
    "ababccd",
    "",
]


def _kept(tmp_path: Path, *, record: bool) -> KeptPatterns:
    return KeptPatterns(str(tmp_path / "patterns.marshal"), _compiler.compile, _sre, record=record)


def _same(a: re.Pattern, b: re.Pattern, subject: str | bytes) -> None:
    assert (a.pattern, a.flags, a.groups, a.groupindex) == (b.pattern, b.flags, b.groups, b.groupindex)
    if type(subject) is type(a.pattern):
        assert [m.span() for m in a.finditer(subject)] == [m.span() for m in b.finditer(subject)]  # type: ignore[arg-type]
        assert [m.groups() for m in a.finditer(subject)] == [m.groups() for m in b.finditer(subject)]  # type: ignore[arg-type]


def test_a_pattern_compiled_from_kept_code_behaves_as_one_compiled_now(tmp_path: Path) -> None:
    """Recorded once, then every pattern comes from the file: the same flags, groups and names,
    and the same matches, as ``re`` compiling it."""
    recording = _kept(tmp_path, record=True)
    real = _compiler._sre
    _compiler._sre = recording._recorder  # type: ignore[attr-defined]
    try:
        for pattern, flags in PATTERNS:
            recording.compile(pattern, flags)
    finally:
        _compiler._sre = real  # type: ignore[attr-defined]
    assert recording.misses == len(PATTERNS)
    assert recording.save()
    kept = _kept(tmp_path, record=False)
    for (pattern, flags), subject in zip(PATTERNS, SUBJECTS, strict=True):
        _same(kept.compile(pattern, flags), _compiler.compile(pattern, flags), subject)
    assert (kept.hits, kept.misses) == (len(PATTERNS), 0)
    assert kept.compile(r"(?P<other>x)", 0).groupindex == {"other": 1}  # not kept: compiled
    assert kept.misses == 1


def test_a_running_process_keeps_nothing(tmp_path: Path) -> None:
    """Only ``warm_cache`` records: a pattern a user or a model wrote (a search) never reaches the
    disk, whatever the process does on its way out."""
    path = tmp_path / "patterns.marshal"
    probe = textwrap.dedent(
        f"""
        import re, _sre
        from re import _compiler
        from shard import _regex_code
        _regex_code.install({str(path)!r})
        assert _compiler._sre is _sre
        assert re.compile(r"secret-project-[0-9]+").match("secret-project-7")
        assert _regex_code.counts() == (0, 1)
        assert _regex_code.save() is False
        """
    )
    subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True)
    assert not path.exists()


def test_code_the_engine_refuses_is_compiled_again(tmp_path: Path) -> None:
    """An entry whose code ``_sre`` does not accept (a damaged or foreign file that passed the
    header check) is not used: the pattern compiles as without the file."""
    head = _regex_code._head(_sre)
    _kept_file.write(str(tmp_path / "patterns.marshal"), head, {("a+b", 0): (32, [1, 2, 3], 0, {}, (None,))})
    kept = _kept(tmp_path, record=False)
    assert kept.kept
    assert kept.compile("a+b", 0).fullmatch("aab")
    assert (kept.hits, kept.misses) == (0, 1)


@pytest.mark.parametrize(
    "head", [(99, sys.hexversion, _sre.MAGIC, _sre.CODESIZE), (1, 0, _sre.MAGIC, 4), None]
)
def test_a_file_of_another_python_or_sre_is_ignored(tmp_path: Path, head: object) -> None:
    path = tmp_path / "patterns.marshal"
    if head is None:
        path.write_bytes(b"not marshal")
    else:
        path.write_bytes(marshal.dumps((head, {("a", 0): (32, [], 0, {}, (None,))})))
    path.chmod(0o644)
    assert _kept(tmp_path, record=False).kept == {}


def test_a_file_others_may_write_is_not_read(tmp_path: Path) -> None:
    recording = _kept(tmp_path, record=True)
    real = _compiler._sre
    _compiler._sre = recording._recorder  # type: ignore[attr-defined]
    try:
        recording.compile("x+", 0)
    finally:
        _compiler._sre = real  # type: ignore[attr-defined]
    assert recording.save()
    assert _kept(tmp_path, record=False).kept
    (tmp_path / "patterns.marshal").chmod(0o666)
    assert _kept(tmp_path, record=False).kept == {}


def test_the_built_file_covers_every_start_path(tmp_path: Path) -> None:
    """``python -m shard.cli.warm_cache`` (what bootstrap runs) records what the template, the daemon
    and a direct ``shard run`` compile at import and at a first parse: a process that installs it
    first and does the same compiles no pattern at all."""
    _, patterns, printed = kept_build.build(tmp_path)
    built = kept_build.compiled(printed, "patterns")
    assert built > 40, printed
    assert kept_build.counts_on_the_start_paths("_regex_code", patterns) == (built, 0)


def test_every_shard_command_compiles_from_the_kept_file() -> None:
    """``shard.cli.main`` (every ``shard`` command) installs it before anything it imports compiles
    a pattern; the template installs it before its own imports (``cli/forkserver.py``)."""
    path = kept_build.printed_once_shard_starts("__import__('re')._compiler.compile.__self__.path")
    assert path == _regex_code.cache_path()
    assert kept_build.installed_before_the_templates_imports("_regex_code.install()")
