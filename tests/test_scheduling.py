"""The order the workers get the modules in (tests/scheduling.py)."""

from __future__ import annotations

from dataclasses import dataclass

from scheduling import long_modules_first


@dataclass
class Item:
    nodeid: str
    long: bool = False

    def get_closest_marker(self, name: str) -> object:
        return object() if name == "long" and self.long else None


def test_modules_with_long_tests_go_first_then_the_biggest_and_each_module_keeps_its_order():
    items = [
        Item("tests/a.py::one"),
        Item("tests/big.py::x"),
        Item("tests/big.py::y"),
        Item("tests/big.py::z"),
        Item("tests/slow.py::only", long=True),
        Item("tests/b.py::two"),
        Item("tests/b.py::Class::three"),
        Item("tests/slower.py::first", long=True),
        Item("tests/slower.py::second", long=True),
        Item("tests/slower.py::third"),
    ]
    ordered = [item.nodeid for item in long_modules_first(items)]
    assert ordered == [
        "tests/slower.py::first",
        "tests/slower.py::second",
        "tests/slower.py::third",
        "tests/slow.py::only",
        "tests/big.py::x",
        "tests/big.py::y",
        "tests/big.py::z",
        "tests/b.py::two",
        "tests/b.py::Class::three",
        "tests/a.py::one",
    ]
