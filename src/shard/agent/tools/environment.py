"""The environment the commands the agent runs see."""

from __future__ import annotations

import os

from shard import _secrets
from shard.agent.catalog import key_variables
from shard.agent.config.settings import Config


def tool_environment(config: Config) -> dict[str, str]:
    """What commands the agent runs see: this process's environment without provider keys (a model
    could otherwise print them), with pagers off and git never prompting."""
    secret = key_variables(config) | {_secrets.FD_VARIABLE}  # captured at start; filtered again here
    env = {k: v for k, v in os.environ.items() if k not in secret}
    env.update({"PAGER": "cat", "GIT_PAGER": "cat", "GIT_TERMINAL_PROMPT": "0"})
    return env
