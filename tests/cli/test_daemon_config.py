"""``shard daemon`` checks config.toml when it starts: every mistake stops it with one line on stderr
and exit status 1, before it listens anywhere (the real command, in a subprocess)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from shard.testing import shard_command

PROVIDER = '[[providers]]\nname = "local"\nkind = "openai"\nbase_url = "http://127.0.0.1:9/v1"\n'


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            'default_model = "local/m"\n\n[[provider]]\nname = "local"\nkind = "openai"\nmodels = ["m"]\n',
            "line 3: unknown table [[provider]] (did you mean [[providers]]?)",
        ),
        (PROVIDER + 'models = ["m"]\napi_key = "sk-1"\n', "line 6: unknown key providers[0].api_key"),
        (
            PROVIDER + 'models = [{ id = "m", context_window = "32k" }]\n',
            "line 5: providers[0].models[0].context_window must be an integer, got a string",
        ),
        (
            'default_model = "local/qwen3"\n' + PROVIDER + 'models = ["qwen"]\n',
            "unknown default_model 'local/qwen3' (models: local/qwen, scripted/demo); to add it, list it "
            "in provider 'local' in config.toml: models = [..., \"qwen3\"]",
        ),
        ('default_model = "local/m\n', "is not valid TOML"),
    ],
    ids=["unknown-table", "unknown-key", "wrong-type", "unknown-default-model", "not-toml"],
)
def test_a_config_mistake_stops_the_daemon_with_one_line(tmp_path: Path, text: str, expected: str) -> None:
    """An unknown table or key, a wrong type, a default_model that is not in the catalog, or text
    that is not TOML: ``shard daemon`` exits 1 at once with exactly one line, ``shard daemon: …``,
    naming the mistake — no traceback, and no daemon left serving with a config every runtime
    would fail on."""
    home = tmp_path / "home"
    home.mkdir(mode=0o700)
    config = home / "config.toml"
    config.write_text(text)
    config.chmod(0o600)
    env = {k: v for k, v in os.environ.items() if not k.endswith(("_API_KEY", "_BASE_URL"))}
    out = subprocess.run(
        shard_command("daemon", "--port", "0"),
        capture_output=True,
        cwd=tmp_path,
        env={**env, "SHARD_HOME": str(home)},
        timeout=60,
        check=False,
    )
    lines = out.stderr.decode().splitlines()
    assert out.returncode == 1, out.stderr
    assert len(lines) == 1, out.stderr
    assert lines[0].startswith("shard daemon: ")
    assert expected in lines[0]
    assert not (home / "daemon.json").exists()
