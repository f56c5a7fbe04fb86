"""``[[mcp_servers]]`` in config.toml: what is accepted, and one clear line for each mistake."""

from __future__ import annotations

from pathlib import Path

import pytest

from shard.agent.config.settings import ConfigError, load_config
from shard.agent.mcp.config import DEFAULT_CALL_TIMEOUT, McpServerConfig


def _load(home: Path, text: str):
    home.mkdir(mode=0o700, exist_ok=True)
    (home / "config.toml").write_text(text)
    (home / "config.toml").chmod(0o600)
    return load_config(home)


def test_stdio_and_http_servers_are_read(tmp_path):
    config = _load(
        tmp_path / "h",
        """
[[mcp_servers]]
name = "fs"
command = "npx"
args = ["-y", "@modelcontextprotocol/server-filesystem", "."]
env = { LOG_LEVEL = "info" }
pass_env = ["GITHUB_TOKEN"]
call_timeout = 5

[[mcp_servers]]
name = "docs"
url = "https://example.com/mcp"
headers_env = { Authorization = "DOCS_TOKEN" }
trust_read_only = false
""",
    )
    fs, docs = config.mcp_servers
    assert fs == McpServerConfig(
        name="fs",
        command="npx",
        args=("-y", "@modelcontextprotocol/server-filesystem", "."),
        env=(("LOG_LEVEL", "info"),),
        pass_env=("GITHUB_TOKEN",),
        call_timeout=5.0,
    )
    assert (fs.transport, docs.transport) == ("stdio", "http")
    assert docs.url == "https://example.com/mcp"
    assert docs.headers_env == (("Authorization", "DOCS_TOKEN"),)
    assert docs.trust_read_only is False
    assert docs.call_timeout == DEFAULT_CALL_TIMEOUT


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ('name = "a"', "line 1: mcp_servers[0] needs command (stdio) or url (HTTP)"),
        ('command = "x"', "line 1: mcp_servers[0].name is required"),
        ('name = "a__b"\ncommand = "x"', "line 2: mcp_servers[0].name must be 1-32 letters"),
        ('name = "a b"\ncommand = "x"', "mcp_servers[0].name must be"),
        ('name = "a"\ncommand = "x"\nurl = "http://h/mcp"', "[0] cannot have both command and url"),
        ('name = "a"\ncommand = "x"\nheaders_env = { A = "B" }', "headers_env does not apply to a stdio"),
        ('name = "a"\nurl = "http://h"\nargs = ["x"]', "[0].args does not apply to an HTTP server"),
        ('name = "a"\nurl = "ftp://h"', "mcp_servers[0].url must be an http:// or https:// URL"),
        ('name = "a"\ncommand = "x"\nargs = "y"', "mcp_servers[0].args must be a list, got a string"),
        ('name = "a"\ncommand = "x"\nargs = [1]', "mcp_servers[0].args must be a list of strings"),
        ('name = "a"\ncommand = "x"\nenv = { A = 1 }', "mcp_servers[0].env.A must be a string"),
        ('name = "a"\nurl = "http://h"\nheaders_env = { A = "a b" }', "must name an environment variable"),
        ('name = "a"\ncommand = "x"\ncall_timeout = 0', "call_timeout must be a positive number of seconds"),
        ('name = "a"\ncommand = "x"\ncomand = "y"', "key mcp_servers[0].comand (did you mean command?)"),
        ('name = "a"\ncommand = ""', "mcp_servers[0].command must not be empty"),
    ],
)
def test_each_mistake_is_one_line_naming_the_key(tmp_path, table, message):
    with pytest.raises(ConfigError) as caught:
        _load(tmp_path / "h", "[[mcp_servers]]\n" + table + "\n")
    assert message in caught.value.message
    assert "\n" not in caught.value.message


def test_a_name_given_twice_is_refused(tmp_path):
    text = '[[mcp_servers]]\nname = "a"\ncommand = "x"\n[[mcp_servers]]\nname = "a"\nurl = "http://h"\n'
    with pytest.raises(ConfigError, match=r"line 5: mcp_servers\[1\].name 'a' is defined twice"):
        _load(tmp_path / "h", text)


def test_mcp_servers_must_be_tables(tmp_path):
    with pytest.raises(ConfigError, match="mcp_servers must be a list of tables"):
        _load(tmp_path / "h", 'mcp_servers = "fs"\n')


def test_the_server_environment_is_minimal_plus_what_is_configured():
    """The agent's environment holds provider keys: a stdio server gets the locale, what pass_env
    names, and env — nothing else (the SDK adds only HOME, LOGNAME, PATH, SHELL, TERM, USER)."""
    server = McpServerConfig(name="s", command="x", env=(("MODE", "fast"),), pass_env=("GITHUB_TOKEN",))
    environ = {"LANG": "C.UTF-8", "GITHUB_TOKEN": "gh", "OPENAI_API_KEY": "sk", "SECRET": "s", "MODE": "slow"}
    assert server.environment(environ) == {"LANG": "C.UTF-8", "GITHUB_TOKEN": "gh", "MODE": "fast"}


def test_http_headers_are_read_from_their_variables():
    server = McpServerConfig(name="s", url="http://h/mcp", headers_env=(("Authorization", "DOCS_TOKEN"),))
    assert server.headers({"DOCS_TOKEN": "Bearer t"}) == {"Authorization": "Bearer t"}
    with pytest.raises(LookupError, match=r"Authorization comes from \$DOCS_TOKEN, which is not set"):
        server.headers({})
