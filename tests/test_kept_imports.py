"""The start paths' modules found and read from one file (``shard._kept_imports``, issue 31).

Each case records a file in one fresh interpreter and imports in another, as a ``shard`` start
does, with a package of its own (``kiprobe``) on ``PYTHONPATH`` beside the standard library's
``json``; what changed in between decides what comes from the file."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import kept_build
from shard import _kept_imports

_RECORD = """
import sys
from shard import _kept_imports
import json, kiprobe.sub
print(_kept_imports.record(sys.argv[1], list(sys.modules)))
"""

# What a start would see: which modules the file's index found ("from_file"), how many of them took
# their code from it ("hits"), and the modules themselves.
_IMPORT = """
import sys
from shard import _kept_imports
installed = _kept_imports.install(sys.argv[1])
before = set(sys.modules)
import importlib.resources, inspect, json, kiprobe.sub
print(repr({
    "installed": installed,
    "hits": _kept_imports.counts(),
    "from_file": sorted(
        name for name, module in sys.modules.items()
        if name not in before
        and type(getattr(getattr(module, "__spec__", None), "loader", None)).__name__ == "_Loader"
    ),
    "value": kiprobe.sub.VALUE,
    "json_file": json.__file__,
    "sub_file": kiprobe.sub.__file__,
    "sub_cached": kiprobe.sub.__cached__,
    "package_path": list(kiprobe.__path__),
    "source": inspect.getsource(kiprobe.sub.answer),
    "resource": importlib.resources.files("kiprobe").joinpath("data.txt").read_text(),
    "dumped": json.dumps({"a": [1, 2]}),
}))
"""


def _env(root: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPATH"] = str(root / "lib")
    return env


@pytest.fixture
def root(tmp_path: Path) -> Path:
    package = tmp_path / "lib" / "kiprobe"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "sub.py").write_text('VALUE = "kept"\n\n\ndef answer():\n    return 42\n')
    (package / "data.txt").write_text("a resource")
    (tmp_path / "cwd").mkdir()
    _run(tmp_path, _RECORD)
    return tmp_path


def _run(
    root: Path,
    script: str,
    *,
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
    flags: tuple[str, ...] = (),
) -> str:
    done = subprocess.run(
        [sys.executable, *flags, "-c", textwrap.dedent(script), str(root / "imports.marshal")],
        env=env or _env(root),
        cwd=cwd or root / "cwd",
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def _imported(root: Path, **kwargs: object) -> dict:
    return ast.literal_eval(_run(root, _IMPORT, **kwargs))  # type: ignore[arg-type, no-any-return]


def test_modules_come_from_the_file_and_are_the_ones_python_finds(root: Path) -> None:
    """Found and read from the file, a module is what Python's own import makes of its source: its
    file, bytecode path, package path, source for ``inspect`` and resources are all the same."""
    found = _imported(root)
    assert found["installed"] is True
    assert {"json", "json.decoder", "kiprobe", "kiprobe.sub"} <= set(found["from_file"])
    assert found["hits"] >= len(found["from_file"])
    plain = ast.literal_eval(_run(root, _IMPORT.replace("_kept_imports.install(", "(lambda path: False)(")))
    assert plain["from_file"] == []
    for key in (
        "value",
        "json_file",
        "sub_file",
        "sub_cached",
        "package_path",
        "source",
        "resource",
        "dumped",
    ):
        assert found[key] == plain[key], key
    assert found["sub_file"] == str(root / "lib" / "kiprobe" / "sub.py")


def test_an_edited_source_is_imported_from_itself(root: Path) -> None:
    sub = root / "lib" / "kiprobe" / "sub.py"
    sub.write_text(sub.read_text().replace('"kept"', '"edited in place"'))
    found = _imported(root)
    assert found["value"] == "edited in place"
    assert "kiprobe.sub" not in found["from_file"]
    assert "json" in found["from_file"]


def test_a_file_added_to_a_package_sets_that_packages_modules_aside(root: Path) -> None:
    """A new file in a folder may be what Python would find now: every module searched for there
    goes to Python's search, the others still come from the file."""
    (root / "lib" / "kiprobe" / "newer.py").write_text("")
    found = _imported(root)
    assert "kiprobe.sub" not in found["from_file"]
    assert {"kiprobe", "json", "json.decoder"} <= set(found["from_file"])  # their folders unchanged
    assert found["value"] == "kept"


def test_a_module_that_now_shadows_one_of_the_file_is_the_one_imported(root: Path) -> None:
    """``json.py`` put on the path ahead of the standard library: Python takes it, so must a start."""
    (root / "lib" / "json.py").write_text("def dumps(value):\n    return 'the shadow'\n")
    found = _imported(root)
    assert "kiprobe" not in found["from_file"]  # every top-level module: its folder changed
    assert "kiprobe.sub" in found["from_file"]
    assert found["dumped"] == "the shadow"
    assert found["json_file"] == str(root / "lib" / "json.py")


def test_the_first_folder_of_the_path_holding_such_a_module_turns_the_file_off(root: Path) -> None:
    """``python -c`` searches the current folder first: a ``json.py`` there wins, and a file named
    like a module without a module's suffix (the ``shard`` console script beside ``python``) does
    not count."""
    (root / "cwd" / "kiprobe").write_text("#!/bin/sh\n")  # no suffix: no module
    assert _imported(root)["installed"] is True
    (root / "cwd" / "json.py").write_text("def dumps(value):\n    return 'from the current folder'\n")
    found = _imported(root)
    assert found["installed"] is False
    assert found["from_file"] == []
    assert found["dumped"] == "from the current folder"


def test_a_package_whose_path_changed_gets_pythons_search(root: Path) -> None:
    """A package that puts another folder first on its ``__path__`` (as ``pkgutil.extend_path`` or a
    plugin system does): its submodule is the one in that folder."""
    other = root / "other"
    other.mkdir()
    (other / "sub.py").write_text('VALUE = "from the other folder"\n\n\ndef answer():\n    return 0\n')
    script = _IMPORT.replace(
        "import importlib.resources, inspect, json, kiprobe.sub",
        f"import kiprobe\nkiprobe.__path__.insert(0, {str(other)!r})\n"
        "import importlib.resources, inspect, json, kiprobe.sub",
    )
    found = ast.literal_eval(_run(root, script))
    assert found["value"] == "from the other folder"
    assert "kiprobe.sub" not in found["from_file"]


def test_a_script_run_from_a_zip_archive_turns_the_file_off(root: Path) -> None:
    """The first entry of the path is then the archive, which may hold any module."""
    import zipfile

    archive = root / "app.zip"
    with zipfile.ZipFile(archive, "w") as zipped:
        zipped.writestr("json.py", "def dumps(value):\n    return 'from the archive'\n")
        zipped.writestr("__main__.py", textwrap.dedent(_IMPORT))
    done = subprocess.run(
        [sys.executable, str(archive), str(root / "imports.marshal")],
        env=_env(root),
        cwd=root / "cwd",
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    found = ast.literal_eval(done.stdout)
    assert found["installed"] is False
    assert found["dumped"] == "from the archive"


def test_under_python_dash_P_the_current_folder_is_not_searched_and_the_file_is_used(root: Path) -> None:
    """How Shard starts its own processes (``shard._python``): no first entry to look at."""
    (root / "cwd" / "json.py").write_text("def dumps(value):\n    return 'from the current folder'\n")
    found = _imported(root, flags=("-P",))
    assert found["installed"] is True
    assert found["dumped"] == '{"a": [1, 2]}'
    assert {"json", "kiprobe.sub"} <= set(found["from_file"])


def test_another_search_path_uses_nothing(root: Path) -> None:
    env = _env(root)
    env["PYTHONPATH"] = f"{root / 'lib'}{os.pathsep}{root / 'elsewhere'}"
    found = _imported(root, env=env)
    assert found["installed"] is False
    assert found["value"] == "kept"


def test_an_optimized_python_uses_nothing(root: Path) -> None:
    """``python -O`` runs other bytecode (asserts stripped) than the file holds."""
    found = _imported(root, flags=("-O",))
    assert found["installed"] is False
    assert found["hits"] == 0


def test_a_file_others_may_write_is_not_read(root: Path) -> None:
    (root / "imports.marshal").chmod(0o664)
    assert _imported(root)["installed"] is False


@pytest.mark.parametrize("change", ["replaced", "made-writable"])
def test_a_file_replaced_or_opened_to_others_after_install_gives_no_more_code(
    root: Path, change: str
) -> None:
    """Code is read from the very file whose index was read, still closed to others: a file put in
    its place (``warm_cache`` again, with other offsets) or made group-writable gives nothing more."""
    path = root / "imports.marshal"
    if change == "replaced":
        swap = f"os.replace({str(root / 'other.marshal')!r}, sys.argv[1])"
        # the same index, and at kiprobe.sub's place other code of its very length: read with the
        # old file's offsets, it would run
        other = bytearray(path.read_bytes())
        entry = _kept_imports_entries(path)["kiprobe.sub"]
        start = 8 + int.from_bytes(other[:8], "little") + entry[5]
        other[start : start + entry[6]] = _code_of_length(entry[6], entry[0])
        (root / "other.marshal").write_bytes(bytes(other))
        (root / "other.marshal").chmod(0o644)
    else:
        swap = "os.chmod(sys.argv[1], 0o666)"
    script = _IMPORT.replace("before = set(sys.modules)", f"before = set(sys.modules)\nimport os\n{swap}")
    found = ast.literal_eval(_run(root, script))
    assert found["installed"] is True
    assert found["hits"] == 0  # found by the index (still true of the folders), code from the .pyc
    assert found["value"] == "kept"
    assert found["dumped"] == '{"a": [1, 2]}'


def test_a_damaged_entry_is_read_from_its_own_bytecode(root: Path) -> None:
    """The file's code for ``kiprobe.sub`` overwritten with bytes marshal refuses."""
    path = root / "imports.marshal"
    entry = _kept_imports_entries(path)["kiprobe.sub"]
    data = bytearray(path.read_bytes())
    start = 8 + int.from_bytes(data[:8], "little") + entry[5]
    data[start : start + entry[6]] = b"\xff" * entry[6]
    path.write_bytes(bytes(data))
    found = _imported(root)
    assert found["installed"] is True
    assert found["value"] == "kept"
    assert "json" in found["from_file"]


def _code_of_length(length: int, filename: str) -> bytes:
    """Marshalled code that sets ``VALUE = "swap…"``, padded to exactly ``length`` bytes."""
    import marshal

    for pad in range(length):
        source = f'VALUE = "swap{"x" * pad}"\n\n\ndef answer():\n    return 42\n'
        data = marshal.dumps(compile(source, filename, "exec"))
        if len(data) == length:
            return data
    raise AssertionError(f"no code of {length} bytes")


def _kept_imports_entries(path: Path) -> dict:
    import marshal

    data = path.read_bytes()
    return marshal.loads(data[8 : 8 + int.from_bytes(data[:8], "little")])[3]


def test_warm_cache_keeps_the_start_paths_and_a_start_takes_them_from_it(tmp_path: Path) -> None:
    """What bootstrap builds: every module of a one-shot's imports, found in the file."""
    _, _, printed = kept_build.build(tmp_path)
    line = next(line for line in printed.splitlines() if "modules to be found" in line)
    assert int(line.split()[1]) > 300
    script = textwrap.dedent(
        f"""
        from shard import _kept_imports
        assert _kept_imports.install({str(tmp_path / "imports.marshal")!r})
        import shard.cli.run, shard.agent.runtime
        print(_kept_imports.counts())
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True, timeout=60, check=True
    )
    assert int(done.stdout) > 250


def test_every_shard_command_installs_it_before_anything_else() -> None:
    """The console script's first module (``cli/start.py``) installs it before it imports anything
    of Shard's; and the file is Shard's own, next to its bytecode."""
    source = (Path(__file__).parents[1] / "src" / "shard" / "cli" / "start.py").read_text()
    body = source[source.index("def entry() -> None:") :]
    assert body.index("_kept_imports.install()") < body.index("from shard.daemon")
    assert body.index("_kept_imports.install()") < body.index("from shard.cli.main")
    assert _kept_imports.cache_path().endswith(".marshal")
    assert "__pycache__" in _kept_imports.cache_path()
