"""The README's Configuration section works as written: its local-server example answers through
``shard run`` with no key variable set, and every config.toml it shows is one Shard accepts."""

from __future__ import annotations

import asyncio
import os
import re
import sys
from pathlib import Path

from shard.agent.catalog import ModelCatalog
from shard.agent.config.settings import load_config

from ._server import ProviderServer, Stream

README = Path(__file__).resolve().parents[3] / "README.md"
OLLAMA_URL = "http://127.0.0.1:11434/v1"


def _config_examples() -> list[str]:
    section = README.read_text().split("## Configuration\n", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```toml\n(.*?)```", section, flags=re.DOTALL)


async def test_the_local_server_example_works_as_written(tmp_path: Path, server: ProviderServer) -> None:
    """The README's first config.toml (an Ollama server, no api_key_env), with only its base_url
    pointed at the local test server: ``shard run`` answers with no key variable in the environment
    (the provider sends a placeholder key), exit 0, and the request names the example's model."""
    example = _config_examples()[0]
    assert OLLAMA_URL in example
    assert "api_key_env" not in example
    home = tmp_path / "home"
    home.mkdir(mode=0o700)
    config = home / "config.toml"
    config.write_text(example.replace(OLLAMA_URL, server.openai_url))
    config.chmod(0o600)
    project = tmp_path / "project"
    project.mkdir()
    server.replies.append(Stream("openai/text.sse"))
    env = {k: v for k, v in os.environ.items() if not k.endswith("_KEY")}
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "shard",
        "run",
        "hello",
        cwd=project,
        env={**env, "SHARD_HOME": str(home)},
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        stdout, stderr = await asyncio.wait_for(proc.communicate(), 60)
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
    assert proc.returncode == 0, stderr.decode()
    assert stdout.decode() == "Hello, world!\n"
    [request] = server.requests
    assert request.body["model"] == "qwen2.5-coder"
    assert request.headers["Authorization"] == "Bearer not-needed"


def test_every_config_example_in_the_readme_is_accepted(tmp_path: Path) -> None:
    """Each ```toml block of the Configuration section parses with the strict loader (no unknown
    key, every type right) and its default_model is in the catalog it builds."""
    examples = _config_examples()
    assert len(examples) >= 2
    for n, example in enumerate(examples):
        home = tmp_path / str(n)
        home.mkdir(mode=0o700)
        (home / "config.toml").write_text(example)
        (home / "config.toml").chmod(0o600)
        catalog = ModelCatalog(load_config(home), env={})
        assert catalog.default_mistake() is None, example
