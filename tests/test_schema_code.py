"""The protocol's model schemas kept between runs (``shard._schema_code``, issue 31)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import kept_build
from shard import _kept_file, _schema_code

# Every protocol model, built in a fresh interpreter with ``path`` installed: what pydantic-core made
# of each (its validator and serializer, their addresses aside), the model's JSON Schema, and the
# outcome of validating a few payloads through the wire codec.
_PROBE = r"""
import json, re, sys
from shard import _schema_code
_schema_code.install(sys.argv[1])
import importlib
from shard.cli import warm_cache
for name in warm_cache.start_paths():
    importlib.import_module(name)
warm_cache._build_models()
import pydantic
from shard.protocol.codec import parse_command
from shard.protocol.errors import ShardError

def plain(text):
    # addresses and string hashes aside, and its lines sorted: pydantic-core prints its hash maps in
    # an order of the process's own, and Python's string hashes are (two builds of one model differ)
    text = re.sub(r"hash: [0-9]+", "hash: #", re.sub(r"0x[0-9a-f]+", "0x", text))
    text = re.sub(r"\{([^{}]*)\}", lambda m: "{" + ", ".join(sorted(m.group(1).split(", "))) + "}", text)
    return sorted(text.splitlines())

found, pending = {}, [pydantic.BaseModel]
while pending:
    model = pending.pop()
    pending.extend(model.__subclasses__())
    if model.__module__.startswith("shard.protocol."):
        name = model.__module__ + "." + model.__qualname__
        found[name] = [
            model.__pydantic_complete__,
            plain(repr(model.__pydantic_validator__)),
            plain(repr(model.__pydantic_serializer__)),
            model.model_json_schema(),
        ]
# every reference in every model's schema, checked against this process's classes: the name and id
# of a class a protocol module holds
classes = {
    id(value): value.__module__ + "." + value.__qualname__
    for name, module in list(sys.modules.items()) if name.startswith("shard.protocol.")
    for value in vars(module).values() if isinstance(value, type)
}
def refs(node):
    if isinstance(node, dict):
        for key, value in node.items():
            if key in ("ref", "schema_ref") and isinstance(value, str):
                yield value
            else:
                yield from refs(value)
    elif isinstance(node, (list, tuple)):
        for value in node:
            yield from refs(value)
strays = set()
pending = [pydantic.BaseModel]
while pending:
    model = pending.pop()
    pending.extend(model.__subclasses__())
    if model.__module__.startswith("shard.protocol.") and model.__pydantic_complete__:
        for ref in refs(model.__pydantic_core_schema__):
            name, _, ident = ref.rpartition(":")
            if ident.isdigit() and classes.get(int(ident)) != name:
                strays.add(ref)
from shard.protocol.schema import protocol_schema
defs = sorted(protocol_schema()["$defs"])
outcomes = []
for line in sys.argv[2:]:
    try:
        outcomes.append(parse_command(line.encode()).to_wire())
    except ShardError as exc:
        outcomes.append([exc.code.value, exc.message])
print(json.dumps({
    "models": found, "outcomes": outcomes, "counts": _schema_code.counts(), "strays": sorted(strays),
    "defs": defs,
}))
"""

LINES = [
    '{"type": "prompt", "id": "p", "message": "hi", "agent_id": "agent-1"}',
    '{"type": "prompt", "id": "p", "message": 5, "agent_id": "agent-1"}',
    '{"type": "agent.create", "id": "c", "cwd": "/tmp", "model": null}',
    '{"type": "agent.create", "id": "c", "cwd": "/tmp", "mode": "plan", "extra": {"kept": true}}',
    '{"id": "x", "message": "no type"}',
]


def _probe(path: Path, *, dont_write: bool = False) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    args = [sys.executable, *(["-B"] if dont_write else []), "-c", _PROBE, str(path), *LINES]
    done = subprocess.run(args, env=env, capture_output=True, text=True, timeout=180, check=True)
    return json.loads(done.stdout)


@pytest.fixture(scope="module")
def probes(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict]:
    """Four fresh interpreters: ``first`` generates every schema and keeps it as it leaves,
    ``second`` takes them all from that file; ``other`` generates and keeps them into a second file,
    and ``mixed`` reads a file whose entries alternate between the two writers' — as the real file
    is, every process that generated a schema adding it."""
    folder = tmp_path_factory.mktemp("schemas")
    first_path, other_path, mixed_path = (folder / f"{n}.marshal" for n in ("first", "other", "mixed"))
    found = {"first": _probe(first_path), "second": _probe(first_path), "other": _probe(other_path)}
    head = _schema_code.head()
    first, other = _kept_file.load(str(first_path), head), _kept_file.load(str(other_path), head)
    assert first.keys() == other.keys()
    mixed = {name: (first if i % 2 else other)[name] for i, name in enumerate(sorted(first))}
    assert _kept_file.write(str(mixed_path), head, mixed)
    found["mixed"] = _probe(mixed_path)
    return found


def test_every_model_completed_from_its_kept_schema_is_the_one_pydantic_builds(probes: dict) -> None:
    """The first process generates every protocol model's schema and keeps it as it leaves; the next
    generates none, and each model's validator, serializer and JSON Schema are the same, as are the
    wire codec's answers to valid and invalid lines."""
    first, second = probes["first"], probes["second"]
    assert first["counts"][0] == 0
    assert first["counts"][1] > 150
    assert second["counts"] == [first["counts"][1], 0]
    assert second["outcomes"] == first["outcomes"]
    assert second["models"].keys() == first["models"].keys()
    for name, built in first["models"].items():
        assert built[0] is True, name
        assert second["models"][name] == built, name
    assert first["outcomes"][1][0] == "INVALID_REQUEST"  # a wrong type is still refused


def test_a_kept_schema_names_its_parts_with_this_processs_ids(probes: dict) -> None:
    """Pydantic's references carry a class's ``id()``: a schema taken from the file, written by
    another process, names each class as one generated here does, so no class has two names."""
    assert probes["mixed"]["counts"] == [probes["first"]["counts"][1], 0]
    for name in ("first", "second", "mixed"):
        assert probes[name]["strays"] == [], name


def test_a_file_of_many_writers_gives_the_protocols_json_schema_unchanged(probes: dict) -> None:
    """With the writers' ids, a process holding schemas of two writers named ``TreeNode`` (and
    ``Message``…) two ways: its JSON Schema had ``shard__protocol__render__TreeNode__1`` and ``__2``
    and no ``TreeNode``."""
    generated = probes["first"]["defs"]
    assert "TreeNode" in generated
    assert "Message" in generated
    assert probes["second"]["defs"] == generated
    assert probes["mixed"]["defs"] == generated


def test_under_dont_write_bytecode_nothing_is_kept(tmp_path: Path) -> None:
    path = tmp_path / "schemas.marshal"
    assert _probe(path, dont_write=True)["counts"][1] > 150
    assert not path.exists()


def test_a_changed_protocol_file_or_pydantic_sets_the_whole_file_aside(tmp_path: Path) -> None:
    """The header names this Python, pydantic, pydantic-core and every file of ``shard/protocol``
    (size and time): after any change there, no schema is taken from the file."""
    head = _schema_code.head()
    assert head[2] == __import__("pydantic").VERSION
    files = dict((name, rest) for name, *rest in head[4])
    assert {"protocol/base.py", "protocol/commands.py", "_version.py"} <= files.keys()
    path = str(tmp_path / "schemas.marshal")
    assert _kept_file.write(path, head, {"shard.protocol.x.Y": b"data"})
    assert _schema_code.KeptSchemas(path, head).kept
    changed = (*head[:4], tuple((n, s + 1, t) for n, s, t in head[4]))
    assert _schema_code.KeptSchemas(path, changed).kept == {}
    other = (head[0], head[1], "0.0", *head[3:])
    assert _schema_code.KeptSchemas(path, other).kept == {}


def test_an_entry_this_pydantic_cannot_take_is_built_as_before(tmp_path: Path) -> None:
    """A damaged entry (it passed the header check): the model is generated as without the file."""
    probe = textwrap.dedent(
        f"""
        from shard import _kept_file, _schema_code
        path = {str(tmp_path / "schemas.marshal")!r}
        entries = {{"shard.protocol.agent_commands.Prompt": b"not a pickle"}}
        _kept_file.write(path, _schema_code.head(), entries)
        _schema_code.install(path)
        import shard.agent.runtime
        from shard.protocol.agent_commands import Prompt
        Prompt.model_rebuild()
        assert Prompt.__pydantic_complete__
        assert Prompt.model_validate({{"id": "p", "message": "hi"}}).message == "hi"
        print(*_schema_code.counts())
        """
    )
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    done = subprocess.run(
        [sys.executable, "-B", "-c", probe], env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split()[0] == "0"  # none taken from the file


def test_warm_cache_keeps_every_protocol_model(tmp_path: Path) -> None:
    """``python -m shard.cli.warm_cache`` (what bootstrap runs) builds and keeps every one."""
    _, _, printed = kept_build.build(tmp_path)
    assert kept_build.compiled(printed, "model schemas") > 150
    assert len(_kept_file.load(str(tmp_path / "schemas.marshal"), _schema_code.head())) > 150


def test_every_shard_command_and_the_template_install_it() -> None:
    path = kept_build.printed_once_shard_starts("__import__('shard._schema_code')._schema_code._path")
    assert path == _schema_code.cache_path()
    assert kept_build.installed_before_the_templates_imports("_schema_code.install()")
