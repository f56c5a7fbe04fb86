"""Dataclass methods run from kept code (``shard._dataclass_code``, issue 31)."""

from __future__ import annotations

import dataclasses
import marshal
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import kept_build
from shard import _dataclass_code
from shard._dataclass_code import KeptCode, load
from shard._kept_file import trusted
from shard.cli import forkserver


def _classes(kept: KeptCode, monkeypatch: pytest.MonkeyPatch, extra_field: bool = False) -> type:
    """A dataclass with every kind of generated method, made with ``kept`` as dataclasses' exec."""
    monkeypatch.setattr(dataclasses, "exec", kept.exec, raising=False)
    if extra_field:

        @dataclasses.dataclass(frozen=True, slots=True, order=True)
        class Longer:
            x: int
            y: int = 0
            tags: list[str] = dataclasses.field(default_factory=list, compare=False)
            note: str = "x"

        return Longer

    @dataclasses.dataclass(frozen=True, slots=True, order=True)
    class Point:
        x: int
        y: int = 0
        tags: list[str] = dataclasses.field(default_factory=list, compare=False)

    return Point


def _behaviour(cls: type) -> tuple[object, ...]:
    a, b = cls(1, 2), cls(1, 2)
    assert a == b
    assert hash(a) == hash(b)
    assert cls(0) < a
    assert a.tags == []
    assert a.tags is not b.tags
    with pytest.raises(dataclasses.FrozenInstanceError):
        a.x = 5
    return repr(a), a == cls(1, 3), sorted([cls(3), cls(1)]) == [cls(1), cls(3)], cls.__slots__


def test_a_class_made_from_kept_code_behaves_as_one_compiled_now(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first process compiles every method and keeps it; the next one compiles none and gets the
    same class: equality, hash, order, frozen, slots, default factories, repr."""
    path = str(tmp_path / "kept.marshal")
    first = KeptCode(path)
    fresh = _behaviour(_classes(first, monkeypatch))
    assert first.hits == 0
    assert first.misses >= 8
    assert first.save(force=True)
    assert first.new == {}
    assert oct(os.stat(path).st_mode & 0o777) == oct(0o644)

    second = KeptCode(path)
    assert _behaviour(_classes(second, monkeypatch)) == fresh
    assert (second.hits, second.misses) == (first.misses, 0)
    assert second.save(force=True) is False  # nothing new: nothing written


def test_a_changed_class_compiles_again_and_gets_its_own_methods(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An entry is used only for the very text it was compiled from: a class with one more field
    compiles its changed methods, and they take the new field."""
    path = str(tmp_path / "kept.marshal")
    first = KeptCode(path)
    _classes(first, monkeypatch)
    first.save(force=True)
    changed = KeptCode(path)
    cls = _classes(changed, monkeypatch, extra_field=True)
    assert changed.misses >= 3  # its __init__, __repr__, __eq__ … are other texts
    assert cls(1, 2, [], "n").note == "n"
    assert "note='n'" in repr(cls(1, 2, [], "n"))


def test_only_a_file_of_this_user_or_root_that_nobody_else_may_write_is_read(tmp_path: Path) -> None:
    """Its code is run: the trust a .pyc in the same folder has, and no more."""
    assert trusted(1000, 0o100644, 1000)
    assert trusted(0, 0o100644, 1000)  # a system-wide install's, as its .pyc files are
    assert not trusted(1001, 0o100644, 1000)  # another user's
    assert not trusted(1000, 0o100664, 1000)  # group-writable
    assert not trusted(1000, 0o100646, 1000)  # world-writable
    path = tmp_path / "kept.marshal"
    kept = KeptCode(str(path))
    kept.exec("x = 1", {}, {})
    assert kept.save(force=True)
    assert load(str(path))
    path.chmod(0o664)
    assert load(str(path)) == {}
    path.chmod(0o644)
    link = tmp_path / "link.marshal"
    link.symlink_to(path)
    assert load(str(link)) == {}  # not followed: the file itself, where it is


@pytest.mark.parametrize(
    "content",
    [
        b"",
        b"garbage",
        marshal.dumps(((99, b"\0\0\0\0"), {})),
        marshal.dumps([1, 2]),
        marshal.dumps(((1, b"xx"), {})),
    ],
)
def test_a_file_that_is_not_this_pythons_is_ignored_and_everything_compiles(
    tmp_path: Path, content: bytes
) -> None:
    """Empty, corrupt, another format version or another Python's magic: no entries, and the
    texts compile (and run) as without the file."""
    path = tmp_path / "kept.marshal"
    path.write_bytes(content)
    path.chmod(0o644)
    kept = KeptCode(str(path))
    assert kept.kept == {}
    namespace: dict[str, object] = {}
    kept.exec("y = 2", namespace, namespace)
    assert namespace["y"] == 2
    assert kept.misses == 1


def test_a_save_merges_with_what_another_process_wrote_meanwhile_and_respects_dont_write_bytecode(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = str(tmp_path / "kept.marshal")
    one, two = KeptCode(path), KeptCode(path)
    one.exec("a = 1", {}, {})
    two.exec("b = 2", {}, {})
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    assert one.save() is False
    assert not os.path.exists(path)
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    assert one.save()
    assert two.save()
    assert set(load(path)) == {"a = 1", "b = 2"}
    assert not [p for p in os.listdir(tmp_path) if p.endswith(".tmp")]


def test_a_place_it_cannot_write_is_no_error(tmp_path: Path) -> None:
    """An install nobody may write to (here: its folder's place taken by a file, which stops root
    too): it compiles, as without the file, and leaves nothing behind."""
    (tmp_path / "taken").write_text("a file, not a folder")
    kept = KeptCode(str(tmp_path / "taken" / "kept.marshal"))
    namespace: dict[str, object] = {}
    kept.exec("c = 3", namespace, namespace)
    assert kept.save(force=True) is False
    assert namespace["c"] == 3
    assert sorted(os.listdir(tmp_path)) == ["taken"]


def test_the_built_file_covers_every_start_path(tmp_path: Path) -> None:
    """``python -m shard.cli.warm_cache`` (what bootstrap runs) keeps what the warm template, the
    daemon and a direct ``shard run`` compile: a process that then imports them compiles no
    dataclass method at all."""
    path, _, printed = kept_build.build(tmp_path)
    built = kept_build.compiled(printed, "dataclass methods")
    assert built > 300, printed
    assert kept_build.counts_on_the_start_paths("_dataclass_code", path) == (built, 0)


def test_every_shard_command_and_the_template_run_kept_code() -> None:
    """``shard.cli.main`` (every ``shard`` command) installs it before its first dataclass, and the
    template (``python -m shard.cli.forkserver``) before its imports."""
    ran = subprocess.run(
        [
            sys.executable,
            "-c",
            "import shard.cli.main, collections, dataclasses, typing\n"
            "print(*(f.__self__.path for f in (dataclasses.exec, typing.compile, collections.eval)))",
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert ran.stdout.split() == [_dataclass_code.cache_path()] * 3
    source = (Path(forkserver.__file__)).read_text()
    assert source.index("_dataclass_code.install()") < source.index("later = _preload(")


def test_a_forward_reference_from_kept_code_evaluates_as_one_compiled_now(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``typing.ForwardRef`` compiles its string (pydantic_core's TypedDicts: ~820 at every start);
    its code is kept too, by the exact expression, apart from the dataclass texts."""
    import typing

    path = str(tmp_path / "kept.marshal")
    first = KeptCode(path)
    monkeypatch.setattr(typing, "compile", first.compile, raising=False)
    ref = typing.ForwardRef("dict[str, list[int]] | None")
    assert first.misses == 1
    assert first.save(force=True)
    second = KeptCode(path)
    monkeypatch.setattr(typing, "compile", second.compile, raising=False)
    again = typing.ForwardRef("dict[str, list[int]] | None")
    assert (second.hits, second.misses) == (1, 0)
    assert again == ref
    assert again.__forward_code__.co_flags == compile("0", "<string>", "eval", dont_inherit=True).co_flags
    holder = _Holder()
    holder.__annotations__ = {"x": again}
    assert typing.get_type_hints(holder) == {"x": dict[str, list[int]] | None}
    # the same text as a dataclass method is another entry; any other compile is not kept
    second.exec("dict[str, list[int]] | None", {}, {})
    assert second.misses == 1
    assert second.compile("1 + 1", "<string>", "exec").co_filename == "<string>"
    assert second.compile("1 + 1", "other.py", "eval").co_filename == "other.py"
    assert second.misses == 1


class _Holder:
    """Something ``get_type_hints`` reads the annotations of."""


def test_a_named_tuple_from_kept_code_is_the_one_compiled_now(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``namedtuple`` evaluates the text of its ``__new__``: kept like a forward reference's."""
    import collections

    path = str(tmp_path / "kept.marshal")
    first = KeptCode(path)
    monkeypatch.setattr(collections, "eval", first.eval, raising=False)
    collections.namedtuple("Pair", "left right")
    assert first.misses == 1
    assert first.save(force=True)
    second = KeptCode(path)
    monkeypatch.setattr(collections, "eval", second.eval, raising=False)
    pair = collections.namedtuple("Pair", "left right", defaults=[0])
    assert (second.hits, second.misses) == (1, 0)
    assert pair(1) == (1, 0)
    assert pair(right=2, left=1) == (1, 2)
    with pytest.raises(TypeError):
        pair(1, 2, 3)
    assert second.eval(compile("1 + 2", "<string>", "eval")) == 3  # code, not text: not kept
    assert second.misses == 0


@pytest.mark.parametrize("dont_write", [False, True])
def test_a_process_that_leaves_through_os_exit_keeps_what_it_compiled(
    tmp_path: Path, dont_write: bool
) -> None:
    """Every ``shard`` process ends with ``os._exit`` after ``_leaving.leave()``, past ``atexit``:
    what it compiled is written there, as Python writes bytecode (not under ``-B``)."""
    path = tmp_path / "kept.marshal"
    probe = textwrap.dedent(
        f"""
        import dataclasses, os
        from shard import _dataclass_code, _leaving
        _dataclass_code.install({str(path)!r})

        @dataclasses.dataclass
        class Fresh:
            only_here: int

        _leaving.leave()
        os._exit(0)
        """
    )
    flags = ["-B"] if dont_write else []
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}  # CI sets it
    subprocess.run(
        [sys.executable, *flags, "-c", probe], env=env, capture_output=True, timeout=60, check=True
    )
    if dont_write:
        assert not path.exists()
    else:
        assert any("only_here" in text for text in load(str(path)))
