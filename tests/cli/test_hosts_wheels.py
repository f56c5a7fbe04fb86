"""What ``shard hosts setup`` fetches for a host on another interpreter (``shard.cli.hosts_wheels``)."""

from __future__ import annotations

import pytest

from shard.cli import hosts_wheels


def test_a_linux_host_gets_every_manylinux_tag_of_its_architecture():
    assert hosts_wheels.platforms("linux-aarch64") == [
        "manylinux2014_aarch64",
        "manylinux_2_17_aarch64",
        "manylinux_2_28_aarch64",
        "linux_aarch64",
    ]
    with pytest.raises(hosts_wheels.WheelError, match="Linux only"):
        hosts_wheels.platforms("macosx-14.0-arm64")


def test_the_requirements_are_shards_own_without_extras():
    wanted = hosts_wheels.requirements()
    names = {r.split(">")[0].split("=")[0].split("<")[0].strip().lower() for r in wanted}
    assert {"pydantic", "orjson", "openai", "anthropic"} <= names
    assert not names & {"pytest", "playwright", "ruff"}, "the dev extra stays here"
    assert all(";" not in r for r in wanted)


def test_only_cpython_wheels_are_fetched():
    with pytest.raises(hosts_wheels.WheelError, match="CPython only"):
        hosts_wheels.wheelhouse("3.11", "pypy-311", "linux-x86_64")
