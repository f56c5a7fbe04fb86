"""The order ./test hands modules out in (tests/module_order.py): the longest recorded first, the
rest by their test count, and nothing reordered inside a module."""

from __future__ import annotations

from pathlib import Path

from module_order import PER_TEST, load, merged, ranks


def test_the_longest_recorded_module_goes_first_whatever_its_test_count():
    collected = ["tests/many.py"] * 40 + ["tests/one_long.py"] + ["tests/few.py"] * 3
    seconds = {"tests/many.py": 10.0, "tests/one_long.py": 90.0, "tests/few.py": 2.0}
    assert ranks(collected, seconds) == {"tests/one_long.py": 0, "tests/many.py": 1, "tests/few.py": 2}


def test_an_unrecorded_module_counts_its_tests_and_ties_keep_the_collection_order():
    collected = ["tests/a.py"] * 4 + ["tests/b.py"] * 2 + ["tests/c.py"] * 4 + ["tests/d.py"]
    seconds = {"tests/b.py": 4 * PER_TEST}  # as long as a's and c's estimates
    assert ranks(collected, seconds) == {"tests/a.py": 0, "tests/b.py": 1, "tests/c.py": 2, "tests/d.py": 3}


def test_a_missing_or_broken_file_is_no_recorded_time(tmp_path: Path):
    assert load(tmp_path / "absent.json") == {}
    broken = tmp_path / "broken.json"
    broken.write_text("{not json")
    assert load(broken) == {}
    listed = tmp_path / "list.json"
    listed.write_text("[1, 2]")
    assert load(listed) == {}
    mixed = tmp_path / "mixed.json"
    mixed.write_text('{"tests/a.py": 3, "tests/b.py": "x"}')
    assert load(mixed) == {"tests/a.py": 3.0}


def test_a_recording_updates_what_it_measured_and_drops_modules_that_are_gone(tmp_path: Path):
    (tmp_path / "tests").mkdir()
    for name in ("kept.py", "measured.py"):
        (tmp_path / "tests" / name).write_text("")
    old = {"tests/kept.py": 5.0, "tests/measured.py": 9.0, "tests/gone.py": 7.0}
    new = merged(old, {"tests/measured.py": 1.234}, tmp_path)
    assert new == {"tests/kept.py": 5.0, "tests/measured.py": 1.2}
