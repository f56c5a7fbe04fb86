"""``shard.agent.providers.errors.unsendable_key``: a key an HTTP header cannot carry is said, in a
line that names where the key comes from and holds nothing of it."""

from __future__ import annotations

from pathlib import Path

import pytest

from shard.agent.providers.errors import unsendable_key
from shard.agent.providers.openai import OpenAIProvider
from shard.protocol.errors import ErrorCode, ShardError

from ._support import KEY_ENV, entry_from_config, provider_toml

SECRET = "sk-live-0123456789abcdef"


@pytest.mark.parametrize(
    ("key", "said"),
    [
        (SECRET + "\n", "a line break at its end"),
        (SECRET + "\r", "a line break at its end"),
        ("\n" + SECRET, "a line break at its start"),
        (SECRET[:5] + "\r\nX-Other: 1" + SECRET[5:], "a line break inside it"),
        (SECRET + " ", "a space at its end"),
        (SECRET[:5] + "\t" + SECRET[5:], "a space inside it"),
        (SECRET + "é", "a non-ASCII character at its end"),
        (SECRET[:5] + "\0" + SECRET[5:], "a character inside it"),
    ],
)
def test_a_key_a_header_cannot_carry_is_said_without_any_of_it(tmp_path: Path, key: str, said: str) -> None:
    entry = entry_from_config(
        tmp_path / "home",
        provider_toml("local", "openai", "http://127.0.0.1:9/v1", '["m"]', key_env=KEY_ENV),
        "local/m",
    )
    why = unsendable_key(entry.provider, key)
    assert why is not None
    assert said in why
    assert f"the {KEY_ENV} environment variable" in why
    assert SECRET[:6] not in why
    assert SECRET[-6:] not in why


def test_a_plain_key_is_sendable_and_a_provider_refuses_the_rest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    body = provider_toml("local", "openai", "http://127.0.0.1:9/v1", '["m"]', key_env=KEY_ENV)
    entry = entry_from_config(tmp_path / "home", body, "local/m")
    assert unsendable_key(entry.provider, SECRET) is None
    monkeypatch.setenv(KEY_ENV, SECRET + "\n")
    with pytest.raises(ShardError) as info:
        OpenAIProvider(entry)
    assert info.value.code is ErrorCode.PROVIDER_ERROR
    assert "line break at its end" in info.value.message
