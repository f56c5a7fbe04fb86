"""What a Shard process removes on its way out (``shard._leaving``): the ways out of every ``shard``
process skip ``atexit`` (``os._exit``), so removals are registered here and run by them."""

from __future__ import annotations

from shard import _leaving


def test_steps_run_latest_first_each_once_and_a_failing_one_is_skipped(monkeypatch):
    monkeypatch.setattr(_leaving, "_steps", [])
    ran: list[str] = []

    def broken() -> None:
        raise OSError("gone already")

    _leaving.on_leaving(lambda: ran.append("first"))
    _leaving.on_leaving(broken)
    _leaving.on_leaving(lambda: ran.append("last"))
    _leaving.leave()
    assert ran == ["last", "first"]
    _leaving.leave()  # the atexit call after an explicit one finds nothing left
    assert ran == ["last", "first"]
