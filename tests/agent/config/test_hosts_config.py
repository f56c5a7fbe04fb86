"""``[[hosts]]`` in config.toml (issue: remote hosts, item 1): each entry parsed, every mistake one
line naming its key."""

from __future__ import annotations

from pathlib import Path

import pytest

from shard.agent.config.settings import ConfigError, config_from_text


def _hosts(text: str):
    return config_from_text(text, Path("/h"), Path("/h/config.toml")).hosts


def test_a_full_entry_and_the_defaults():
    hosts = _hosts(
        '[[hosts]]\nname = "box"\nssh = "me@build-box"\nport = 2222\nssh_config = "~/b.conf"\n'
        'shard = "~/bin/shard"\nhome = "/srv/shard"\nconfig = "remote"\n'
        '[[hosts]]\nname = "gpu.1"\nssh = "gpu"\n'
    )
    assert [h.name for h in hosts] == ["box", "gpu.1"]
    box, gpu = hosts
    assert (box.ssh, box.port, box.ssh_config, box.shard, box.home, box.config) == (
        "me@build-box",
        2222,
        "~/b.conf",
        "~/bin/shard",
        "/srv/shard",
        "remote",
    )
    assert (gpu.port, gpu.shard, gpu.home, gpu.config) == (None, None, "~/.shard", "daemon")


@pytest.mark.parametrize(
    ("entry", "named"),
    [
        ('ssh = "box"', "hosts[0].name is required"),
        ('name = "box"', "hosts[0].ssh is required"),
        ('name = "a b"\nssh = "x"', "hosts[0].name"),
        ('name = "box"\nssh = "-oProxyCommand=evil"', "hosts[0].ssh"),
        ('name = "box"\nssh = "x"\nport = 70000', "hosts[0].port"),
        ('name = "box"\nssh = "x"\nconfig = "mine"', "hosts[0].config"),
        ('name = "box"\nssh = "x"\nuser = "me"', "hosts[0].user"),
    ],
)
def test_a_mistake_names_its_key(entry: str, named: str):
    with pytest.raises(ConfigError) as caught:
        _hosts(f"[[hosts]]\n{entry}\n")
    assert named in caught.value.message


def test_a_name_twice_is_refused():
    with pytest.raises(ConfigError, match="defined twice"):
        _hosts('[[hosts]]\nname = "a"\nssh = "x"\n[[hosts]]\nname = "a"\nssh = "y"\n')
